"""Background work of the console: forget sessions that ended or expired (a day later,
so the audit log's sign-outs still find them while anyone looks). Sign-in counters live
in consent_throttles, which the consent purger already clears once spent. Running in
several processes at once is harmless: each DELETE only removes what is due.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog

from autoport.console import service
from autoport.kit.db import Database
from autoport.kit.state import AppState

log = structlog.get_logger("autoport.console")

PURGE_EVERY_SECONDS = 600.0
KEEP_SECONDS = 86_400


async def purge_sessions(db: Database, *, now_us: int) -> int:
    async with db.transaction() as conn:
        return await service.delete_finished_sessions(
            conn, before_us=now_us - KEEP_SECONDS * 1_000_000
        )


async def _purge_forever(state: AppState) -> None:
    while True:
        try:
            removed = await purge_sessions(state.database, now_us=state.clock.now_us())
            if removed:
                log.info("finished console sessions purged", count=removed)
        except Exception:
            # A busy or briefly unreachable database: try again next round.
            log.exception("purging console sessions failed")
        await asyncio.sleep(PURGE_EVERY_SECONDS)


@contextlib.asynccontextmanager
async def console_session_purger(state: AppState) -> AsyncIterator[None]:
    task = asyncio.create_task(_purge_forever(state), name="console-session-purger")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
