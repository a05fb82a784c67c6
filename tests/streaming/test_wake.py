"""The stream builder and the streams wait for commits instead of polling: on PostgreSQL
every process hears every process's commits (LISTEN/NOTIFY, kit.db on_commit), and the
slow safety poll only catches a lost notification; on SQLite this process's commits wake
the builder at once."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit import outbox
from autoport.kit.clock import Clock, now_us
from autoport.kit.db import Database, PostgresConnection
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.state import typed_parts
from autoport.streaming.tasks import StreamBuilder
from tests.conftest import _empty_postgres_tables
from tests.streaming.conftest import (
    create_application,
    grant_consent,
    ingest,
    new_vin,
    point,
    stored_messages,
)

# Long enough that anything delivered well within it was not found by polling.
SLOW_POLL = 30.0


@pytest.fixture
def pg_settings(postgres_schema: tuple[str, str], tmp_path: Path) -> Settings:
    url, schema = postgres_schema
    asyncio.run(_empty_postgres_tables(url, schema))
    return Settings(
        data_dir=tmp_path,
        database_url=url,
        database_schema=schema,
        access_log=False,
        stream_safety_poll_seconds=SLOW_POLL,
    )


@contextlib.asynccontextmanager
async def instance(settings: Settings, *, builder: bool = False) -> AsyncIterator[FastAPI]:
    """One server's app (another process's, as far as the database is concerned: its
    own pool and listener), on the real clock; with the stream builder running or not."""
    app = create_app(settings, clock=Clock(), run_background=False)
    async with app.router.lifespan_context(app):
        task = None
        if builder:
            task = asyncio.create_task(StreamBuilder(state_of(app)).run())
        try:
            yield app
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


def state_of(app: FastAPI) -> AppState:
    state: AppState = app.state.autoport
    return state


async def within(seconds: float, check: Callable[[], Awaitable[bool]]) -> float:
    """Seconds until `check()` holds; fails after `seconds`."""
    started = time.monotonic()
    while not await check():
        assert time.monotonic() - started < seconds, f"not within {seconds} s"
        await asyncio.sleep(0.01)
    return time.monotonic() - started


async def consented_app(db: Database, vin: str) -> str:
    app_id = await create_application(db, properties=["charging.battery_level"])
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    return app_id


async def test_a_message_reaches_another_instances_subscriber_without_polling(
    pg_settings: Settings,
) -> None:
    # Bounded well inside pytest's timeout: a hang (seen once in a full CI run, never
    # alone) fails with the traceback of the await it was stuck on, not the event loop's.
    async with (
        asyncio.timeout(60),
        instance(pg_settings) as api,
        instance(pg_settings, builder=True) as worker,
    ):
        db = state_of(api).database
        assert state_of(worker).database.sees_other_processes
        vin = new_vin()
        app_id = await consented_app(db, vin)
        await asyncio.sleep(0.3)  # the builder's first pass is over: it waits (30 s poll)
        # What an SSE stream of this application on the API instance waits on.
        subscriber = typed_parts(state_of(api)).hub.waiter((Environment.sandbox, app_id))

        started = time.monotonic()
        await ingest(db, vin=vin, data={"charging": {"battery_level": point(0.5)}})
        # The ingest's commit woke the other instance's builder, whose commit of the
        # message woke this instance's subscriber: both by notification.
        await asyncio.wait_for(subscriber.wait(), 5)
        elapsed = time.monotonic() - started
        assert elapsed < 5 < SLOW_POLL
        [(_, message)] = await stored_messages(db, app_id)
        assert message["data"]["charging"]["battery_level"] == point(0.5)


async def test_a_lost_notification_only_delays_until_the_safety_poll(
    pg_settings: Settings,
) -> None:
    settings = pg_settings.model_copy(update={"stream_safety_poll_seconds": 1.5})
    async with instance(settings, builder=True) as worker:
        db = state_of(worker).database
        vin = new_vin()
        app_id = await consented_app(db, vin)
        # A first message, notified as usual: the builder is running and then waits.
        await ingest(db, vin=vin, data={"charging": {"battery_level": point(0.1)}})
        await within(5, lambda: _count(db, app_id, 1))
        await asyncio.sleep(0.3)

        # An event committed without a notification (as if it were lost).
        assert settings.database_url is not None
        import asyncpg

        raw = await asyncpg.connect(
            settings.database_url, server_settings={"search_path": settings.database_schema or ""}
        )
        try:
            async with raw.transaction():
                await outbox.emit(
                    PostgresConnection(raw),  # not a Database transaction: nobody is told
                    environment=Environment.sandbox,
                    event_type="vehicle_data_changed",
                    payload={
                        "vin": vin,
                        "brand": "sandbox",
                        "data": {"charging": {"battery_level": point(0.2)}},
                    },
                    now_us=now_us(),
                    vin=vin,
                )
        finally:
            await raw.close()
        # Nobody polls every 20 ms: not found yet ...
        await asyncio.sleep(0.4)
        assert await _count(db, app_id, 1)
        # ... but the safety poll finds it.
        await within(5, lambda: _count(db, app_id, 2))


async def _count(db: Database, app_id: str, expected: int) -> bool:
    return len(await stored_messages(db, app_id)) == expected


async def test_sqlite_this_process_commits_wake_the_builder_at_once(
    sqlite_settings: Settings,
) -> None:
    # SQLite polls for other processes' commits at stream_poll_seconds; this process's
    # wake the builder without waiting for it.
    settings = sqlite_settings.model_copy(update={"stream_poll_seconds": 5.0})
    async with asyncio.timeout(60), instance(settings, builder=True) as worker:
        db = state_of(worker).database
        assert not db.sees_other_processes
        vin = new_vin()
        app_id = await consented_app(db, vin)
        await asyncio.sleep(0.3)
        await ingest(db, vin=vin, data={"charging": {"battery_level": point(0.3)}})
        elapsed = await within(2, lambda: _count(db, app_id, 1))
        assert elapsed < 2 < 5.0
