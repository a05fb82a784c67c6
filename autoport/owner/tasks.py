"""Background work of the owner portal: forgetting expired owner sessions. (Its counted
reads are written by the app's one usage flusher: autoport.usage.tasks.)"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import structlog

from autoport.kit.db import Connection
from autoport.kit.periodic import every
from autoport.kit.state import AppState
from autoport.owner import repository

log = structlog.get_logger("autoport.owner")

PURGE_EVERY_SECONDS = 300.0


async def purge_expired_sessions(conn: Connection, *, now_us: int) -> int:
    return await repository.delete_expired_sessions(conn, before_us=now_us)


@contextlib.asynccontextmanager
async def session_purger(state: AppState) -> AsyncIterator[None]:
    """Forgets expired owner sessions every PURGE_EVERY_SECONDS."""

    async def purge() -> None:
        async with state.database.transaction() as conn:
            await purge_expired_sessions(conn, now_us=state.clock.now_us())

    async with every(
        PURGE_EVERY_SECONDS,
        purge,
        name="owner-session-purger",
        failure="purging owner sessions failed",
        wait_first=True,
        logger=log,
    ):
        yield
