"""Background work: pruning the data-point history past its retention."""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from autoport.kit import periodic
from autoport.kit.clock import MICROS
from autoport.kit.state import AppState
from autoport.vehicle_data import repository

log = structlog.get_logger("autoport.vehicle_data.tasks")

PRUNE_BATCH = 5000
_DAY_US = 86_400 * MICROS


async def prune_history(state: AppState) -> int:
    """Delete history rows received longer ago than the retention; returns how many.

    In batches, each its own short transaction, so that on SQLite ingestion is never
    held up for long; safe to run in several processes at once."""
    days = state.settings.vehicle_data_history_retention_days
    if days == 0:
        return 0
    cutoff = state.clock.now_us() - days * _DAY_US
    total = 0
    while True:
        async with state.database.transaction() as conn:
            deleted = await repository.prune_history(conn, cutoff_us=cutoff, batch=PRUNE_BATCH)
        total += deleted
        if deleted < PRUNE_BATCH:
            return total
        await asyncio.sleep(0)


def history_pruner(state: AppState) -> contextlib.AbstractAsyncContextManager[None]:
    """Runs `prune_history` every `vehicle_data_history_prune_interval_seconds`."""

    async def prune() -> None:
        deleted = await prune_history(state)
        if deleted:
            log.info("history pruned", rows=deleted)

    return periodic.every(
        lambda: state.settings.vehicle_data_history_prune_interval_seconds,
        prune,
        name="vehicle-data-history-pruner",
        failure="history pruning failed; retrying at the next interval",
        logger=log,
    )
