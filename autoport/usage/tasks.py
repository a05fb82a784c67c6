"""Background work: adding this process's in-memory request counts (autoport.kit.usage)
to `usage_daily`, every FLUSH_SECONDS and once more when the process stops."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog

from autoport.kit.state import AppState
from autoport.kit.usage import UsageCounts, day_text
from autoport.usage import repository

log = structlog.get_logger("autoport.usage")

# The usage page lags the requests by at most this much (plus a page load).
FLUSH_SECONDS = 5.0


async def flush_usage(state: AppState) -> int:
    """Write the counts gathered since the last flush (one upsert per application and
    day); on failure they are kept for the next flush. Returns the rows written."""
    taken = state.part(UsageCounts).take()
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
        state.part(UsageCounts).give_back(taken)
        raise
    return len(rows)


@contextlib.asynccontextmanager
async def usage_flusher(state: AppState) -> AsyncIterator[None]:
    async def loop() -> None:
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            try:
                await flush_usage(state)
            except Exception:
                log.exception("usage flush failed; the counts are kept for the next one")

    task = asyncio.create_task(loop(), name="usage-flusher")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        try:
            await flush_usage(state)
        except Exception:
            log.exception("usage flush at shutdown failed; these counts are lost")
