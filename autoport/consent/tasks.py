"""Background work of the consent flow: forget finished and abandoned sessions, and
vehicle-code counters that have nothing left to count.

Sessions hold nothing the grant needs once the owner decided (the grant is its own row),
so they are deleted, with their codes, an hour after they expired. Lockouts live apart
from sessions (consent_throttles), so they run their full time; a counter goes once its
window and its block both ended. Running in several processes at once is harmless: each
DELETE only removes what is due.
"""

from __future__ import annotations

import contextlib

import structlog

from autoport.consent import repository
from autoport.kit import periodic
from autoport.kit.db import Connection
from autoport.kit.state import AppState
from autoport.proof import service as proof

log = structlog.get_logger("autoport.consent")

PURGE_EVERY_SECONDS = 300.0
KEEP_EXPIRED_SECONDS = 3600


async def purge_expired_sessions(conn: Connection, *, now_us: int) -> int:
    """Delete sessions expired more than an hour ago (returns how many went), the
    ownership proof's codes expired as long ago and its spent counters."""
    await proof.purge(conn, now_us=now_us, keep_seconds=KEEP_EXPIRED_SECONDS)
    return await repository.delete_expired_sessions(
        conn, before_us=now_us - KEEP_EXPIRED_SECONDS * 1_000_000
    )


def session_purger(state: AppState) -> contextlib.AbstractAsyncContextManager[None]:
    async def purge() -> None:
        async with state.database.transaction() as conn:
            removed = await purge_expired_sessions(conn, now_us=state.clock.now_us())
        if removed:
            log.info("expired consent sessions purged", count=removed)

    return periodic.every(
        PURGE_EVERY_SECONDS,
        purge,
        name="consent-session-purger",
        failure="purging consent sessions failed",
        logger=log,
    )
