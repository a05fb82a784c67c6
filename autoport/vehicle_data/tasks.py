"""Background work: pruning the data-point history past its retention."""

from __future__ import annotations

import contextlib

import structlog

from autoport.kit import periodic
from autoport.kit.clock import MICROS
from autoport.kit.db import Connection
from autoport.kit.retention import prune_in_batches
from autoport.kit.state import AppState
from autoport.vehicle_data import repository

log = structlog.get_logger("autoport.vehicle_data.tasks")

_DAY_US = 86_400 * MICROS


async def prune_history(state: AppState) -> int:
    """Delete history rows received longer ago than their retention (per brand where
    `vehicle_data_history_retention_days_by_brand` says, else the default); returns
    how many."""
    settings = state.settings
    now = state.clock.now_us()
    by_brand = settings.vehicle_data_history_retention_days_by_brand
    total = 0
    for brand, days in sorted(by_brand.items()):
        if days == 0:
            continue  # kept forever

        async def of_brand(
            conn: Connection, batch: int, brand: str = brand, days: int = days
        ) -> int:
            return await repository.prune_history_of_brand(
                conn, brand=brand, cutoff_us=now - days * _DAY_US, batch=batch
            )

        total += await prune_in_batches(state, of_brand)
    days = settings.vehicle_data_history_retention_days
    if days == 0:
        return total
    others = sorted(by_brand)

    async def the_rest(conn: Connection, batch: int) -> int:
        return await repository.prune_history_except(
            conn, brands=others, cutoff_us=now - days * _DAY_US, batch=batch
        )

    return total + await prune_in_batches(state, the_rest)


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
