"""Housekeeping: tokens expired a day ago, old codes and assertion jtis are deleted now
and then, so the token table does not grow with every client_credentials call. Safe in many
replicas at once (plain DELETEs of rows nobody can use)."""

from __future__ import annotations

import contextlib

import structlog

from autoport.kit import periodic
from autoport.kit.clock import MICROS
from autoport.kit.state import AppState
from autoport.oauth import repository

log = structlog.get_logger("autoport.oauth")

INTERVAL_SECONDS = 300.0
KEEP_CODES_SECONDS = 86_400
# How long an expired token's row stays: meanwhile it is refused as "expired".
KEEP_EXPIRED_TOKENS_SECONDS = 86_400


async def sweep(state: AppState) -> int:
    async with state.database.transaction() as conn:
        return await repository.delete_expired(
            conn,
            now_us=state.clock.now_us(),
            keep_codes_us=KEEP_CODES_SECONDS * MICROS,
            keep_tokens_us=KEEP_EXPIRED_TOKENS_SECONDS * MICROS,
        )


def housekeeping(state: AppState) -> contextlib.AbstractAsyncContextManager[None]:
    async def round_() -> None:
        removed = await sweep(state)
        if removed:
            log.info("oauth_housekeeping", removed=removed)

    return periodic.every(
        INTERVAL_SECONDS,
        round_,
        name="oauth-housekeeping",
        failure="oauth_housekeeping_failed",
        wait_first=True,
        logger=log,
    )
