"""The history worker: seals hot points into chunks, moves the old table's rows,
keeps partitions ahead, applies retention. Safe in any number of processes: a series
is sealed by the one worker that claimed it, and every write checks that what it
replaces is still there (autoport.history.service)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import structlog

from autoport.history import partitions, retention, service
from autoport.kit import periodic
from autoport.kit.clock import MICROS
from autoport.kit.state import AppState

log = structlog.get_logger("autoport.history")

# Points arriving within this long of each other may come out of order (a car's
# buffered readings); sealing leaves them in hot that long.
GRACE_US = 60 * MICROS


async def seal_round(state: AppState) -> int:
    settings = state.settings
    now = state.clock.now_us()
    await partitions.ensure(state.database, [now + day * partitions.DAY_US for day in range(3)])
    sealed = 0
    while True:
        points = await service.seal(
            state.database,
            now_us=now,
            seal_after_us=int(settings.history_seal_after_seconds * MICROS),
            grace_us=min(GRACE_US, int(settings.history_seal_after_seconds * MICROS)),
            target=settings.history_chunk_points,
        )
        sealed += points
        if not points:
            return sealed


@contextlib.asynccontextmanager
async def history_worker(state: AppState) -> AsyncIterator[None]:
    """Sealing every `history_seal_interval_seconds`, retention every
    `vehicle_data_history_prune_interval_seconds`."""

    async def seal() -> None:
        sealed = await seal_round(state)
        if sealed:
            log.info("history sealed", points=sealed)

    async def prune() -> None:
        deleted = await retention.prune(state)
        if deleted:
            log.info("history pruned", points=deleted)

    async with (
        periodic.every(
            lambda: state.settings.history_seal_interval_seconds,
            seal,
            name="history-sealer",
            failure="history sealing failed; retrying at the next interval",
            logger=log,
        ),
        periodic.every(
            lambda: state.settings.vehicle_data_history_prune_interval_seconds,
            prune,
            name="history-pruner",
            failure="history pruning failed; retrying at the next interval",
            logger=log,
        ),
    ):
        yield
