"""What a commit invalidates and wakes (kit.db data_version(tables) and on_commit): a
commit names the tables it wrote, so the pull path's caches (bearer rows, vehicle rows)
survive the background's commits to other tables; on PostgreSQL in every process, on
SQLite in this one (another process's commit counts for every table there). A
transaction that changed no row is no commit at all."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from autoport.config import Settings
from autoport.kit.clock import now_us
from autoport.kit.db import Database, create_database
from autoport.oauth.bearer import BEARER_TABLES
from tests.factories import create_app_credentials

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


@pytest.fixture
async def app_id(two_processes: tuple[Database, Database]) -> str:
    """An application, for the token rows (they name one). Its commit's notification has
    reached the reader when the test starts (a later one has)."""
    writer, reader = two_processes
    app_id = (await create_app_credentials(writer)).app_id
    outbox = reader.data_version(OUTBOX)
    await _write(writer, OUTBOX_WRITE)
    await _until(lambda: reader.data_version(OUTBOX) != outbox)
    return app_id


async def _write(db: Database, sql: str, application_id: str = "") -> None:
    async with db.transaction() as conn:
        await conn.execute(sql, {"now": now_us(), "uid": uuid.uuid4().hex, "app": application_id})


# Statements that write one row of each table: what the caches and wake-ups go by.
OUTBOX_WRITE = (
    "INSERT INTO outbox (environment, consumer, event_type, payload, created_at, "
    "available_at) VALUES ('production', 'test', 'test', '{}', :now, :now)"
)
HISTORY_WRITE = (
    "INSERT INTO history_hot (series_id, timestamp, digest, received_at, value) "
    "VALUES (1, :now, :now, :now, '1')"
)
STREAM_WRITE = (
    "INSERT INTO stream_messages (environment, application_id, seq, message_id, vin, "
    "message, ingested_at, created_at) VALUES ('production', 'a', :now, :uid, 'V', '{}', "
    ":now, :now)"
)
TOKENS_WRITE = (
    "INSERT INTO oauth_tokens (token_hash, environment, kind, application_id, scopes, "
    "created_at, expires_at) VALUES (:uid, 'production', 'access', :app, '', :now, :now)"
)
VEHICLES_WRITE = (
    "INSERT INTO vehicles (environment, vin, brand, document, stamps, created_at, "
    "updated_at) VALUES ('production', :uid, 'bmw', '{}', '{}', :now, :now)"
)
# Statements that write no row (no row matches): a worker's claim that found no work.
OUTBOX_NOTHING = "UPDATE outbox SET attempts = attempts WHERE created_at < 0"
OUTBOX_NOTHING_RETURNING = "UPDATE outbox SET attempts = attempts WHERE created_at < 0 RETURNING id"
# A statement with a WITH clause: its count (0) leaves out what its other parts wrote, so
# it is announced whatever it counts.
OUTBOX_NOTHING_WITH = (
    "WITH due AS (SELECT id FROM outbox WHERE created_at < 0) "
    "UPDATE outbox SET attempts = attempts WHERE id IN (SELECT id FROM due)"
)


async def _until(check: Callable[[], bool], seconds: float = 5.0) -> float:
    """Seconds until `check()` holds (fails after `seconds`)."""
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < seconds, "not within the time"
        await asyncio.sleep(0.005)
    return time.monotonic() - started


async def test_background_commits_keep_the_pull_caches_in_every_process(
    two_processes: tuple[Database, Database], app_id: str
) -> None:
    writer, reader = two_processes
    bearer, vehicles = reader.data_version(BEARER_TABLES), reader.data_version(VEHICLES)
    background = frozenset({"outbox", "history_hot", "stream_messages"})
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

    await _write(writer, TOKENS_WRITE, app_id)
    await _until(lambda: reader.data_version(BEARER_TABLES) != bearer)
    assert reader.data_version(VEHICLES) == vehicles
    await _write(writer, VEHICLES_WRITE)
    await _until(lambda: reader.data_version(VEHICLES) != vehicles)


async def test_on_commit_wakes_other_processes_for_the_tables_watched_only(
    two_processes: tuple[Database, Database], app_id: str
) -> None:
    writer, reader = two_processes
    woken = asyncio.Event()
    stop = reader.on_commit(OUTBOX, woken.set)
    try:
        await _write(writer, HISTORY_WRITE)
        await _write(writer, TOKENS_WRITE, app_id)
        # Both notifications have arrived (the bearer version moved) without a wake-up.
        bearer = reader.data_version(BEARER_TABLES)
        await _write(writer, TOKENS_WRITE, app_id)
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
    two_sqlite_databases: tuple[Database, Database],
) -> None:
    first, second = two_sqlite_databases
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


async def test_a_transaction_that_writes_no_row_notifies_nobody(
    two_processes: tuple[Database, Database], app_id: str
) -> None:
    """The workers' claims run every few hundred milliseconds and nearly always find no
    work: announced, each would wake every stream builder and worker of every process."""
    writer, reader = two_processes
    outbox_here, outbox_there = writer.data_version(OUTBOX), reader.data_version(OUTBOX)
    woken_here, woken_there = asyncio.Event(), asyncio.Event()
    stops = [writer.on_commit(OUTBOX, woken_here.set), reader.on_commit(OUTBOX, woken_there.set)]
    try:
        async with writer.transaction() as conn:
            assert await conn.execute(OUTBOX_NOTHING) == 0
            assert await conn.fetch_all(OUTBOX_NOTHING_RETURNING) == []
            assert await conn.fetch_one(OUTBOX_NOTHING_RETURNING) is None
        # A later commit's notification arrives after any the empty one would have sent.
        bearer = reader.data_version(BEARER_TABLES)
        await _write(writer, TOKENS_WRITE, app_id)
        await _until(lambda: reader.data_version(BEARER_TABLES) != bearer)
        assert writer.data_version(OUTBOX) == outbox_here
        assert reader.data_version(OUTBOX) == outbox_there
        assert not woken_here.is_set() and not woken_there.is_set()

        # One row written among statements that wrote none: announced.
        async with writer.transaction() as conn:
            await conn.execute(OUTBOX_NOTHING)
            await conn.fetch_all(OUTBOX_WRITE + " RETURNING id", {"now": now_us()})
        await asyncio.wait_for(woken_there.wait(), 5)
        assert woken_here.is_set()
        woken_there.clear()

        # A count that cannot tell (a WITH clause) is announced whatever it says.
        async with writer.transaction() as conn:
            assert await conn.execute(OUTBOX_NOTHING_WITH) == 0
        await asyncio.wait_for(woken_there.wait(), 5)
    finally:
        for stop in stops:
            stop()


async def test_sqlite_a_transaction_that_changes_no_row_wakes_nobody(
    sqlite_settings: Settings,
) -> None:
    db = create_database(sqlite_settings.resolved_database_url)
    await db.connect()
    woken: list[int] = []
    stop = db.on_commit(OUTBOX, lambda: woken.append(1))
    try:
        async with db.transaction() as conn:
            assert await conn.execute(OUTBOX_NOTHING) == 0
        assert woken == []
        await _write(db, VEHICLES_WRITE)  # a commit to a table not watched
        assert woken == []
        await _write(db, OUTBOX_WRITE)
        assert woken == [1]
    finally:
        stop()
        await db.close()


async def test_sqlite_this_process_commits_count_per_table_and_other_connections_for_all(
    two_sqlite_databases: tuple[Database, Database],
) -> None:
    db, other = two_sqlite_databases
    bearer, vehicles = db.data_version(BEARER_TABLES), db.data_version(VEHICLES)
    for sql in (OUTBOX_WRITE, HISTORY_WRITE, STREAM_WRITE):
        await _write(db, sql)
    assert db.data_version(BEARER_TABLES) == bearer
    assert db.data_version(VEHICLES) == vehicles
    await _write(db, VEHICLES_WRITE)
    assert db.data_version(VEHICLES) != vehicles
    assert db.data_version(BEARER_TABLES) == bearer

    # Another connection's commit (another process's, as far as SQLite tells) is not
    # told apart by table: every version moves once its reading is due.
    await asyncio.sleep(0.01)
    bearer = db.data_version(BEARER_TABLES)
    await _write(other, OUTBOX_WRITE)
    await asyncio.sleep(0.01)  # past VERSION_REUSE_SECONDS
    assert db.data_version(BEARER_TABLES) != bearer
