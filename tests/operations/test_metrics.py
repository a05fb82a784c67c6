"""`/metrics` for the whole deployment: several processes summed through
PROMETHEUS_MULTIPROC_DIR, queue depths from the database (both backends), per-application
request counts with a bounded number of label values."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit import metrics, outbox
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.factories import bearer, client_credentials_token, create_app_credentials
from tests.helpers.metrics import samples

REPO = Path(__file__).resolve().parents[2]


WRITER = """
import sys
from autoport.kit import metrics
metrics.PROCESS_STARTS.labels(sys.argv[1]).inc()
for _ in range(int(sys.argv[2])):
    metrics.request_counter("GET", "/v1/thing", "200").inc()
metrics.count_application_request("production", "APP" + sys.argv[1], 200)
"""


def test_several_processes_are_summed_in_one_exposition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), metrics.MULTIPROC_ENV: str(directory)}
    # Three processes (as API replicas and a worker would be), each gone after writing:
    # their counts stay in the sum (a restarted process does not reset the totals).
    for role, requests in (("api", 3), ("api", 4), ("worker", 0)):
        subprocess.run([sys.executable, "-c", WRITER, role, str(requests)], env=env, check=True)
    monkeypatch.setenv(metrics.MULTIPROC_ENV, str(directory))
    body, content_type = metrics.exposition()
    assert content_type.startswith("text/plain")
    found = samples(body.decode())
    assert found[("autoport_process_starts_total", (("role", "api"),))] == 2
    assert found[("autoport_process_starts_total", (("role", "worker"),))] == 1
    key = (("method", "GET"), ("route", "/v1/thing"), ("status", "200"))
    assert found[("autoport_http_requests_total", key)] == 7
    for app in ("APPapi", "APPworker"):
        labels = (("application", app), ("environment", "production"), ("status_class", "2xx"))
        assert found[("autoport_application_requests_total", labels)] >= 1


def test_without_the_directory_the_process_answers_for_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(metrics.MULTIPROC_ENV, raising=False)
    metrics.request_counter("GET", "/only/here", "200").inc()
    body, _ = metrics.exposition()
    assert b'route="/only/here"' in body


def test_application_labels_are_capped() -> None:
    labels = metrics._ApplicationLabels(limit=2)
    assert [labels.label(a) for a in ("A", "B", "C", "A", "D")] == ["A", "B", "other", "A", "other"]
    unbounded = metrics._ApplicationLabels(limit=0)
    assert unbounded.label("A") == metrics.OTHER_APPLICATIONS


async def test_queue_depths_come_from_the_database(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    db = app.state.autoport.database
    now = clock.now_us()
    async with db.transaction() as conn:
        for n in range(3):
            await outbox.emit(
                conn,
                environment=Environment.production,
                event_type="fleet_clearance_changed",
                payload={"action": "approved", "detail": None},
                now_us=now - 30_000_000,  # waiting for 30 s
                vin=f"WBA0000000000000{n}",
                application_id="APP",
            )
        await conn.execute(
            "INSERT INTO webhook_deliveries (delivery_id, environment, application_id, "
            "event_type, vin, body, status, attempts, created_at, enqueued_at, "
            "next_attempt_at, expires_at) VALUES ('d1', 'production', 'APP', 'ping', '*', "
            "'{}', 'pending', 1, :t, :t, :due, :end)",
            {"t": now, "due": now - 5_000_000, "end": now + 86_400_000_000},
        )
        await conn.execute(
            "INSERT INTO stream_cursors (environment, application_id, last_seq, mqtt_seq, "
            "updated_at) VALUES ('production', 'APP', 12, 5, :t)",
            {"t": now},
        )
    answer = await client.get("/metrics")
    assert answer.status_code == 200
    found = samples(answer.text)
    assert found[("autoport_outbox_events", (("consumer", "webhooks"),))] == 3
    assert found[("autoport_outbox_oldest_event_age_seconds", (("consumer", "webhooks"),))] == 30
    assert found[("autoport_webhook_backlog", ())] == 1
    assert found[("autoport_webhook_backlog_overdue_seconds", ())] == 5
    assert found[("autoport_stream_mqtt_lag_messages", ())] == 7


async def test_requests_count_under_the_callers_application_only(
    app: FastAPI, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The label cap counts the applications this process has seen; in a whole suite run
    # earlier tests used it up, and these two would be counted as `other`.
    monkeypatch.setattr(metrics.application_labels, "known", set())
    db = app.state.autoport.database
    mine = await create_app_credentials(db, name="Mine")
    theirs = await create_app_credentials(db, name="Theirs")
    token = await client_credentials_token(client, mine)
    other_token = await client_credentials_token(client, theirs)

    def count(app_id: str, status_class: str) -> float:
        labels = (("application", app_id), ("environment", "production"),
                  ("status_class", status_class))  # fmt: skip
        return samples(metrics.exposition()[0].decode()).get(
            ("autoport_application_requests_total", labels), 0.0
        )

    before_mine, before_theirs = count(mine.app_id, "2xx"), count(theirs.app_id, "2xx")
    for _ in range(3):
        assert (await client.get("/v1/fleets/vehicles", headers=bearer(token))).status_code == 200
    assert (await client.get("/v1/fleets/vehicles", headers=bearer(other_token))).status_code == 200
    # Unauthenticated and forged tokens name no application: counted under none.
    assert (await client.get("/v1/fleets/vehicles")).status_code == 401
    assert (await client.get("/v1/fleets/vehicles", headers=bearer("forged"))).status_code == 401
    assert count(mine.app_id, "2xx") - before_mine == 3
    assert count(theirs.app_id, "2xx") - before_theirs == 1
    assert count(mine.app_id, "4xx") == 0


def test_the_grafana_dashboard_charts_metrics_that_exist() -> None:
    """deploy/grafana/autoport-dashboard.json: valid JSON whose every autoport_* series is
    one the service exposes (a renamed metric must not leave an empty panel)."""
    import json
    import re

    from prometheus_client import REGISTRY

    import autoport.streaming.metrics  # noqa: F401 - registers the streaming metrics

    dashboard = json.loads((REPO / "deploy" / "grafana" / "autoport-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs
    # Series names as Prometheus sees them (counters end in _total, histograms have
    # _bucket), and the queue gauges built at scrape time.
    known = {
        f"{family.name}{suffix}"
        for family in REGISTRY.collect()
        for suffix in ("", "_total", "_bucket", "_sum", "_count")
    }
    known |= {
        "autoport_outbox_events",
        "autoport_outbox_oldest_event_age_seconds",
        "autoport_webhook_backlog",
        "autoport_webhook_backlog_overdue_seconds",
        "autoport_stream_mqtt_lag_messages",
    }
    used = {name for expr in exprs for name in re.findall(r"autoport_[a-z_]+", expr)}
    assert used - known == set()


def test_serve_with_worker_processes_reports_all_of_them(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """`serve --workers 2` (PostgreSQL): one /metrics for both uvicorn worker processes,
    whichever answers the scrape, without the operator setting PROMETHEUS_MULTIPROC_DIR."""
    import signal

    from tests.helpers.servers import serve_until_up

    url, schema = request.getfixturevalue("postgres_schema")
    assert metrics.MULTIPROC_ENV not in os.environ
    process, base = serve_until_up(
        tmp_path,
        "--workers",
        "2",
        AUTOPORT_DATABASE_URL=url,
        AUTOPORT_DATABASE_SCHEMA=schema,
        AUTOPORT_SANDBOX_DEMO="false",
        AUTOPORT_BACKGROUND_WORKERS="false",
        path="/readyz",
    )
    try:
        found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for _ in range(50):  # until both processes have started (each counts itself)
            found = samples(httpx.get(f"{base}/metrics").text)
            if found.get(("autoport_process_starts_total", (("role", "api"),))) == 2:
                break
            time.sleep(0.2)
        assert found[("autoport_process_starts_total", (("role", "api"),))] == 2
        for _ in range(20):
            httpx.get(f"{base}/healthz")
        healthz = (("method", "GET"), ("route", "/healthz"), ("status", "200"))
        assert (
            samples(httpx.get(f"{base}/metrics").text)[("autoport_http_requests_total", healthz)]
            >= 20
        )
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


async def test_held_request_counts_reach_the_metrics_as_observe_would_count_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The pipeline's counts are held (kit.metrics.RequestTally) and added in batches; an
    # exposition adds them first, bucket for bucket as Histogram.observe would, bounds
    # included (a latency equal to a bound counts in that bound's bucket).
    from prometheus_client import Histogram

    monkeypatch.delenv(metrics.MULTIPROC_ENV, raising=False)
    latencies = [0.0, 0.001, 0.0010001, 0.003, 0.01, 0.7, 10.0, 11.0, 0.0025]
    twin = Histogram("twin", "", buckets=metrics.LATENCY_BUCKETS, registry=None)
    for seconds in latencies:
        metrics.TALLY.request("GET", "/tally/test", 201, seconds)
        twin.observe(seconds)
    assert metrics.TALLY.scheduled  # held, not added yet
    found = samples(metrics.exposition()[0].decode())
    assert found[
        ("autoport_http_requests_total",
         (("method", "GET"), ("route", "/tally/test"), ("status", "201")))
    ] == len(latencies)  # fmt: skip
    expected = {
        sample.labels["le"]: sample.value
        for sample in next(iter(twin.collect())).samples
        if sample.name == "twin_bucket"
    }
    for le, value in expected.items():
        key = (
            "autoport_http_request_duration_seconds_bucket",
            (("le", le), ("method", "GET"), ("route", "/tally/test")),
        )
        assert found[key] == value, le
    total = ("autoport_http_request_duration_seconds_sum",
             (("method", "GET"), ("route", "/tally/test")))  # fmt: skip
    assert found[total] == pytest.approx(sum(latencies))


async def test_in_multiprocess_mode_held_counts_are_added_at_the_end_of_the_loops_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Several processes sum their files: a worker killed right after answering must
    # still count what it answered, so its counts are held for one turn only.
    import asyncio

    from prometheus_client import REGISTRY

    monkeypatch.setenv(metrics.MULTIPROC_ENV, str(tmp_path))
    labels = {"method": "GET", "route": "/tally/turn", "status": "200"}
    before = REGISTRY.get_sample_value("autoport_http_requests_total", labels) or 0.0
    metrics.TALLY.request("GET", "/tally/turn", 200, 0.001)
    metrics.TALLY.request("GET", "/tally/turn", 200, 0.002)

    def held() -> bool:
        return metrics.TALLY.scheduled

    assert held()
    await asyncio.sleep(0)  # the end of this turn
    assert not held()
    assert REGISTRY.get_sample_value("autoport_http_requests_total", labels) == before + 2
