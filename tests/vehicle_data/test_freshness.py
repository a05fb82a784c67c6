"""The freshness window: a brand's data source is asked about a vehicle at most once per
window, concurrent pulls share one fetch (in a process and across processes), pulls in
the window write nothing, and a failure stands for the window."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest
from fastapi import FastAPI

from autoport.brands.registry import registry_of
from autoport.brands.sources import FetchResult, VehicleOffline
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Connection, Database
from autoport.kit.errors import ApiError
from autoport.vehicle_data import freshness
from autoport.vehicle_data.freshness import FetchOutcome, FreshnessWindows
from tests.vehicle_data.conftest import TestCallers
from tests.vehicle_data.test_pull import ALL, URL, VIN, TestSource, bearer, reader, store

FRESH = {"data": 0.55, "timestamp": "2024-05-02T10:00:00.000000Z"}


def source_of(app: FastAPI) -> TestSource:
    source = TestSource()
    source.result = FetchResult(data={"charging": {"battery_level": FRESH}})
    registry_of(app.state.autoport).data_sources["bmw"] = source
    return source


class WriteCounter:
    """Counts the write transactions the app's database opens (the real ones run)."""

    def __init__(self, database: Database) -> None:
        self.count = 0
        self.database = database
        self.original = database.transaction

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        self.count += 1
        async with self.original() as conn:
            yield conn

    def __enter__(self) -> WriteCounter:
        self.database.transaction = self.transaction  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self.database.transaction = self.original  # type: ignore[method-assign]


async def test_pulls_inside_the_window_ask_once_and_write_nothing(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, clock: FrozenClock
) -> None:
    source = source_of(app)
    headers = await reader(callers)
    first = await client.get(URL, headers=headers)
    assert first.status_code == 200, first.text
    assert first.json()["charging"]["battery_level"] == FRESH
    with WriteCounter(app.state.autoport.database) as writes:
        for _ in range(20):
            clock.advance(1)
            response = await client.get(URL, headers=headers)
            assert response.status_code == 200
            assert response.json()["charging"]["battery_level"] == FRESH
    assert len(source.asked) == 1
    assert writes.count == 0
    clock.advance(11)  # 31 s after the first fetch: the production default of 30 s ended
    assert (await client.get(URL, headers=headers)).status_code == 200
    assert len(source.asked) == 2


async def test_a_fetch_that_returns_what_is_stored_writes_nothing(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, clock: FrozenClock
) -> None:
    """The car stood still: the source answers the stored values again. Counting the
    transactions: the lease and the outcome (two small writes per window), no ingestion."""
    source = source_of(app)
    headers = await reader(callers)
    assert (await client.get(URL, headers=headers)).status_code == 200
    events = "SELECT count(*) FROM outbox WHERE event_type = 'vehicle_data_changed'"
    before = await app.state.autoport.database.fetch_value(events)
    clock.advance(31)
    with WriteCounter(app.state.autoport.database) as writes:
        assert (await client.get(URL, headers=headers)).status_code == 200
    assert len(source.asked) == 2
    assert writes.count == 2
    assert await app.state.autoport.database.fetch_value(events) == before


async def test_concurrent_pulls_share_one_fetch(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    source = source_of(app)
    source.delay = 0.2
    headers = await reader(callers)
    answers = await asyncio.gather(*(client.get(URL, headers=headers) for _ in range(25)))
    assert [a.status_code for a in answers] == [200] * 25
    assert len(source.asked) == 1


async def test_a_failure_stands_for_the_window_then_the_car_is_asked_again(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, clock: FrozenClock
) -> None:
    await store(app)
    source = source_of(app)
    source.error = VehicleOffline("asleep")
    headers = await reader(callers)
    for _ in range(3):
        response = await client.get(URL, headers=headers)
        assert response.status_code == 408
        assert response.json()["errors"][0]["detail"] == "asleep"
    assert len(source.asked) == 1
    source.error = None
    clock.advance(31)
    response = await client.get(URL, headers=headers)
    assert response.status_code == 200
    assert response.json()["charging"]["battery_level"] == FRESH


async def test_max_age_per_brand_and_zero_asks_every_time(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    state = app.state.autoport
    state.settings = state.settings.model_copy(
        update={"vehicle_data_max_age_seconds_by_brand": {"bmw": 0.0}}
    )
    source = source_of(app)
    headers = await reader(callers)
    for _ in range(3):
        assert (await client.get(URL, headers=headers)).status_code == 200
    assert len(source.asked) == 3


async def test_each_property_set_has_its_own_window(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    """A fetch asks only for what its caller may read, so a reader of other properties
    cannot be served by it."""
    source = source_of(app)
    app_id = await callers.application(properties=ALL)
    narrow = await callers.vehicle_token(app_id, vin=VIN, properties=["charging.battery_level"])
    assert (await client.get(URL, headers=bearer(narrow))).status_code == 200
    assert (await client.get(URL, headers=await reader(callers))).status_code == 200
    assert (await client.get(URL, headers=bearer(narrow))).status_code == 200
    assert source.asked == [frozenset({"charging.battery_level"}), frozenset(ALL)]


def pull_outcome(
    windows: FreshnessWindows, fetch: Callable[[], Awaitable[None]]
) -> Awaitable[FetchOutcome]:
    """The outcome standing for a pull of VIN's whole property set (a 30 s window)."""
    return windows.outcome(
        environment="production",
        vin=VIN,
        properties=frozenset(ALL),
        max_age_seconds=30,
        timeout_seconds=10,
        fetch=fetch,
    )


async def never_asked() -> None:
    raise AssertionError("the source was asked again inside the window")


async def test_two_processes_share_one_fetch_through_the_database(
    two_databases: tuple[Database, Database],
) -> None:
    """Two processes' windows (two Database objects on one database) pulling at once:
    one asks the source, the other waits for its outcome; then both serve the window."""
    clock = FrozenClock()
    asked = 0

    async def fetch() -> None:
        nonlocal asked
        asked += 1
        await asyncio.sleep(0.3)

    windows = [FreshnessWindows(database, clock) for database in two_databases]
    outcomes = await asyncio.gather(*(pull_outcome(w, fetch) for w in windows))
    assert asked == 1
    assert [o.status for o in outcomes] == [200, 200]
    assert outcomes[0].fetched_at_us == outcomes[1].fetched_at_us


async def test_a_process_waiting_for_another_s_fetch_hears_its_outcome_at_once(
    two_databases: tuple[Database, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL the waiting process is woken by the claimant's commit, not by its
    next look at the row: with that look 5 s away, it still has the outcome at once.
    (SQLite cannot hear another process's commit; there its ordinary poll serves.)"""
    clock = FrozenClock()
    first, second = two_databases
    monkeypatch.setattr(freshness, "_SAFETY_POLL_SECONDS", 5.0)
    if first.sees_other_processes:
        monkeypatch.setattr(freshness, "_POLL_SECONDS", 5.0)
    loop = asyncio.get_running_loop()
    ended: list[float] = []

    async def fetch() -> None:
        await asyncio.sleep(0.3)
        ended.append(loop.time())

    claimant = asyncio.ensure_future(pull_outcome(FreshnessWindows(first, clock), fetch))
    await asyncio.sleep(0.05)  # the first has claimed the fetch
    waiting = await pull_outcome(FreshnessWindows(second, clock), never_asked)
    heard_after = loop.time()
    assert ended and waiting.status == 200
    assert waiting.fetched_at_us == (await claimant).fetched_at_us
    assert heard_after - ended[0] < 1.0


async def test_a_failed_fetch_by_another_process_is_its_outcome_here_too(
    two_databases: tuple[Database, Database],
) -> None:
    clock = FrozenClock()

    async def offline() -> None:
        raise ApiError(408, "asleep")

    first, second = (FreshnessWindows(database, clock) for database in two_databases)
    assert (await pull_outcome(first, offline)).status == 408
    clock.advance(5)
    outcome = await pull_outcome(second, never_asked)
    assert (outcome.status, outcome.detail) == (408, "asleep")


async def test_a_pull_inside_a_known_window_reads_the_vehicle_once(
    client: httpx.AsyncClient,
    app: FastAPI,
    callers: TestCallers,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing is awaited when the window's outcome is known in this process, so the
    # vehicle cannot have changed since the pull read it: no second read (the pull that
    # fetched, and one outside the window, read it again after the fetch).
    from autoport.vehicle_data import service

    source = source_of(app)
    headers = await reader(callers)
    reads: list[str] = []
    real = service._vehicle_row

    async def counted(*args: object) -> object:
        reads.append("read")
        return await real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(service, "_vehicle_row", counted)
    first = await client.get(URL, headers=headers)
    assert first.status_code == 200 and len(source.asked) == 1
    assert len(reads) == 2  # before and after the fetch
    reads.clear()
    for _ in range(3):
        clock.advance(1)
        response = await client.get(URL, headers=headers)
        assert response.status_code == 200
        assert response.json()["charging"]["battery_level"] == FRESH
    assert len(reads) == 3 and len(source.asked) == 1
    clock.advance(30)  # the window ended: fetched again, read again
    reads.clear()
    assert (await client.get(URL, headers=headers)).status_code == 200
    assert len(source.asked) == 2 and len(reads) == 2
