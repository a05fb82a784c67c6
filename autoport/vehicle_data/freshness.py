"""How often a pull asks a brand's data source: at most once per freshness window.

A pull of a vehicle whose brand has a data source used to ask the source and ingest its
answer every time: a carmaker API call and a write transaction per read. Now the source
is asked about a vehicle (for one set of properties) at most once per
`vehicle_data_max_age_seconds` (per brand: `vehicle_data_max_age_seconds_by_brand`), and
the outcome of that one fetch stands for the whole window:
- the source answered: pulls in the window are served from the store;
- it failed (offline 408, privacy mode 403, unavailable 503, timeout 504): pulls in the
  window answer the same failure, without asking the car again.

Concurrent pulls share one fetch: in this process they await the same future; across
processes the `vehicle_fetches` row is the lease (one conditional upsert claims it), and
the others wait for the claimant's outcome: woken by its commit on PostgreSQL (commit
notifications, about a millisecond), by polling on SQLite. Writing the row costs two
small writes per window per vehicle, never one per pull.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from autoport.kit.clock import Clock
from autoport.kit.db import Connection, Database
from autoport.kit.errors import ApiError
from autoport.kit.periodic import wait_for
from autoport.kit.state import AppState, parts_of
from autoport.vehicle_data import repository

# A process that claimed a fetch and died holds the lease until the fetch's timeout has
# passed; the others wait that long at most, then claim it themselves.
_LEASE_MARGIN_US = 1_000_000
# How often a process waiting for another's fetch looks at the row when it cannot hear
# the other's commit (SQLite, or PostgreSQL while the listener is down). Where it can,
# the look is only a safety net for a lost notification: polling every 20 ms there held
# the waiting process's pulls up to 20 ms once per window, which was most of the
# sandbox pull's p99 with two workers (bench/pull_live.py).
_POLL_SECONDS = 0.02
_SAFETY_POLL_SECONDS = 0.5
FETCH_TABLES = frozenset({"vehicle_fetches"})
# In-process outcomes kept (LRU by insertion; one per vehicle and property set).
_MAX_OUTCOMES = 100_000

Key = tuple[str, str, str]  # environment, vin, digest of the property set


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    fetched_at_us: int
    status: int  # 200: the source answered; otherwise the failure's status
    detail: str = ""
    title: str | None = None

    def raise_failure(self) -> None:
        if self.status != 200:
            raise ApiError(self.status, self.detail, title=self.title)

    @classmethod
    def of(cls, fetched_at_us: int, error: ApiError | None) -> FetchOutcome:
        if error is None:
            return cls(fetched_at_us, 200)
        return cls(fetched_at_us, error.status, error.detail, error.title)


@lru_cache(maxsize=4096)
def properties_digest(properties: frozenset[str]) -> str:
    # Cached: sorting and hashing ~100 names cost 5 % of a sandbox pull, and the sets
    # repeat (one per grant or application; a frozenset caches its own hash).
    return hashlib.blake2b("\n".join(sorted(properties)).encode(), digest_size=8).hexdigest()


class FreshnessWindows:
    """The fetch outcomes of one database's vehicles, shared by the pulls of a process."""

    def __init__(self, database: Database, clock: Clock) -> None:
        self.database = database
        self.clock = clock
        self.outcomes: dict[Key, FetchOutcome] = {}
        self.flights: dict[Key, asyncio.Future[FetchOutcome]] = {}

    async def outcome(
        self,
        *,
        environment: str,
        vin: str,
        properties: frozenset[str],
        max_age_seconds: float,
        timeout_seconds: float,
        fetch: Callable[[], Awaitable[None]],
    ) -> FetchOutcome:
        """The outcome of the fetch that stands for now: a recent one, the one in
        flight, or a new one made by calling `fetch` (which raises ApiError on failure)."""
        max_age_us = int(max_age_seconds * 1_000_000)
        if max_age_us <= 0:
            # No window: every pull asks the source itself.
            return await self._fetch_now(fetch)
        key = (environment, vin, properties_digest(properties))
        known = self.outcomes.get(key)
        if known is not None and self.clock.now_us() - known.fetched_at_us < max_age_us:
            return known
        flight = self.flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(
                self._settle(key, max_age_us, int(timeout_seconds * 1_000_000), fetch)
            )
            self.flights[key] = flight
            flight.add_done_callback(lambda _: self.flights.pop(key, None))
        # shield: one caller giving up (its request cancelled) does not cancel the others'.
        return await asyncio.shield(flight)

    def known(
        self, *, environment: str, vin: str, properties: frozenset[str], max_age_seconds: float
    ) -> FetchOutcome | None:
        """The outcome `outcome` would answer at once (one of this window, known in this
        process), or None when it would fetch or wait: then no data changed meanwhile."""
        max_age_us = int(max_age_seconds * 1_000_000)
        if max_age_us <= 0:
            return None
        known = self.outcomes.get((environment, vin, properties_digest(properties)))
        if known is not None and self.clock.now_us() - known.fetched_at_us < max_age_us:
            return known
        return None

    def forget(self, environment: str, vin: str) -> None:
        """This process's outcomes of `vin` are void (the emulated car changed)."""
        for key in [k for k in self.outcomes if k[0] == environment and k[1] == vin]:
            del self.outcomes[key]

    async def _fetch_now(self, fetch: Callable[[], Awaitable[None]]) -> FetchOutcome:
        started = self.clock.now_us()
        try:
            await fetch()
        except ApiError as error:
            return FetchOutcome.of(started, error)
        return FetchOutcome.of(started, None)

    async def _settle(
        self,
        key: Key,
        max_age_us: int,
        timeout_us: int,
        fetch: Callable[[], Awaitable[None]],
    ) -> FetchOutcome:
        committed = asyncio.Event()
        stop_hearing = self.database.on_commit(FETCH_TABLES, committed.set)
        try:
            outcome = await self._claim_or_wait(key, max_age_us, timeout_us, fetch, committed)
        finally:
            stop_hearing()
        self._remember(key, outcome)
        return outcome

    async def _claim_or_wait(
        self,
        key: Key,
        max_age_us: int,
        timeout_us: int,
        fetch: Callable[[], Awaitable[None]],
        committed: asyncio.Event,
    ) -> FetchOutcome:
        """Claim the fetch and make it, or wait for the claimant's outcome; `committed`
        is set by commits to `vehicle_fetches`."""
        environment, vin, digest = key
        # Waiting for another process is bounded in real time, whatever the app's clock.
        deadline = time.monotonic() + (timeout_us + 2 * _LEASE_MARGIN_US) / 1_000_000
        while True:
            # Cleared before looking: a commit from here on ends the wait below.
            committed.clear()
            now = self.clock.now_us()
            claimed = await repository.claim_fetch(
                self.database,
                environment=environment,
                vin=vin,
                properties=digest,
                now_us=now,
                stale_before_us=now - max_age_us,
                lease_until_us=now + timeout_us + _LEASE_MARGIN_US,
            )
            if claimed:
                return await self._fetch(key, now, fetch)
            row = await repository.get_fetch_outcome(
                self.database, environment=environment, vin=vin, properties=digest
            )
            if row is not None and now - row["fetched_at"] < max_age_us:
                return FetchOutcome(row["fetched_at"], row["status"], row["detail"], row["title"])
            if time.monotonic() >= deadline:
                raise ApiError(
                    504,
                    "the carmaker did not answer in time (fetch by another process)",
                    title="Gateway Timeout",
                )
            # Another process is fetching: its outcome will stand for this pull too.
            heard = self.database.sees_other_processes
            await wait_for(committed, _SAFETY_POLL_SECONDS if heard else _POLL_SECONDS)

    async def _fetch(
        self, key: Key, started_us: int, fetch: Callable[[], Awaitable[None]]
    ) -> FetchOutcome:
        environment, vin, digest = key
        try:
            outcome = await self._fetch_now(fetch)
        except BaseException:
            # Not an answer of the source (a bug, a cancellation): nothing stands, the
            # lease is given back so that the next pull asks again at once.
            await repository.release_fetch(
                self.database, environment=environment, vin=vin, properties=digest
            )
            raise
        await repository.record_fetch(
            self.database,
            environment=environment,
            vin=vin,
            properties=digest,
            fetched_at_us=started_us,
            status=outcome.status,
            detail=outcome.detail,
            title=outcome.title,
        )
        return FetchOutcome(started_us, outcome.status, outcome.detail, outcome.title)

    def _remember(self, key: Key, outcome: FetchOutcome) -> None:
        if len(self.outcomes) >= _MAX_OUTCOMES:
            self.outcomes.pop(next(iter(self.outcomes)))
        self.outcomes[key] = outcome


class FreshnessParts(Protocol):
    """The part the pull and the sandbox's behaviour changes take (autoport.state.Parts;
    mypy checks it has it): one set of windows per app, over its one database."""

    @property
    def freshness(self) -> FreshnessWindows: ...


def windows_of(state: AppState) -> FreshnessWindows:
    parts: FreshnessParts = parts_of(state)
    return parts.freshness


async def forget(
    conn: Connection, windows: FreshnessWindows | None, *, environment: str, vin: str
) -> None:
    """The next pull of `vin` asks its data source again (the emulated car's behaviour
    changed): the rows, inside the caller's transaction, and the outcomes `windows` (this
    app's, one per app: autoport.state) keeps; None where the caller keeps none (a CLI).
    Other processes keep theirs until their window ends."""
    await repository.delete_fetches(conn, environment=environment, vin=vin)
    if windows is not None:
        windows.forget(environment, vin)
