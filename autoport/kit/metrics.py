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

import asyncio
import atexit
import os
from bisect import bisect_left
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
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
REQUEST_LATENCY = Histogram(
    "autoport_http_request_duration_seconds",
    "HTTP request latency by method and route template.",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
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
    """Label children resolved once per key: `labels()` takes a lock and builds a key on
    every call, which the request pipeline would pay on every request. The key is the
    label values themselves, or what `labels_of` turns into them (then the turning is
    paid once too); past `limit` keys the cache starts over."""

    def __init__(
        self,
        metric: Any,
        labels_of: Callable[..., tuple[str, ...]] | None = None,
        limit: int | None = None,
    ) -> None:
        self.metric = metric
        self.labels_of = labels_of
        self.limit = limit
        self.children: dict[tuple[Any, ...], Any] = {}

    def __call__(self, *key: Any) -> Any:
        child = self.children.get(key)
        if child is None:
            if self.limit is not None and len(self.children) >= self.limit:
                self.children.clear()
            labels = key if self.labels_of is None else self.labels_of(*key)
            child = self.children[key] = self.metric.labels(*labels)
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


def _application_label_values(
    environment: Environment, application_id: str, status: int
) -> tuple[str, str, str]:
    status_class = _STATUS_CLASSES.get(status // 100, "5xx")
    return str(environment), application_labels.label(application_id), status_class


# Keyed by (environment, application id, status) as the pipeline has them, so a request
# costs one lookup; bounded by registrations, and emptied past the limit.
_application_counter = _Children(
    APPLICATION_REQUESTS, labels_of=_application_label_values, limit=10_000
)


def count_application_request(environment: Environment, application_id: str, status: int) -> None:
    _application_counter(environment, application_id, status).inc()


_STATUS_TEXT = {code: str(code) for code in range(100, 600)}
# The histogram's upper bounds, +Inf last (prometheus_client's `_upper_bounds`).
_UPPER_BOUNDS = (*LATENCY_BUCKETS, float("inf"))


class RequestTally:
    """What the request pipeline counts for every request (requests by method, route
    template and status, their latency, requests per application), held in plain dicts
    and added to the Prometheus metrics above in batches. prometheus_client takes a lock
    per increment and finds a histogram's bucket in a Python loop: the three updates
    cost ~4 µs of every request, a tenth of a pull's app time; here a request costs a
    few dict updates (`bisect` finds the bucket).

    One process: the counts reach the metrics at most FLUSH_SECONDS after a request,
    before every exposition (`exposition`: exact), when the app stops (kit.middleware)
    and at exit; a process killed loses them, as it loses its in-memory metrics. In
    multiprocess mode the requests of one turn of the event loop are added at its end
    (the process's file outlives it).
    Only the event loop's thread counts."""

    FLUSH_SECONDS = 1.0

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = {}
        # (method, route) -> [the count of each bucket (not cumulative), ..., the sum]
        self.latency: dict[tuple[str, str], list[float]] = {}
        self.applications: dict[tuple[Environment, str, int], int] = {}
        self.scheduled = False

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        requests = self.requests
        requests[key] = requests.get(key, 0) + 1
        counts = self.latency.get((method, route))
        if counts is None:
            counts = self.latency[(method, route)] = [0.0] * (len(_UPPER_BOUNDS) + 1)
        # The first bound at or above: Histogram.observe's `amount <= bound`.
        counts[bisect_left(_UPPER_BOUNDS, seconds)] += 1
        counts[-1] += seconds
        if not self.scheduled:
            self._schedule()

    def application(self, environment: Environment, application_id: str, status: int) -> None:
        key = (environment, application_id, status)
        applications = self.applications
        applications[key] = applications.get(key, 0) + 1
        if not self.scheduled:
            self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script, a test calling by hand)
            self.flush()
            return
        if multiprocess_dir() is not None:
            # Several processes: the counts go to this process's file at the end of this
            # turn of the event loop (the requests it answered together), so that a
            # process killed (SIGKILL) still counts in the sum what it had answered.
            loop.call_soon(self.flush)
        else:
            loop.call_later(self.FLUSH_SECONDS, self.flush)
        self.scheduled = True

    def flush(self) -> None:
        """Add what was counted since the last flush to the Prometheus metrics."""
        self.scheduled = False
        requests, self.requests = self.requests, {}
        latency, self.latency = self.latency, {}
        applications, self.applications = self.applications, {}
        for (method, route, status), count in requests.items():
            request_counter(method, route, _STATUS_TEXT.get(status) or str(status)).inc(count)
        for (method, route), counts in latency.items():
            child = request_timer(method, route)
            # Histogram.observe's own state (prometheus-client is pinned): one increment
            # per bucket with observations instead of one observe per request.
            for bucket, observed in zip(child._buckets, counts, strict=False):
                if observed:
                    bucket.inc(observed)
            child._sum.inc(counts[-1])
        for (environment, application_id, status), count in applications.items():
            _application_counter(environment, application_id, status).inc(count)


TALLY = RequestTally()
atexit.register(TALLY.flush)


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
    TALLY.flush()  # this process's counts so far (other processes flush on their own)
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
