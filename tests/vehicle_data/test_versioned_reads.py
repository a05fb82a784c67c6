"""The pull's versioned reads (vehicle rows, clearances): a commit to their table empties
every entry at once, so the pulls in flight then share one read of each key instead of
asking the database once each (a herd of dozens at 64 connections on PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from autoport.config import Settings
from autoport.kit.db import Database, create_database
from autoport.kit.versioned import VersionedReads

TABLES = frozenset({"vehicles"})
KEY = ("production", "WVWZZZ1JZXW000001")


@pytest.fixture
async def db(sqlite_settings: Settings) -> AsyncIterator[Database]:
    database = create_database(sqlite_settings.resolved_database_url)
    await database.connect()
    try:
        yield database
    finally:
        await database.close()


class SlowRead:
    """A read that waits until released, counting how often it is asked."""

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.fail = fail

    async def __call__(self) -> dict[str, int]:
        self.calls += 1
        await self.release.wait()
        if self.fail:
            raise ConnectionError("database gone")
        return {"row": self.calls}


async def test_concurrent_misses_share_one_read(db: Database) -> None:
    reads, load = VersionedReads(), SlowRead()
    pulls = [asyncio.create_task(reads.get(db, TABLES, KEY, load)) for _ in range(20)]
    await asyncio.sleep(0.01)
    load.release.set()
    assert await asyncio.gather(*pulls) == [{"row": 1}] * 20
    assert load.calls == 1
    assert await reads.get(db, TABLES, KEY, load) == {"row": 1}  # cached
    assert reads.flights == {}


async def test_a_failed_read_fails_the_pulls_that_waited_for_it(db: Database) -> None:
    reads, load = VersionedReads(), SlowRead(fail=True)
    pulls = [asyncio.create_task(reads.get(db, TABLES, KEY, load)) for _ in range(5)]
    await asyncio.sleep(0.01)
    load.release.set()
    results = await asyncio.gather(*pulls, return_exceptions=True)
    assert all(isinstance(result, ConnectionError) for result in results)
    assert load.calls == 1
    # Nothing is cached: the next pull reads again.
    load.fail = False
    assert await reads.get(db, TABLES, KEY, load) == {"row": 2}


async def test_a_cancelled_reader_hands_the_read_to_one_of_its_followers(db: Database) -> None:
    reads, load = VersionedReads(), SlowRead()
    leader = asyncio.create_task(reads.get(db, TABLES, KEY, load))
    await asyncio.sleep(0.01)
    followers = [asyncio.create_task(reads.get(db, TABLES, KEY, load)) for _ in range(5)]
    await asyncio.sleep(0.01)
    leader.cancel()  # its client went away
    await asyncio.sleep(0.01)
    load.release.set()
    # The followers are answered, by one more read between them.
    assert await asyncio.gather(*followers) == [{"row": 2}] * 5
    assert load.calls == 2
    assert leader.cancelled()
