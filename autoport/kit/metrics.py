"""Prometheus metrics shared by the features; `/metrics` exposes the default registry."""

from __future__ import annotations

from typing import Any

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


class _Children:
    """Label children resolved once per label tuple: `labels()` takes a lock and builds
    a key on every call, which the request pipeline would pay twice per request."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.children: dict[tuple[str, ...], Any] = {}

    def __call__(self, *labels: str) -> Any:
        child = self.children.get(labels)
        if child is None:
            child = self.children[labels] = self.metric.labels(*labels)
        return child


# (method, route template, status) and (method, route template): templates, not paths,
# so the number of children stays bounded.
request_counter = _Children(REQUESTS)
request_timer = _Children(REQUEST_LATENCY)
