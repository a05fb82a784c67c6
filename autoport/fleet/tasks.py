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
from autoport.brands.sandbox import NOT_ELIGIBLE
from autoport.fleet import repository
from autoport.fleet.repository import Claimed
from autoport.fleet.service import transition
from autoport.fleet.states import Status, Trigger
from autoport.kit import periodic
from autoport.kit.clock import MICROS, Clock
from autoport.kit.db import Connection, Database
from autoport.kit.state import AppState
from autoport.vehicles.access import another_accounts_car, sandbox_only_problem

log = structlog.get_logger("autoport.fleet")

# A connector that hangs must not hold a vehicle's lease forever.
CONNECTOR_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    batch_size: int = 100
    lease_seconds: float = 60.0
    # When the carmaker does not say when to ask again.
    poll_seconds: float = 5.0


# How many carmaker calls one worker has in flight at once.
CONCURRENT_CALLS = 16


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the carmaker said about one claimed vehicle: a new status, or ask again
    (`awaiting_decision`: not until the data provider or the operator decides)."""

    new: Status | None
    reason: str | None
    check_again_at_us: int | None
    awaiting_decision: bool = False


async def process_due(
    db: Database,
    registry: BrandRegistry,
    *,
    clock: Clock,
    config: WorkerConfig = WorkerConfig(),
) -> int:
    """Claim the vehicles due now, ask their carmakers (concurrently, outside any
    transaction), then apply every answer in one transaction. Returns the number of
    transitions made."""
    now = clock.now_us()
    claimed = await repository.claim_due(
        db,
        now_us=now,
        lease_until_us=now + int(config.lease_seconds * MICROS),
        limit=config.batch_size,
    )
    if not claimed:
        return 0
    limit = asyncio.Semaphore(CONCURRENT_CALLS)

    async def ask(item: Claimed) -> Outcome | None:
        async with limit:
            try:
                return await _ask_carmaker(db, registry, item, clock=clock)
            except Exception:
                # The vehicle stays claimed until its lease ends, then is tried again; one
                # misbehaving connector must not stop the other vehicles.
                log.exception(
                    "carmaker did not answer about a fleet vehicle",
                    vin=item.key.vin,
                    brand=item.brand,
                    status=str(item.status),
                )
                return None

    outcomes = await asyncio.gather(*(ask(item) for item in claimed))
    done = 0
    async with db.transaction() as conn:
        for item, outcome in zip(claimed, outcomes, strict=True):
            if outcome is not None:
                done += await _apply(conn, item, outcome, now_us=clock.now_us(), config=config)
    return done


async def _ask_carmaker(
    db: Database, registry: BrandRegistry, item: Claimed, *, clock: Clock
) -> Outcome:
    problem = sandbox_only_problem(item.brand, item.key.environment)
    if problem is not None:
        # Requested before production refused the sandbox brand: the emulated carmaker is
        # never asked there; the request ends (a removal is simply done).
        endings = {Status.pending: Status.rejected, Status.revoking: Status.revoked}
        return Outcome(endings.get(item.status, Status.canceled), problem, None)
    if item.status is Status.pending and await another_accounts_car(
        db.reader,
        environment=item.key.environment,
        application_id=item.key.application_id,
        vin=item.key.vin,
    ):
        # A console user's sandbox car is its account's alone: the emulated carmaker
        # refuses it to other accounts' applications as it refuses an ineligible car.
        return Outcome(Status.rejected, NOT_ELIGIBLE, None)
    connector = registry.connector_for(item.key.environment, item.brand)
    if item.status is Status.pending and not connector.decides_clearances():
        return await _provider_outcome(db, item)
    request = ClearanceRequest(
        environment=item.key.environment,
        application_id=item.key.application_id,
        vin=item.key.vin,
        brand=item.brand,
        since_us=item.since_us,
        now_us=clock.now_us(),
    )
    async with asyncio.timeout(CONNECTOR_TIMEOUT_SECONDS):
        if item.status is Status.pending:
            decision: ClearanceDecision = await connector.clearance(request)
            new = (
                None
                if decision.outcome is ClearanceOutcome.pending
                else Status(str(decision.outcome))
            )
            return Outcome(new, decision.reason, decision.check_again_at_us)
        removal: RemovalDecision = await (
            connector.revoke_clearance(request)
            if item.status is Status.revoking
            else connector.cancel_clearance(request)
        )
        ended = Status.revoked if item.status is Status.revoking else Status.canceled
        return Outcome(ended if removal.done else None, removal.reason, removal.check_again_at_us)


async def _provider_outcome(db: Database, item: Claimed) -> Outcome:
    """A push-fed brand: its data provider decides. Only a provider's explicit standing
    approval (`auto_approve_clearances`, off by default) approves here; otherwise the
    vehicle waits, not polled, for POST .../approve or .../reject."""
    provider = await repository.get_auto_approving_provider_name(
        db.reader, environment=item.key.environment, brand=item.brand
    )
    if provider is None:
        return Outcome(None, None, None, awaiting_decision=True)
    return Outcome(
        Status.approved,
        f"approved by the data provider {provider!r} (auto_approve_clearances)",
        None,
    )


async def _apply(
    conn: Connection, item: Claimed, outcome: Outcome, *, now_us: int, config: WorkerConfig
) -> int:
    if outcome.new is None:
        at = outcome.check_again_at_us
        if at is None and not outcome.awaiting_decision:
            at = now_us + int(config.poll_seconds * MICROS)
        await repository.reschedule(conn, item.key, expected=item.status, at_us=at)
        return 0
    vehicle = await repository.get(conn, item.key, for_update=True)
    if vehicle is None or vehicle.status is not item.status:
        return 0  # changed meanwhile (a DELETE, another worker after a lost lease)
    changed = await transition(
        conn, vehicle, outcome.new, Trigger.carmaker, now_us=now_us, reason=outcome.reason
    )
    return 1 if changed else 0


async def _advance(
    db: Database, registry: BrandRegistry, item: Claimed, *, clock: Clock, config: WorkerConfig
) -> int:
    """One claimed vehicle on its own: ask, then apply in a transaction of its own."""
    outcome = await _ask_carmaker(db, registry, item, clock=clock)
    async with db.transaction() as conn:
        return await _apply(conn, item, outcome, now_us=clock.now_us(), config=config)


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

    async def round_() -> bool:
        done = await process_due(state.database, registry, clock=state.clock, config=config)
        return done >= config.batch_size  # a full batch: more may be due at once

    async with periodic.every(
        settings.fleet_worker_interval_seconds,
        round_,
        name=f"fleet-worker-{worker_id}",
        failure="fleet worker round failed",
        logger=log,
    ):
        yield
