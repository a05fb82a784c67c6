"""The database layer behaves the same on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from sqlalchemy import select

from autoport.config import Settings
from autoport.db.tables.outbox import outbox
from autoport.kit import outbox as events
from autoport.kit.db import (
    VERSION_REUSE_SECONDS,
    Database,
    _to_dollar_params,
    create_database,
    sqlite_path,
)
from autoport.kit.environments import Environment


def test_named_parameters_become_dollar_parameters() -> None:
    sql, names = _to_dollar_params("SELECT :a::text, :b, :a FROM t WHERE x = ':literal' AND y = :b")
    assert names == ("a", "b", "literal")
    assert sql.startswith("SELECT $1::text, $2, $1 FROM t")


def test_sqlite_paths() -> None:
    assert sqlite_path("sqlite:///data/a.db") == "data/a.db"
    assert sqlite_path("sqlite:////abs/a.db") == "/abs/a.db"
    with pytest.raises(ValueError, match="sqlite:///"):
        sqlite_path("sqlite://host/a.db")


async def _emit(db: Database, event_type: str = "fleet_clearance_changed", vin: str = "V") -> None:
    async with db.transaction() as conn:
        await events.emit(
            conn,
            environment=Environment.sandbox,
            event_type=event_type,
            payload={"action": "approved"},
            now_us=1_000,
            vin=vin,
        )


async def test_transaction_commits_and_rolls_back(database: Database) -> None:
    await _emit(database)
    with pytest.raises(RuntimeError):
        async with database.transaction() as conn:
            await events.emit(
                conn, environment=Environment.sandbox, event_type="ping", payload={}, now_us=1
            )
            raise RuntimeError("abort")
    rows = await database.fetch_all("SELECT event_type, consumer FROM outbox ORDER BY id")
    # fleet_clearance_changed fans out to two consumers; the rolled back ping left nothing.
    assert [(r["event_type"], r["consumer"]) for r in rows] == [
        ("fleet_clearance_changed", "webhooks"),
        ("fleet_clearance_changed", "streaming"),
    ]


async def test_core_statements_compile_for_both_backends(database: Database) -> None:
    await _emit(database, vin="A")
    await _emit(database, vin="B")
    query = select(outbox.c.vin).where(
        outbox.c.vin.in_(["B", "C"]), outbox.c.consumer == "webhooks"
    )
    rows = await database.fetch_all(query)
    assert [row["vin"] for row in rows] == ["B"]


async def test_execute_returns_changed_rows(database: Database) -> None:
    await _emit(database)
    changed = await database.execute(
        "UPDATE outbox SET attempts = attempts + 1 WHERE event_type = :t",
        {"t": "fleet_clearance_changed"},
    )
    assert changed == 2


async def test_unknown_event_type_is_refused(database: Database) -> None:
    with pytest.raises(ValueError, match="no consumer"):
        await _emit(database, event_type="made_up")


async def test_claim_leases_and_complete_removes(database: Database) -> None:
    for vin in ("A", "B", "C"):
        await _emit(database, vin=vin)
    first = await events.claim(database, consumer="webhooks", worker_id="w1", now_us=2_000, limit=2)
    second = await events.claim(database, consumer="webhooks", worker_id="w2", now_us=2_000)
    assert [e.vin for e in first] == ["A", "B"]
    assert [e.vin for e in second] == ["C"]
    assert first[0].payload == {"action": "approved"}
    async with database.transaction() as conn:
        # A worker can only complete what it holds.
        assert await events.complete(conn, event_ids=[second[0].id], worker_id="w1") == set()
        held = [e.id for e in first]
        assert await events.complete(conn, event_ids=[*held, second[0].id], worker_id="w1") == set(
            held
        )
    # The lease of w2 expires: the event is claimable again, attempts counted.
    later = 2_000 + 31 * 1_000_000
    again = await events.claim(database, consumer="webhooks", worker_id="w3", now_us=later)
    assert [(e.vin, e.attempts) for e in again] == [("C", 2)]


async def test_retry_later_hides_the_event_until_due(database: Database) -> None:
    await _emit(database)
    [event] = await events.claim(database, consumer="webhooks", worker_id="w", now_us=2_000)
    async with database.transaction() as conn:
        await events.retry_later(conn, event_id=event.id, available_at=10_000)
    assert await events.claim(database, consumer="webhooks", worker_id="w", now_us=9_999) == []
    assert len(await events.claim(database, consumer="webhooks", worker_id="w", now_us=10_000)) == 1


async def test_concurrent_claims_never_share_an_event(database: Database) -> None:
    for index in range(40):
        await _emit(database, vin=f"V{index}")

    async def worker(name: str) -> list[int]:
        claimed: list[int] = []
        while batch := await events.claim(
            database, consumer="webhooks", worker_id=name, now_us=5_000, limit=3
        ):
            claimed += [e.id for e in batch]
            await asyncio.sleep(0)
        return claimed

    results = await asyncio.gather(*(worker(f"w{i}") for i in range(4)))
    everything = [event_id for claimed in results for event_id in claimed]
    assert len(everything) == 40
    assert len(set(everything)) == 40


async def test_sqlite_data_version_sees_commits_of_this_process_at_once(
    two_sqlite_databases: tuple[Database, Database],
) -> None:
    # Two Database objects on one file (two apps in one process): a commit through either
    # changes what both report on the very next call, reused reading or not.
    first, second = two_sqlite_databases
    before = first.data_version()
    assert first.data_version() == before  # nothing committed: the same
    await _emit(second)
    assert first.data_version() != before
    seen = second.data_version()
    await _emit(second)
    assert second.data_version() != seen


async def test_sqlite_data_version_sees_another_process_commit_within_its_reuse_window(
    sqlite_settings: Settings,
) -> None:
    db = create_database(sqlite_settings.resolved_database_url)
    await db.connect()
    try:
        before = db.data_version()
        path = sqlite_path(sqlite_settings.resolved_database_url)
        script = (
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "c.execute('DELETE FROM outbox'); c.commit()"
        )
        subprocess.run([sys.executable, "-c", script, path], check=True)
        await asyncio.sleep(VERSION_REUSE_SECONDS * 2)
        assert db.data_version() != before
    finally:
        await db.close()
