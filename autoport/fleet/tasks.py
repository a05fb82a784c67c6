"""The fleet worker: drives pending, revoking and canceling vehicles to their end by
asking each brand's connector.

Safe in any number of processes: a vehicle is claimed (its `next_check_at` pushed to the
end of a lease, FOR UPDATE SKIP LOCKED on PostgreSQL) before its carmaker is asked, and
the answer is applied with an UPDATE conditional on the status the vehicle was claimed
in. A vehicle is thus looked at by one worker at a time, and even a worker whose lease
ran out cannot apply a transition twice or over a DELETE that came in meanwhile.
The carmaker is asked outside any transaction (never hold the writer across network I/O).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import structlog

from autoport.brands.base import (
    ClearanceDecision,
    ClearanceOutcome,
    ClearanceRequest,
    RemovalDecision,
)
from autoport.brands.registry import BrandRegistry, registry_of
from autoport.fleet import repository
from autoport.fleet.repository import Claimed
from autoport.fleet.service import transition
from autoport.fleet.states import Status, Trigger
from autoport.kit.clock import MICROS, Clock
from autoport.kit.db import Database
from autoport.kit.state import AppState

log = structlog.get_logger("autoport.fleet")

# A connector that hangs must not hold a vehicle's lease forever.
CONNECTOR_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    batch_size: int = 100
    lease_seconds: float = 60.0
    # When the carmaker does not say when to ask again.
    poll_seconds: float = 5.0


async def process_due(
    db: Database,
    registry: BrandRegistry,
    *,
    clock: Clock,
    config: WorkerConfig = WorkerConfig(),
) -> int:
    """Claim the vehicles due now and act on each; returns the number of transitions."""
    now = clock.now_us()
    claimed = await repository.claim_due(
        db,
        now_us=now,
        lease_until_us=now + int(config.lease_seconds * MICROS),
        limit=config.batch_size,
    )
    done = 0
    for item in claimed:
        try:
            done += await _advance(db, registry, item, clock=clock, config=config)
        except Exception:
            # The vehicle stays claimed until its lease ends, then is tried again; one
            # misbehaving connector must not stop the others' vehicles.
            log.exception(
                "fleet vehicle not advanced",
                vin=item.key.vin,
                brand=item.brand,
                status=str(item.status),
            )
    return done


async def _advance(
    db: Database, registry: BrandRegistry, item: Claimed, *, clock: Clock, config: WorkerConfig
) -> int:
    connector = registry.connector_for(item.key.environment, item.brand)
    request = ClearanceRequest(
        environment=item.key.environment,
        application_id=item.key.application_id,
        vin=item.key.vin,
        brand=item.brand,
        since_us=item.since_us,
        now_us=clock.now_us(),
    )
    new: Status | None = None
    reason: str | None = None
    check_again: int | None = None
    async with asyncio.timeout(CONNECTOR_TIMEOUT_SECONDS):
        if item.status is Status.pending:
            decision: ClearanceDecision = await connector.clearance(request)
            reason = decision.reason
            check_again = decision.check_again_at_us
            if decision.outcome is not ClearanceOutcome.pending:
                new = Status(str(decision.outcome))
        else:
            removal: RemovalDecision = await (
                connector.revoke_clearance(request)
                if item.status is Status.revoking
                else connector.cancel_clearance(request)
            )
            reason = removal.reason
            check_again = removal.check_again_at_us
            if removal.done:
                new = Status.revoked if item.status is Status.revoking else Status.canceled
    now = clock.now_us()
    async with db.transaction() as conn:
        if new is None:
            at = now + int(config.poll_seconds * MICROS) if check_again is None else check_again
            await repository.reschedule(conn, item.key, expected=item.status, at_us=at)
            return 0
        vehicle = await repository.get(conn, item.key, for_update=True)
        if vehicle is None or vehicle.status is not item.status:
            return 0  # changed meanwhile (a DELETE, another worker after a lost lease)
        changed = await transition(conn, vehicle, new, Trigger.carmaker, now_us=now, reason=reason)
    return 1 if changed else 0


@contextlib.asynccontextmanager
async def fleet_worker(state: AppState) -> AsyncIterator[None]:
    """Background task registered in autoport.app: runs until the app stops."""
    settings = state.settings
    config = WorkerConfig(
        batch_size=settings.fleet_worker_batch_size,
        lease_seconds=settings.fleet_worker_lease_seconds,
        poll_seconds=max(settings.fleet_worker_interval_seconds, 1.0),
    )
    worker_id = uuid.uuid4().hex[:12]
    registry = registry_of(state)

    async def loop() -> None:
        while True:
            try:
                done = await process_due(state.database, registry, clock=state.clock, config=config)
            except Exception:
                # The database may be briefly away (restart, failover): keep running.
                log.exception("fleet worker round failed", worker=worker_id)
                done = 0
            if done < config.batch_size:
                await asyncio.sleep(settings.fleet_worker_interval_seconds)

    task = asyncio.create_task(loop(), name=f"fleet-worker-{worker_id}")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
