"""Queue depths for `/metrics`, read from the database at scrape time: every process
works from the same tables, so any replica answers for the whole deployment.

- outbox: events waiting per consumer (webhooks, streaming) and the age of the oldest;
  a growing age means the workers (`autoport worker --only webhooks,streams`) are too
  few, stopped, or failing.
- webhook backlog: deliveries not yet finished (pending: due or waiting for a retry) and
  how overdue the most overdue one is.
- stream lag: messages in applications' stream logs the MQTT publisher has not had
  acknowledged yet (0 without MQTT), and the streaming consumer's outbox age above
  (what SSE clients wait for).

Each query reads an index (outbox by consumer, deliveries by status) or the small
per-application cursor table: cheap at a 15 s scrape interval.
"""

from __future__ import annotations

from typing import Any

from prometheus_client.core import GaugeMetricFamily

from autoport.kit.clock import MICROS
from autoport.kit.db import Database

CONSUMERS = ("webhooks", "streaming")


async def queue_families(db: Database, *, now_us: int) -> list[Any]:
    reader = db.reader
    events = GaugeMetricFamily(
        "autoport_outbox_events",
        "Outbox events not yet consumed, by consumer.",
        labels=["consumer"],
    )
    oldest = GaugeMetricFamily(
        "autoport_outbox_oldest_event_age_seconds",
        "Age of the oldest outbox event not yet consumed, by consumer (0 when none).",
        labels=["consumer"],
    )
    rows = await reader.fetch_all(
        "SELECT consumer, COUNT(*) AS n, MIN(created_at) AS first FROM outbox GROUP BY consumer"
    )
    found = {str(row[0]): (int(row[1]), row[2]) for row in rows}
    for consumer in sorted({*CONSUMERS, *found}):
        count, first = found.get(consumer, (0, None))
        events.add_metric([consumer], count)
        oldest.add_metric([consumer], max(0, now_us - int(first)) / MICROS if first else 0.0)

    backlog = GaugeMetricFamily(
        "autoport_webhook_backlog",
        "Webhook deliveries not finished yet (pending: due now or waiting for a retry).",
    )
    overdue = GaugeMetricFamily(
        "autoport_webhook_backlog_overdue_seconds",
        "How long the most overdue pending webhook delivery has been due (0 when none).",
    )
    row = await reader.fetch_one(
        "SELECT COUNT(*) AS n, MIN(next_attempt_at) AS due FROM webhook_deliveries "
        "WHERE status = 'pending'"
    )
    pending, due = (int(row[0]), row[1]) if row is not None else (0, None)
    backlog.add_metric([], pending)
    overdue.add_metric([], max(0, now_us - int(due)) / MICROS if due else 0.0)

    lag = GaugeMetricFamily(
        "autoport_stream_mqtt_lag_messages",
        "Stream messages written but not yet acknowledged by the MQTT broker, over all "
        "applications (0 without MQTT).",
    )
    value = await reader.fetch_value(
        "SELECT COALESCE(SUM(last_seq - mqtt_seq), 0) FROM stream_cursors"
    )
    lag.add_metric([], int(value or 0))
    return [events, oldest, backlog, overdue, lag]
