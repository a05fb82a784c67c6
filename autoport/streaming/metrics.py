"""Streaming metrics, on the default registry that `/metrics` exposes."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

MESSAGES_BUILT = Counter(
    "autoport_stream_messages_built_total",
    "Schema-v2 messages written to applications' stream logs.",
)
MESSAGES_PUBLISHED = Counter(
    "autoport_stream_messages_published_total",
    "Stream messages delivered, by transport (mqtt: acknowledged by the broker; "
    "sse: written to a client's connection).",
    ["transport"],
)
PUBLISH_LAG = Histogram(
    "autoport_stream_publish_lag_seconds",
    "Time from ingestion (the outbox event) to delivery, by transport.",
    ["transport"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
)
