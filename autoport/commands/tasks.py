"""The command worker: sends accepted commands to the carmaker, at most once.

Safe with many processes: a command is claimed by moving it from `pending` to `sent` in
its own committed transaction (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: the single
writer), and only then is the connector called. A command found in `sent` is never sent
again, by anyone: if its process died (kill -9) before the answer was recorded, the
sweep marks it `timed_out` once its deadline has passed; the vehicle may or may not have
obeyed, and the application decides what to do (the state arrives through ingestion).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import structlog

from autoport.brands.base import CommandOutcome, CommandRequest
from autoport.brands.registry import registry_of
from autoport.commands import repository
from autoport.commands.schemas import PENDING, SENT, CommandRow
from autoport.commands.service import emit, hub_of
from autoport.kit.clock import MICROS
from autoport.kit.errors import ApiError
from autoport.kit.state import AppState

log = structlog.get_logger("autoport.commands")

# A sent command is swept this long after its deadline: the worker that holds it answers
# first (its connector call is bounded by the deadline).
SWEEP_GRACE_SECONDS = 2.0
SWEEP_INTERVAL_SECONDS = 1.0

LOST = (
    "no answer was recorded before the deadline (the carmaker did not answer, or autoport "
    "stopped while the command was with it); it is not sent again"
)
NOT_SENT = "the command could not be sent before its deadline; it was never sent"


async def _finish(
    state: AppState, row: CommandRow, outcome: CommandOutcome, expected: tuple[str, ...]
) -> CommandRow | None:
    now = state.clock.now_us()
    reason = None if outcome.status == "executed" else (outcome.reason or "unknown")
    async with state.database.transaction() as conn:
        done = await repository.finish(
            conn,
            command_id=row.id,
            status=outcome.status,
            reason=reason,
            description=None if reason is None else outcome.description,
            now_us=now,
            expected=expected,
        )
        if done is not None:
            await emit(conn, done, now)
    if done is not None:
        hub_of(state).changed(row.id)
    return done


async def execute(state: AppState, row: CommandRow) -> CommandRow | None:
    """Call the connector once for a command already committed as `sent`."""
    request = CommandRequest(
        environment=row.environment,
        command_id=row.id,
        vin=row.vin,
        brand=row.brand,
        capability=row.capability,
        command=row.command,
        arguments=row.arguments,
    )
    left = (row.deadline_at - state.clock.now_us()) / MICROS
    try:
        connector = registry_of(state).connector_for(row.environment, row.brand)
        async with asyncio.timeout(max(left, 0.0)):
            outcome = await connector.execute_command(request)
    except TimeoutError:
        outcome = CommandOutcome(
            "timed_out", "execution_timeout", "the carmaker did not answer before the deadline"
        )
    except ApiError as error:
        outcome = CommandOutcome("failed", "oem_error", error.detail)
    except Exception as error:
        log.exception("connector failed executing a command", command_id=row.id)
        # It may have reached the vehicle: not a plain failure.
        outcome = CommandOutcome("timed_out", "unknown", f"the connector failed: {error}")
    done = await _finish(state, row, outcome, (SENT,))
    if done is None:
        log.warning("command answer after the sweep; kept the sweep's", command_id=row.id)
    return done


async def claim(state: AppState, worker_id: str, limit: int) -> list[CommandRow]:
    now = state.clock.now_us()
    async with state.database.transaction() as conn:
        rows = await repository.claim_pending(conn, worker_id=worker_id, now_us=now, limit=limit)
        for row in rows:
            await emit(conn, row, now)
    for row in rows:
        hub_of(state).changed(row.id)
    return rows


async def sweep(state: AppState, *, limit: int = 500) -> int:
    """Time out commands past their deadline (never sending them). Returns how many."""
    now = state.clock.now_us()
    overdue = await repository.overdue(
        state.database.reader,
        now_us=now,
        grace_us=int(SWEEP_GRACE_SECONDS * MICROS),
        limit=limit,
    )
    swept = 0
    for row in overdue:
        text = LOST if row.status == SENT else NOT_SENT
        done = await _finish(
            state, row, CommandOutcome("timed_out", "execution_timeout", text), (PENDING, SENT)
        )
        swept += done is not None
    if swept:
        log.warning("commands timed out by the sweep", count=swept)
    return swept


async def run_loop(state: AppState, worker_id: str, stop: asyncio.Event) -> None:
    settings = state.settings
    hub = hub_of(state)
    running: set[asyncio.Task[CommandRow | None]] = set()
    loop = asyncio.get_running_loop()
    next_sweep = 0.0
    while not stop.is_set():
        hub.work.clear()
        try:
            if loop.time() >= next_sweep:
                await sweep(state)
                next_sweep = loop.time() + SWEEP_INTERVAL_SECONDS
            room = settings.vehicle_command_concurrency - len(running)
            rows = await claim(state, worker_id, room) if room > 0 else []
        except Exception:
            log.exception("command worker round failed")
            rows = []
            await asyncio.sleep(settings.vehicle_command_poll_seconds)
        for row in rows:
            task = asyncio.create_task(execute(state, row))
            running.add(task)
            task.add_done_callback(running.discard)
            # Freed room means more may be claimed.
            task.add_done_callback(lambda _: hub.work.set())
        if rows and len(rows) == room:
            continue  # more may be waiting
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(hub.work.wait(), timeout=settings.vehicle_command_poll_seconds)
    if running:
        # Commands already sent get their answer recorded if it comes soon; the rest are
        # timed_out by the sweep (never sent again).
        await asyncio.wait(running, timeout=STOP_GRACE_SECONDS)


STOP_GRACE_SECONDS = 5.0


@contextlib.asynccontextmanager
async def command_worker(state: AppState) -> AsyncIterator[None]:
    worker_id = f"commands-{uuid.uuid4()}"
    stop = asyncio.Event()
    task = asyncio.create_task(run_loop(state, worker_id, stop), name="autoport-commands")
    try:
        yield
    finally:
        # Stopped by a flag, not by cancelling: a cancellation could land inside a
        # database call (and an execute must not be cut between call and record).
        stop.set()
        hub_of(state).work.set()
        try:
            await asyncio.wait_for(task, timeout=STOP_GRACE_SECONDS + 5.0)
        except TimeoutError:
            log.warning("command worker did not stop in time")
