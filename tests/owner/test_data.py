"""The owner portal's data: reads counted per grant and day (flushed off the request path
with an adding upsert, on both backends), and the vehicle's data downloaded as JSON and
CSV, streamed with bounded memory (100,000 history points over real HTTP)."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import tracemalloc
from collections.abc import AsyncIterator

import httpx
import orjson
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.history import service as history
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import FrozenClock, to_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.usage import UsageCounts, usage_of
from autoport.owner import reads
from autoport.owner.reads import DAY_US
from tests.consent.conftest import VIN, consent_settings, insert_application, store_vehicle_data
from tests.factories import bearer
from tests.helpers.servers import uvicorn_in_loop

from .conftest import OWNER, grant_through_consent, sign_in

POINTS = 100_000


async def test_read_counts_add_up_across_processes_and_days(db: Database) -> None:
    """Two processes' counters flush into the same rows: counts add, the later last read
    wins, days stay apart."""
    day = 20_000 * DAY_US
    first, second = UsageCounts(), UsageCounts()
    first.reads[("sandbox", "grant-a", 20_000)] = [3, day + 50]
    second.reads[("sandbox", "grant-a", 20_000)] = [4, day + 20]
    second.reads[("sandbox", "grant-a", 20_001)] = [1, day + DAY_US + 5]
    assert await reads.flush_reads(db, first) == 1
    assert await reads.flush_reads(db, second) == 2
    assert await reads.flush_reads(db, second) == 0  # taken: nothing twice
    rows = await db.fetch_all(
        "SELECT day, reads, last_read_at FROM grant_reads WHERE authorization_id = 'grant-a' "
        "ORDER BY day"
    )
    assert [(r["day"], r["reads"], r["last_read_at"]) for r in rows] == [
        (20_000, 7, day + 50),
        (20_001, 1, day + DAY_US + 5),
    ]


async def test_a_failed_flush_keeps_its_counts(db: Database) -> None:
    counter = UsageCounts()
    counter.reads[("sandbox", "grant-b", 1)] = [2, 10]
    await db.execute("ALTER TABLE grant_reads RENAME TO grant_reads_away")
    try:
        with contextlib.suppress(Exception):
            await reads.flush_reads(db, counter)
    finally:
        await db.execute("ALTER TABLE grant_reads_away RENAME TO grant_reads")
    assert counter.reads == {("sandbox", "grant-b", 1): [2, 10]}
    assert await reads.flush_reads(db, counter) == 1  # the next flush writes them


async def test_the_pull_counts_in_memory_only(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock, consent_app: FastAPI
) -> None:
    """The request path writes nothing: the count waits in memory for the flusher."""
    await store_vehicle_data(db, now_us=clock.now_us())
    granted = await grant_through_consent(browser_client, await insert_application(db))
    for _ in range(5):
        read = await browser_client.get(
            f"/sandbox/v1/vehicle-data/autoapi-13/{VIN}", headers=bearer(granted.access_token)
        )
        assert read.status_code == 200
    assert await db.fetch_value("SELECT COUNT(*) FROM grant_reads") == 0
    state = consent_app.state.autoport
    key = ("sandbox", granted.authorization_id, clock.now_us() // DAY_US)
    assert usage_of(state).reads[key] == [5, clock.now_us()]
    await reads.flush(state)
    assert await db.fetch_value("SELECT reads FROM grant_reads") == 5


async def test_downloads_hold_the_latest_values_the_history_and_the_access_record(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    granted = await grant_through_consent(browser_client, await insert_application(db))
    for step in range(3):
        clock.advance(60)
        await store_vehicle_data(db, now_us=clock.now_us() + step)
    await sign_in(browser_client)
    answer = await browser_client.get(f"{OWNER}/vehicles/{VIN}/data.json")
    assert answer.status_code == 200
    assert "attachment" in answer.headers["content-disposition"]
    document = orjson.loads(answer.content)
    assert document["vin"] == VIN
    assert document["latest"]["charging"]["battery_level"]["data"] == 0.81
    assert len(document["history"]) == 3
    assert {row["property"] for row in document["history"]} == {"battery_level"}

    table = await browser_client.get(f"{OWNER}/vehicles/{VIN}/data.csv")
    rows = list(csv.reader(io.StringIO(table.text)))
    assert rows[0] == [
        "kind", "capability", "property", "timestamp", "received_at",
        "value", "unit", "failure_reason", "failure_description",
    ]  # fmt: skip
    kinds = [row[0] for row in rows[1:]]
    assert kinds.count("history") == 3 and "latest" in kinds

    record = orjson.loads((await browser_client.get(f"{OWNER}/vehicles/{VIN}/access.json")).content)
    [grant] = record["grants"]
    assert grant["authorization_id"] == granted.authorization_id
    assert grant["application"] == "Fleet Tracker" and grant["status"] == "approved"


async def test_the_csv_has_value_unit_and_failure_columns_a_spreadsheet_reads(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    """Issue #38 item 10: no JSON in the value column. A number is its own cell, a
    quantity's unit sits beside it, a failure's reason and description replace a value."""
    await grant_through_consent(browser_client, await insert_application(db))
    moment = to_iso(clock.now_us())
    report = await ingest_vehicle_data(
        db,
        environment=Environment.sandbox,
        vin=VIN,
        brand="sandbox",
        data={
            "charging": {
                "battery_level": {"data": 0.42, "timestamp": moment},
                "estimated_range": {
                    "data": {"value": 312.5, "unit": "kilometers"},
                    "timestamp": moment,
                },
            },
            "diagnostics": {
                "odometer": {
                    "failure": {"reason": "privacy_mode_active", "description": "privacy on"},
                    "timestamp": moment,
                }
            },
        },
        now_us=clock.now_us(),
        source="test",
    )
    assert not report.rejected, report.rejected
    await sign_in(browser_client)
    table = await browser_client.get(f"{OWNER}/vehicles/{VIN}/data.csv")
    rows = [dict(zip(*pair, strict=True)) for pair in _with_header(table.text)]
    by_kind = {(row["kind"], row["property"]): row for row in rows}
    for kind in ("latest", "history"):
        level = by_kind[(kind, "battery_level")]
        assert (level["value"], level["unit"], level["failure_reason"]) == ("0.42", "", "")
        distance = by_kind[(kind, "estimated_range")]
        assert (distance["value"], distance["unit"]) == ("312.5", "kilometers")
        odometer = by_kind[(kind, "odometer")]
        assert odometer["value"] == "" and odometer["failure_reason"] == "privacy_mode_active"
        assert odometer["failure_description"] == "privacy on"
    assert not any(row["value"].startswith("{") for row in rows)


def _with_header(text: str) -> list[tuple[list[str], list[str]]]:
    header, *body = list(csv.reader(io.StringIO(text)))
    return [(header, row) for row in body]


@contextlib.asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[str]:
    async with uvicorn_in_loop(app, lifespan="off") as served:
        yield served.base_url


async def _history(db: Database, vin: str, count: int, start_us: int) -> None:
    """`count` points of one series, half sealed into chunks, half still hot."""
    batch = 10_000
    for offset in range(0, count, batch):
        points = []
        for i in range(offset, min(count, offset + batch)):
            value = orjson.dumps({"data": i / count, "timestamp": to_iso(start_us + i)})
            digest = hashlib.blake2b(value, digest_size=8).hexdigest()
            points.append(("charging", "battery_level", start_us + i, digest, value.decode()))
        async with db.transaction() as conn:
            await history.append(
                conn, environment="sandbox", vin=vin, received_at=start_us + offset, points=points
            )
    sid = history.series_id("sandbox", vin, "charging", "battery_level")
    await history.seal_series(db, sid, before=start_us + count // 2, target=1000)


async def test_export_of_100k_points_downloads_completely_with_bounded_memory(
    settings: Settings, clock: FrozenClock
) -> None:
    """Over real HTTP (uvicorn): the whole history arrives, while the process's Python
    allocations (server and client: tracemalloc) stay far below the download's size."""
    app = create_app(consent_settings(settings), clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        db: Database = app.state.autoport.database
        await store_vehicle_data(db, now_us=clock.now_us())
        await _history(db, VIN, POINTS, clock.now_us() - POINTS)
        async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=120) as client:
            assert (await sign_in(client)).status_code == 303
            for name, count_rows in (("data.json", _json_rows), ("data.csv", _csv_rows)):
                tracemalloc.start()
                try:
                    size, tail = 0, b""
                    async with client.stream("GET", f"{OWNER}/vehicles/{VIN}/{name}") as answer:
                        assert answer.status_code == 200
                        async for chunk in answer.aiter_bytes():
                            size += len(chunk)
                            tail = (tail + chunk)[-64:]
                    _, peak = tracemalloc.get_traced_memory()
                finally:
                    tracemalloc.stop()
                print(
                    f"{name}: {size / 1e6:.1f} MB streamed, peak Python memory {peak / 1e6:.2f} MB"
                )
                assert peak < 8_000_000 and peak < size / 3, (name, size, peak)
                assert count_rows(tail, size) is True
            # Complete: the JSON parses whole and holds every point.
            whole = await client.get(f"{OWNER}/vehicles/{VIN}/data.json")
            assert len(orjson.loads(whole.content)["history"]) == POINTS + 1
            lines = (await client.get(f"{OWNER}/vehicles/{VIN}/data.csv")).text.count("\r\n")
            assert lines == 1 + 1 + POINTS + 1  # header, latest, the history (ingested + ours)


def _json_rows(tail: bytes, size: int) -> bool:
    return tail.endswith(b"]}\n") and size > POINTS * 50


def _csv_rows(tail: bytes, size: int) -> bool:
    return tail.endswith(b"\r\n") and size > POINTS * 50
