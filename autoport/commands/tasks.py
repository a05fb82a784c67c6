"""The command worker: sends accepted commands to the carmaker, at most once.

Safe with many processes: a command is claimed by moving it from `pending` to `sent` in
its own committed transaction (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: the single
writer), and only then is the connector called. A command found in `sent` is never sent
again, by anyone: if its process died (kill -9) before the answer was recorded, the
sweep marks it `timed_out` once its deadline has passed; the vehicle may or may not have
obeyed, and the application decides what to do (the state arrives through ingestion).

The answers of many commands are recorded together (`Finisher`): while one batch is
being written, the answers arriving meanwhile wait for the next, so under load one
transaction of a few statements records dozens of commands, and a lone command waits
for nothing but its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import structlog

from autoport.brands.base import CommandOutcome, CommandRequest
from autoport.brands.registry import registry_of
from autoport.commands import repository, service
from autoport.commands.schemas import PENDING, SENT, CommandRow
from autoport.commands.service import hub_of
from autoport.kit.clock import MICROS
from autoport.kit.errors import ApiError
from autoport.kit.periodic import wait_for
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
    state: AppState,
    results: list[tuple[CommandRow, CommandOutcome]],
    expected: tuple[str, ...],
) -> list[CommandRow]:
    """Record outcomes in one transaction; the commands that changed (the others were
    finished already, by the sweep)."""
    now = state.clock.now_us()
    async with state.database.transaction() as conn:
        done = await service.finish(conn, results, now_us=now, expected=expected)
    hub = hub_of(state)
    for row in done:
        hub.changed(row)
    return done


# Bounds one transaction of answers (the write lock is held while it is written).
MAX_BATCH = 256


class Finisher:
    """Records the answers of executed commands in batches (a group commit): the first
    answer starts a flush; answers arriving while it writes are taken by its next round.
    Each caller learns what became of its own command once its batch committed."""

    def __init__(self, state: AppState) -> None:
        self.state = state
        self.pending: list[tuple[CommandRow, CommandOutcome, asyncio.Future[bool]]] = []
        self.flushing: asyncio.Task[None] | None = None

    async def record(self, row: CommandRow, outcome: CommandOutcome) -> bool:
        """True when the answer was recorded; False when the command was finished
        otherwise (the sweep's timed_out stands)."""
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.pending.append((row, outcome, done))
        if self.flushing is None or self.flushing.done():
            self.flushing = asyncio.create_task(self._flush())
        return await done

    async def _flush(self) -> None:
        while self.pending:
            batch, self.pending = self.pending[:MAX_BATCH], self.pending[MAX_BATCH:]
            try:
                done = await _finish(
                    self.state, [(row, outcome) for row, outcome, _ in batch], (SENT,)
                )
            except Exception as error:
                # Nothing of the batch was recorded: each caller hears of it (the sweep
                # times the commands out after their deadline, never sending them again).
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            finished = {row.id for row in done}
            for row, _, future in batch:
                if not future.done():
                    future.set_result(row.id in finished)


async def call_connector(state: AppState, row: CommandRow) -> CommandOutcome:
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
            return await connector.execute_command(request)
    except TimeoutError:
        return CommandOutcome(
            "timed_out", "execution_timeout", "the carmaker did not answer before the deadline"
        )
    except ApiError as error:
        return CommandOutcome("failed", "oem_error", error.detail)
    except Exception as error:
        log.exception("connector failed executing a command", command_id=row.id)
        # It may have reached the vehicle: not a plain failure.
        return CommandOutcome("timed_out", "unknown", f"the connector failed: {error}")


async def execute(state: AppState, row: CommandRow) -> CommandRow | None:
    """Call the connector once for a command already committed as `sent` and record its
    answer alone; the finished command, None when the sweep had finished it."""
    outcome = await call_connector(state, row)
    done = await _finish(state, [(row, outcome)], (SENT,))
    if not done:
        log.warning("command answer after the sweep; kept the sweep's", command_id=row.id)
        return None
    return done[0]


async def execute_batched(state: AppState, finisher: Finisher, row: CommandRow) -> None:
    """`execute` as the worker runs it: the answer recorded with others (`Finisher`)."""
    outcome = await call_connector(state, row)
    if not await finisher.record(row, outcome):
        log.warning("command answer after the sweep; kept the sweep's", command_id=row.id)


async def take(state: AppState, worker_id: str, limit: int) -> service.Claimed:
    """Claim up to `limit` due commands: those to send now are committed as `sent`;
    those whose access was withdrawn since they were accepted, as `cancelled`
    (service.claim). Both are handed to this process's waiters."""
    now = state.clock.now_us()
    async with state.database.transaction() as conn:
        claimed = await service.claim(conn, worker_id=worker_id, now_us=now, limit=limit)
    hub = hub_of(state)
    for row in (*claimed.sent, *claimed.cancelled):
        hub.changed(row)
    if claimed.cancelled:
        log.info("commands cancelled: access withdrawn", count=len(claimed.cancelled))
    return claimed


async def claim(state: AppState, worker_id: str, limit: int) -> list[CommandRow]:
    """The commands to send now (see `take`)."""
    return (await take(state, worker_id, limit)).sent


async def sweep(state: AppState, *, limit: int = 500) -> int:
    """Time out commands past their deadline (never sending them). Returns how many."""
    now = state.clock.now_us()
    overdue = await repository.overdue(
        state.database.reader,
        now_us=now,
        grace_us=int(SWEEP_GRACE_SECONDS * MICROS),
        limit=limit,
    )
    if not overdue:
        return 0
    results = [
        (
            row,
            CommandOutcome(
                "timed_out", "execution_timeout", LOST if row.status == SENT else NOT_SENT
            ),
        )
        for row in overdue
    ]
    swept = len(await _finish(state, results, (PENDING, SENT)))
    if swept:
        log.warning("commands timed out by the sweep", count=swept)
    return swept


async def run_loop(state: AppState, worker_id: str, stop: asyncio.Event) -> None:
    """Claim when woken: by a command accepted in this process (at once), by a finished
    execution when every slot was taken, or by the poll (other processes' commands)."""
    settings = state.settings
    hub = hub_of(state)
    finisher = Finisher(state)
    running: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()
    next_sweep = 0.0
    full = False

    def freed(task: asyncio.Task[None]) -> None:
        running.discard(task)
        if full:
            hub.work.set()  # room again for what waits

    while not stop.is_set():
        hub.work.clear()
        try:
            if loop.time() >= next_sweep:
                await sweep(state)
                next_sweep = loop.time() + SWEEP_INTERVAL_SECONDS
            room = settings.vehicle_command_concurrency - len(running)
            claimed = await take(state, worker_id, room) if room > 0 else None
            rows = claimed.sent if claimed is not None else []
            taken = len(rows) + len(claimed.cancelled) if claimed is not None else 0
        except Exception:
            log.exception("command worker round failed")
            rows, room, taken = [], 1, 0
            await asyncio.sleep(settings.vehicle_command_poll_seconds)
        for row in rows:
            task = asyncio.create_task(execute_batched(state, finisher, row))
            running.add(task)
            task.add_done_callback(freed)
        full = len(running) >= settings.vehicle_command_concurrency
        if taken and taken == room and not full:
            continue  # more may be waiting
        await wait_for(hub.work, settings.vehicle_command_poll_seconds)
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
