"""What a commit invalidates and wakes (kit.db data_version(tables) and on_commit): on
PostgreSQL a commit names the tables it wrote, so the pull path's caches (bearer rows,
vehicle rows) survive the background's commits to other tables, in this process and in
every other one; on SQLite any commit counts, and only this process's wake anyone."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import pytest

from autoport.config import Settings
from autoport.kit.clock import now_us
from autoport.kit.db import Database, create_database
from autoport.oauth.bearer import BEARER_TABLES

VEHICLES = frozenset({"vehicles"})
OUTBOX = frozenset({"outbox"})


@pytest.fixture
async def two_processes(
    postgres_schema: tuple[str, str],
) -> AsyncIterator[tuple[Database, Database]]:
    """Two PostgreSQL databases on one schema: two server processes, as the pool and the
    listener of each see the other's commits only through notifications."""
    url, schema = postgres_schema
    writer, reader = (create_database(url, schema=schema) for _ in range(2))
    await writer.connect()
    await reader.connect()
    try:
        assert writer.sees_other_processes and reader.sees_other_processes
        yield writer, reader
    finally:
        await writer.close()
        await reader.close()


async def _write(db: Database, sql: str) -> None:
    async with db.transaction() as conn:
        await conn.execute(sql, {"now": now_us()})


# Statements that write each table and change nothing (no row matches): the commit is
# announced all the same, which is what the caches and wake-ups go by.
OUTBOX_WRITE = "UPDATE outbox SET attempts = attempts WHERE created_at < 0 AND created_at = :now"
HISTORY_WRITE = "DELETE FROM vehicle_data_history WHERE received_at < 0 AND received_at = :now"
STREAM_WRITE = "DELETE FROM stream_messages WHERE created_at < 0 AND created_at = :now"
TOKENS_WRITE = (
    "UPDATE oauth_tokens SET expires_at = expires_at WHERE expires_at < 0 AND expires_at = :now"
)
VEHICLES_WRITE = (
    "UPDATE vehicles SET updated_at = updated_at WHERE updated_at < 0 AND updated_at = :now"
)


async def _until(check: Callable[[], bool], seconds: float = 5.0) -> float:
    """Seconds until `check()` holds (fails after `seconds`)."""
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < seconds, "not within the time"
        await asyncio.sleep(0.005)
    return time.monotonic() - started


async def test_background_commits_keep_the_pull_caches_in_every_process(
    two_processes: tuple[Database, Database],
) -> None:
    writer, reader = two_processes
    bearer, vehicles = reader.data_version(BEARER_TABLES), reader.data_version(VEHICLES)
    background = frozenset({"outbox", "vehicle_data_history", "stream_messages"})
    before = reader.data_version(background)
    assert before is not None
    for sql in (OUTBOX_WRITE, HISTORY_WRITE, STREAM_WRITE):
        await _write(writer, sql)
    # The three notifications arrived ...
    await _until(lambda: reader.data_version(background) == before + 3)
    # ... and named tables the pull does not read from: its caches stay.
    assert reader.data_version(BEARER_TABLES) == bearer
    assert reader.data_version(VEHICLES) == vehicles
    assert writer.data_version(BEARER_TABLES) is not None

    await _write(writer, TOKENS_WRITE)
    await _until(lambda: reader.data_version(BEARER_TABLES) != bearer)
    assert reader.data_version(VEHICLES) == vehicles
    await _write(writer, VEHICLES_WRITE)
    await _until(lambda: reader.data_version(VEHICLES) != vehicles)


async def test_on_commit_wakes_other_processes_for_the_tables_watched_only(
    two_processes: tuple[Database, Database],
) -> None:
    writer, reader = two_processes
    woken = asyncio.Event()
    stop = reader.on_commit(OUTBOX, woken.set)
    try:
        await _write(writer, HISTORY_WRITE)
        await _write(writer, TOKENS_WRITE)
        # Both notifications have arrived (the bearer version moved) without a wake-up.
        bearer = reader.data_version(BEARER_TABLES)
        await _write(writer, TOKENS_WRITE)
        await _until(lambda: reader.data_version(BEARER_TABLES) != bearer)
        assert not woken.is_set()

        await _write(writer, OUTBOX_WRITE)
        await asyncio.wait_for(woken.wait(), 5)
    finally:
        stop()
    woken.clear()
    await _write(writer, OUTBOX_WRITE)
    await _until(lambda: reader.data_version(OUTBOX) is not None)
    await asyncio.sleep(0.2)
    assert not woken.is_set()  # stopped


async def test_sqlite_on_commit_hears_this_process_and_says_it_hears_no_other(
    sqlite_settings: Settings,
) -> None:
    first, second = (create_database(sqlite_settings.resolved_database_url) for _ in range(2))
    await first.connect()
    await second.connect()
    woken: list[int] = []
    stop = first.on_commit(OUTBOX, lambda: woken.append(1))
    try:
        assert not first.sees_other_processes  # workers keep polling for other processes
        await _write(second, OUTBOX_WRITE)  # another Database on the file, this process
        assert woken == [1]
        stop()
        await _write(first, OUTBOX_WRITE)
        assert woken == [1]
    finally:
        stop()
        await first.close()
        await second.close()
