"""Background work of the owner portal: writing counted reads (off the request path)
and forgetting expired owner sessions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog

from autoport.kit.db import Connection
from autoport.kit.state import AppState
from autoport.owner import reads, repository

log = structlog.get_logger("autoport.owner")

PURGE_EVERY_SECONDS = 300.0


async def purge_expired_sessions(conn: Connection, *, now_us: int) -> int:
    return await repository.delete_expired_sessions(conn, before_us=now_us)


async def _flush_forever(state: AppState) -> None:
    since_purge = 0.0
    interval = state.settings.owner_read_flush_seconds
    while True:
        await asyncio.sleep(interval)
        try:
            await reads.flush(state)
        except Exception:
            # Kept in memory (give_back): the next round writes them.
            log.exception("writing read counts failed")
        since_purge += interval
        if since_purge >= PURGE_EVERY_SECONDS:
            since_purge = 0.0
            try:
                async with state.database.transaction() as conn:
                    await purge_expired_sessions(conn, now_us=state.clock.now_us())
            except Exception:
                log.exception("purging owner sessions failed")


@contextlib.asynccontextmanager
async def read_flusher(state: AppState) -> AsyncIterator[None]:
    """Flushes read counts every `owner_read_flush_seconds`, and once more on the way
    out (a clean shutdown loses none)."""
    task = asyncio.create_task(_flush_forever(state), name="owner-read-flusher")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        try:
            await reads.flush(state)
        except Exception:
            log.exception("writing read counts at shutdown failed")
