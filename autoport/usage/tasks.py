"""Background work: the one flusher of this process's daily counter (autoport.kit.usage):
the request counts to `usage_daily`, the read counts through the writer the app wires
in (`write_reads`: the owner portal's), every few seconds and once more when the process
stops."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import structlog

from autoport.kit.db import Database
from autoport.kit.state import AppState
from autoport.kit.usage import UsageCounts, day_text, usage_of
from autoport.usage import repository

log = structlog.get_logger("autoport.usage")

# The usage page lags the requests by at most this much (plus a page load); the reads
# are written every `owner_read_flush_seconds` (when shorter, the requests are too).
FLUSH_SECONDS = 5.0

# Writes the counted reads (autoport.owner.reads.flush_reads); returns rows touched.
ReadWriter = Callable[[Database, UsageCounts], Awaitable[int]]


async def flush_usage(state: AppState) -> int:
    """Write the counts gathered since the last flush (one upsert per application and
    day); on failure they are kept for the next flush. Returns the rows written."""
    taken = usage_of(state).take()
    if not taken:
        return 0
    rows = [
        {
            "environment": environment,
            "application_id": application_id,
            "day": day_text(day),
            "requests": requests,
            "rate_limited": limited,
        }
        for (environment, application_id, day), (requests, limited) in taken.items()
    ]
    try:
        async with state.database.transaction() as conn:
            await repository.add_counts(conn, rows)
    except BaseException:
        usage_of(state).give_back(taken)
        raise
    return len(rows)


@contextlib.asynccontextmanager
async def usage_flusher(state: AppState, write_reads: ReadWriter) -> AsyncIterator[None]:
    counts = usage_of(state)
    interval = min(FLUSH_SECONDS, state.settings.owner_read_flush_seconds)

    async def flush_all(when: str) -> None:
        # Each kind apart: a failed one keeps its counts (give back) and the other's
        # are still written.
        try:
            await flush_usage(state)
        except Exception:
            log.exception(f"usage flush{when} failed; the counts are kept for the next one")
        try:
            await write_reads(state.database, counts)
        except Exception:
            log.exception(f"writing read counts{when} failed")

    async def loop() -> None:
        while True:
            await asyncio.sleep(interval)
            await flush_all("")

    task = asyncio.create_task(loop(), name="usage-flusher")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await flush_all(" at shutdown")
