"""Read results kept while the tables they come from are unchanged (one database's
`data_version`): the pull's reads of vehicle rows, clearances and sandbox cars."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from autoport.kit.db import Database
from autoport.kit.state import AppState, parts_of

_MISSING = object()


class VersionedReads:
    """Read results of one database as read at one `data_version` of the tables they
    come from: while nothing is committed to those, a pull skips the query. Any such
    commit, by this process or another, changes the version and empties them, so a
    revoked clearance or a new document is seen when the bearer cache sees a revoked
    token (autoport.oauth.bearer). Without a version (PostgreSQL's listener down) every
    read queries. One per app (autoport.state), which has one database."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        # tables -> (the version the entries were read at, the entries)
        self.spaces: dict[frozenset[str], tuple[int, dict[tuple[str, ...], Any]]] = {}
        # (tables, key) -> (version, the read under way): a commit to `tables` empties
        # the entries of every key at once, and the pulls in flight then (dozens at 64
        # connections) share one read of each key instead of one each.
        self.flights: dict[tuple[frozenset[str], tuple[str, ...]], tuple[int, Any]] = {}

    async def get(
        self,
        database: Database,
        tables: frozenset[str],
        key: tuple[str, ...],
        load: Callable[[], Awaitable[Any]],
    ) -> Any:
        version = database.data_version(tables)
        if version is None:
            return await load()
        space = self.spaces.get(tables)
        if space is None or space[0] != version:
            space = self.spaces[tables] = (version, {})
        entries = space[1]
        found = entries.get(key, _MISSING)
        if found is not _MISSING:
            return found
        flight_key = (tables, key)
        while (flight := self.flights.get(flight_key)) is not None and flight[0] == version:
            try:
                return await asyncio.shield(flight[1])
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not flight[1].cancelled() or (task is not None and task.cancelling()):
                    raise  # this pull itself is being cancelled
                # The pull that was reading was cancelled (its client went away): the
                # first of its followers reads now, the others follow it.
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.flights[flight_key] = (version, future)
        try:
            found = await load()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as error:
            future.set_exception(error)  # the same answer for the pulls that waited
            future.exception()  # retrieved: no "never retrieved" warning without them
            raise
        finally:
            if self.flights.get(flight_key, (0, None))[1] is future:
                del self.flights[flight_key]
        future.set_result(found)
        if version == database.data_version(tables):  # nothing committed meanwhile
            if len(entries) >= self.size:
                entries.clear()
            entries[key] = found
        return found


class VersionedParts(Protocol):
    """The part the pull's cached reads take (autoport.state.Parts; mypy checks it)."""

    @property
    def versioned_reads(self) -> VersionedReads: ...


def versioned_of(state: AppState) -> VersionedReads:
    """The app's versioned reads, built once by the app layer."""
    parts: VersionedParts = parts_of(state)
    return parts.versioned_reads
