"""The move of the old row-per-point table into chunks (autoport.history.migration), on
both backends: batches keep every point once and in its stored order, progress is
counted exactly, one mover at a time, the old table dropped at the end and no longer
read; migration 0023; `/metrics` and `autoport history status` show the progress."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.config import Settings
from autoport.history import migration, repository
from autoport.history import service as history
from autoport.kit.db import Database, create_database
from tests.helpers.metrics import samples
from tests.history import legacy
from tests.history.old_layout import (
    ENV,
    PROPERTIES,
    START,
    everything,
    expected_export,
    expected_newest_first,
    first_copies,
    newest_first,
    old_layout,
    old_rows,
    vin,
)

TARGET = 50
POINT = ("capability", "property", "timestamp", "digest", "value")


def _row(number: str, prop: str, at: int, text: str, received: int) -> dict[str, Any]:
    return {
        "environment": ENV,
        "vin": number,
        "capability": "charging",
        "property": prop,
        "timestamp": at,
        "digest": hashlib.blake2b(text.encode(), digest_size=8).hexdigest(),
        "value": text,
        "received_at": received,
    }


async def test_points_of_one_timestamp_keep_their_stored_order_across_batches(
    database: Database,
) -> None:
    """Three values at each timestamp, stored in random order: whatever the batch
    boundaries, pages newest first give them back in reverse stored order."""
    rng = random.Random(3)
    rows = []
    for second in range(40):
        values = [f'{{"data":{v},"timestamp":"x{second}"}}' for v in range(3)]
        rng.shuffle(values)
        rows += [_row(vin(1), "battery_level", START + second, text, START + 9) for text in values]
    await legacy.create_table(database)
    try:
        async with database.transaction() as conn:
            await legacy.insert(conn, rows)
        mover = migration.Mover(
            database, target=TARGET, now_us=lambda: START, batch=1, drop_after_us=0
        )
        assert await mover.claim()
        sizes = iter([1, 2, 4] * 100)
        while not mover.done:
            mover.batch = next(sizes)
            await mover.step()
        assert await newest_first(database, vin(1), "charging", "battery_level") == (
            expected_newest_first(rows, vin(1), "charging", "battery_level")
        )
        assert (await everything(database, [vin(1)]))[vin(1)] == expected_export(rows, vin(1))
    finally:
        await legacy.drop_table(database)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_an_upgraded_installation_moves_batch_by_batch_reading_every_point_once(
    backend: str, tmp_path: Path
) -> None:
    rows = old_rows(vehicles=3, seconds=120)
    async with old_layout(backend, tmp_path, rows) as place:
        db = place.database()
        await db.connect()
        try:
            await _move_step_by_step(db, rows)
        finally:
            await db.close()


async def _move_step_by_step(db: Database, rows: list[dict[str, Any]]) -> None:
    vins = [vin(n) for n in range(3)]
    in_old_table = len(first_copies(rows))  # re-deliveries were no-ops
    assert await repository.count_legacy(db.reader) == in_old_table
    # After the upgrade: new points in hot, among them copies of points in the old table
    # (re-delivered: still shown once, with their first arrival).
    later = START + 10**9
    new = [_row(vin(0), "battery_level", later + s, f'{{"data":{s}}}', later) for s in range(5)]
    new += [dict(rows[5], received_at=later), dict(rows[9], received_at=later)]
    async with db.transaction() as conn:
        for row in new:
            await history.append(
                conn,
                environment=ENV,
                vin=row["vin"],
                received_at=row["received_at"],
                points=[tuple(row[k] for k in POINT)],
            )
    everyone = rows + new
    expected = {number: expected_export(everyone, number) for number in vins}

    async def check() -> None:
        assert await everything(db, vins) == expected
        for capability, prop in PROPERTIES:
            assert await newest_first(db, vins[0], capability, prop) == expected_newest_first(
                everyone, vins[0], capability, prop
            )

    await check()
    before = await migration.progress(db)
    assert not before.done and before.total is None  # not started yet
    now = START
    mover = migration.Mover(db, target=TARGET, now_us=lambda: now, batch=300)
    assert await mover.claim()
    moved = 0
    while not mover.done and not mover.waiting:
        moved += await mover.step()
        found = await migration.progress(db)
        assert (found.total, found.moved, found.left) == (
            in_old_table,
            moved,
            in_old_table - moved,
        )
        await check()
    if db.dialect == "postgresql":
        # All moved: the empty table stays 10 minutes for what a replica of the previous
        # version may still write (a rolling upgrade); a later pass moves that too.
        found = await migration.progress(db)
        assert not found.done and found.drop_at == now + migration.DROP_AFTER_US
        assert found.line(now + 60_000_000) == (
            f"history migration: all {moved:,} points moved; the old table goes in 9 min 00 s"
        )
        late = _row(vin(2), "battery_level", START + 10**9 + 7, '{"data":0.5}', START)
        async with db.transaction() as conn:
            await legacy.insert(conn, [late])
        now += migration.DROP_AFTER_US // 2
        moved += await mover.step()  # a pass from the start finds it
        while not mover.waiting:
            moved += await mover.step()
        assert (await migration.progress(db)).drop_at == now + migration.DROP_AFTER_US
        everyone.append(late)
        expected[vin(2)] = expected_export(everyone, vin(2))
        in_old_table += 1
        await check()
        assert await mover.step() == 0 and mover.waiting and not mover.done
        now += migration.DROP_AFTER_US
        await mover.step()
    assert mover.done
    assert moved == in_old_table
    # The old table is gone; readers do not look for it any more.
    assert not await repository.legacy_table_exists(db.reader)
    assert history.old_table_gone(db)
    found = await migration.progress(db)
    assert found.done and found.left == 0 and found.seconds_left is None
    assert found.line() == f"history migration done: {in_old_table:,} points moved"
    assert found.lease_until is None  # released
    await check()
    # Every point once: the chunks and hot hold exactly the distinct points.
    stored = await db.fetch_value(
        "SELECT (SELECT coalesce(sum(count), 0) FROM history_chunks) "
        "+ (SELECT count(*) FROM history_hot)"
    )
    assert stored == sum(len(points) for points in expected.values()) + 2  # 2 re-delivered
    # The two re-delivered copies are dropped when hot is sealed next to their first.
    for number in vins:
        for capability, prop in PROPERTIES:
            sid = history.series_id(ENV, number, capability, prop)
            await history.seal_series(db, sid, before=history.FAR_FUTURE, target=TARGET)
    assert await db.fetch_value("SELECT sum(count) FROM history_chunks") == sum(
        len(points) for points in expected.values()
    )
    await check()


async def test_one_mover_at_a_time(database: Database) -> None:
    rows = [_row(vin(2), "battery_level", START + s, f'{{"data":{s}}}', START) for s in range(50)]
    await legacy.create_table(database)
    try:
        async with database.transaction() as conn:
            await legacy.insert(conn, rows)
        now = START
        first = migration.Mover(
            database, target=TARGET, now_us=lambda: now, batch=10, drop_after_us=0
        )
        second = migration.Mover(
            database, target=TARGET, now_us=lambda: now, batch=10, drop_after_us=0
        )
        assert await first.claim()
        assert not await second.claim()  # held
        assert await first.step() == 10
        assert not await second.claim()  # renewed by the batch
        now += migration.LEASE_US + 1  # the first mover stalls past its lease
        assert await second.claim()
        left = await repository.count_legacy(database.reader)
        with pytest.raises(migration.LeaseLost):
            await first.step()
        assert await repository.count_legacy(database.reader) == left  # it wrote nothing
        while not second.done:
            await second.step()
        found = await migration.progress(database)
        assert found.done and found.moved == 50
        assert await newest_first(database, vin(2), "charging", "battery_level") == (
            expected_newest_first(rows, vin(2), "charging", "battery_level")
        )
    finally:
        await legacy.drop_table(database)


async def _status(settings: Settings) -> dict[str, Any]:
    """`autoport history status --json`, as an operator runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOPORT_")}
    env["AUTOPORT_DATA_DIR"] = str(settings.data_dir)
    if settings.database_url:
        env["AUTOPORT_DATABASE_URL"] = settings.database_url
    if settings.database_schema:
        env["AUTOPORT_DATABASE_SCHEMA"] = settings.database_schema
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "autoport", "history", "status", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return dict(orjson.loads(result.stdout))


def _migration_figures(text: str) -> dict[str, float]:
    prefix = "autoport_history_migration_"
    found = samples(text).items()
    return {name[len(prefix) :]: value for (name, _), value in found if name.startswith(prefix)}


async def test_progress_shows_in_metrics_and_in_the_cli(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    db = app.state.autoport.database
    # A new installation: nothing to move, said so.
    assert _migration_figures((await client.get("/metrics")).text)["done"] == 1
    assert (await _status(settings))["done"] is True
    rows = [_row(vin(3), "battery_level", START + s, f'{{"data":{s}}}', START) for s in range(90)]
    await legacy.create_table(db)
    try:
        async with db.transaction() as conn:
            await legacy.insert(conn, rows)
        assert _migration_figures((await client.get("/metrics")).text)["done"] == 0
        mover = migration.Mover(db, target=TARGET, now_us=lambda: START, batch=30, drop_after_us=0)
        assert await mover.claim()
        await mover.step()
        await mover.step()
        figures = _migration_figures((await client.get("/metrics")).text)
        assert figures["moved_points"] == 60 and figures["left_points"] == 30
        assert figures["points_per_second"] > 0  # two batches timed
        assert figures["seconds_left"] == pytest.approx(30 / figures["points_per_second"], 0.01)
        status = await _status(settings)
        assert (status["done"], status["total"], status["moved"], status["left"]) == (
            False,
            90,
            60,
            30,
        )
        line = (await migration.progress(db)).line()
        assert line.startswith("history migration: 60 of 90 points moved (66.7%), ")
        assert "points/s, about " in line and line.endswith(" s left")
        while not mover.done:
            await mover.step()
        figures = _migration_figures((await client.get("/metrics")).text)
        assert figures == {
            "done": 1,
            "moved_points": 90,
            "left_points": 0,
            "points_per_second": 0,
            "seconds_left": 0,
        }
        assert (await _status(settings))["done"] is True
    finally:
        await legacy.drop_table(db)


@pytest.mark.parametrize("stored", ["nothing", "a point", "a vehicle"])
async def test_0023_drops_the_old_table_only_where_nothing_was_stored(
    tmp_path: Path, stored: str
) -> None:
    """A vehicle without a point in the history may be served by a replica of the
    previous version that writes the table a moment later: it stays then too."""
    from autoport.kit.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'steps.db'}"
    await upgrade(url, revision="0022")
    db = create_database(url)
    await db.connect()
    try:
        async with db.transaction() as conn:
            if stored == "a point":
                await legacy.insert(conn, [_row(vin(4), "status", START, "{}", START)])
            if stored == "a vehicle":
                await conn.execute(
                    "INSERT INTO vehicles (environment, vin, brand, document, stamps, "
                    "created_at, updated_at) VALUES ('production', :vin, 'bmw', '{}', '{}', 1, 1)",
                    {"vin": vin(4)},
                )
        await upgrade(url)
        kept = stored != "nothing"
        assert await repository.legacy_table_exists(db.reader) is kept
        assert (await migration.progress(db)).done is not kept
    finally:
        await db.close()


async def test_the_move_committing_between_any_two_reads_of_a_reader_hides_no_point(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Readers read the old table first, then hot, then the chunks: the move committing
    between any two of their reads shows a point twice (dropped), never hides one. For
    each read a reader makes (the owner's export, pages newest first), a run in which
    the whole move commits just before that read."""
    reads = 0
    counting = False
    move_at: int | None = None
    mover: migration.Mover | None = None

    def moving_first(read: Any) -> Any:
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            nonlocal reads
            reads += 1 if counting else 0
            if reads == move_at and mover is not None and not mover.done:
                while not mover.done:
                    await mover.step()
            return await read(*args, **kwargs)

        return wrapped

    for name, function in vars(repository).items():
        if inspect.iscoroutinefunction(function) and not name.startswith("_"):
            monkeypatch.setattr(repository, name, moving_first(function))

    async def run(number: str) -> None:
        """One reader pass over a vehicle whose history is in the old table."""
        nonlocal reads, mover, counting
        rows = old_rows(vehicles=1, seconds=12, seed=len(number))
        rows = [dict(row, vin=number) for row in rows]
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        await db.connect()  # a new process's view: it has not seen the old table gone
        try:
            await legacy.create_table(db)
            async with db.transaction() as conn:
                await legacy.insert(conn, rows)
            mover = migration.Mover(
                db, target=10, now_us=lambda: START, batch=10**6, drop_after_us=0
            )
            assert await mover.claim()
            reads, counting = 0, True
            exported = (await everything(db, [number]))[number]
            assert exported == expected_export(rows, number), move_at
            for capability, prop in PROPERTIES:
                assert await newest_first(db, number, capability, prop) == (
                    expected_newest_first(rows, number, capability, prop)
                ), (capability, prop, move_at)
            counting = False
            while not mover.done:
                await mover.step()
        finally:
            mover = None
            await legacy.drop_table(db)
            await db.close()

    await run("WBAREADS0000000000"[:17])
    passes = reads
    assert passes > 20
    for move_at in range(1, passes + 1):
        await run(f"WBAMOVE{move_at:010d}")
