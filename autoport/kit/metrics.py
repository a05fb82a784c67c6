"""Prometheus metrics shared by the features, and the `/metrics` exposition.

One process (the default): `/metrics` exposes the process's default registry.

Several processes on one host (API replicas, `autoport worker`s, `serve --workers N`):
with PROMETHEUS_MULTIPROC_DIR set in every process's environment (the same directory,
empty when the first process starts), each process writes its samples to files there
and any API process's `/metrics` sums them (prometheus_client's multiprocess mode), so
one scrape reports the whole host. Counters of a process that died keep counting in
the sum (its file stays): totals never go back when a process restarts. See
docs/operations.md for hosts of their own (scrape each host).

Queue depths (outbox, webhook backlog, stream lag) are read from the database at scrape
time (autoport.health.queues): the database holds the truth for every process at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from autoport.kit.environments import Environment

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

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
APPLICATION_REQUESTS = Counter(
    "autoport_application_requests_total",
    "Requests authenticated with an application's bearer token, by environment, "
    "application id (at most metrics_application_labels of them per process, the rest "
    'as "other") and status class.',
    ["environment", "application", "status_class"],
)
PROCESS_STARTS = Counter(
    "autoport_process_starts_total",
    "Processes started, by role (api: serves HTTP; worker: `autoport worker`). Summed "
    "over the host in multiprocess mode: a restart shows as one more start.",
    ["role"],
)

# The label value of the applications past the limit.
OTHER_APPLICATIONS = "other"


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


class _ApplicationLabels:
    """Which application ids get a label value of their own: the first `limit` seen by
    this process. Application ids (never names: those change, and are chosen by
    outsiders) are bounded by registrations, not by traffic; the cap bounds them again,
    so that a deployment with many thousands of applications cannot blow up the series
    count (each id costs about 3 x 2 x 5 series)."""

    def __init__(self, limit: int = 200) -> None:
        self.limit = limit
        self.known: set[str] = set()

    def label(self, application_id: str) -> str:
        if application_id in self.known:
            return application_id
        if len(self.known) >= self.limit:
            return OTHER_APPLICATIONS
        self.known.add(application_id)
        return application_id


application_labels = _ApplicationLabels()

# (environment, application id, status): called once per answered request that an
# application's token got through (autoport.kit.usage.application_requests).
ApplicationCounter = Callable[["Environment", str, int], None]

_STATUS_CLASSES = {1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}


# (environment, application id, status) -> the counter's child it counts under, so that a
# request costs one lookup; bounded like the labels (by registrations, then emptied).
_application_children: dict[tuple[Environment, str, int], Any] = {}


def count_application_request(environment: Environment, application_id: str, status: int) -> None:
    key = (environment, application_id, status)
    child = _application_children.get(key)
    if child is None:
        if len(_application_children) >= 10_000:
            _application_children.clear()
        status_class = _STATUS_CLASSES.get(status // 100, "5xx")
        label = application_labels.label(application_id)
        child = _application_children[key] = APPLICATION_REQUESTS.labels(
            str(environment), label, status_class
        )
    child.inc()


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


class _Families(Collector):
    def __init__(self, families: Iterable[Any]) -> None:
        self.families = list(families)

    def collect(self) -> Iterable[Any]:
        return self.families


def exposition(extra: Iterable[Any] = ()) -> tuple[bytes, str]:
    """The text exposition of this process, or of every process sharing
    PROMETHEUS_MULTIPROC_DIR, followed by `extra` metric families (the queue depths)."""
    directory = multiprocess_dir()
    if directory is None:
        body = generate_latest(REGISTRY)
    else:
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
        body = generate_latest(registry)
    snapshot = CollectorRegistry(auto_describe=False)
    snapshot.register(_Families(extra))
    return body + generate_latest(snapshot), CONTENT_TYPE_LATEST
