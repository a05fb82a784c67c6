"""The history worker: seals hot points into chunks, moves the old table's rows
(autoport.history.migration), keeps partitions ahead, applies retention. Safe in any
number of processes: a series is sealed by the one worker that claimed it, the old
table is moved by the one holding the lease, and every write checks that what it
replaces is still there (autoport.history.service)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

import structlog

from autoport.history import migration, partitions, retention, service
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


# The mover's rounds: batches for this long, then the round ends (a round with more to
# do starts again at once); a progress line in the log at most this often.
MOVE_ROUND_SECONDS = 2.0
MOVE_INTERVAL_SECONDS = 10.0
PROGRESS_LOG_SECONDS = 30.0


@contextlib.asynccontextmanager
async def history_worker(state: AppState) -> AsyncIterator[None]:
    """Sealing every `history_seal_interval_seconds`, retention every
    `vehicle_data_history_prune_interval_seconds`, and the move of the old table's rows
    while there are any (autoport.history.migration)."""
    mover = migration.Mover(
        state.database,
        target=state.settings.history_chunk_points,
        now_us=state.clock.now_us,
    )
    logged = 0.0

    async def seal() -> None:
        sealed = await seal_round(state)
        if sealed:
            log.info("history sealed", points=sealed)

    async def prune() -> None:
        deleted = await retention.prune(state)
        if deleted:
            log.info("history pruned", points=deleted)

    async def move() -> bool:
        nonlocal logged
        moving = mover.held is not None
        more = await migration.move_round(state.database, mover, seconds=MOVE_ROUND_SECONDS)
        clock = time.monotonic()
        finished = moving and mover.done
        if finished or (mover.held is not None and clock - logged >= PROGRESS_LOG_SECONDS):
            logged = clock
            progress = await migration.progress(state.database)
            log.info("history migration", **progress.to_json())
        return more

    try:
        async with (
            periodic.every(
                MOVE_INTERVAL_SECONDS,
                move,
                name="history-mover",
                failure="moving the old history failed; retrying at the next interval",
                logger=log,
            ),
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
    finally:
        with contextlib.suppress(Exception):  # else it runs out after LEASE_US
            await mover.release()
