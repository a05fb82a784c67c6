"""Prometheus metrics shared by the features; `/metrics` exposes the default registry."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

REQUESTS = Counter(
    "autoport_http_requests_total",
    "HTTP requests by method, route template and status.",
    ["method", "route", "status"],
)
REQUEST_LATENCY = Histogram(
    "autoport_http_request_duration_seconds",
    "HTTP request latency by method and route template.",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
