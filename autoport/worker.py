"""Process roles: the background work of autoport, by kind, and `autoport worker`.

`autoport serve` runs the API and, unless `--no-workers` (AUTOPORT_BACKGROUND_WORKERS=
false), every kind of background work below. `autoport worker [--only KINDS]` runs the
background work alone, no HTTP, so that API replicas and workers scale separately.

Every kind is safe in any number of processes against one PostgreSQL database (its
module says how); each is listed here once, and `create_app` starts them from here:

- webhooks: outbox events and deliveries claimed with leases (FOR UPDATE SKIP LOCKED);
  a killed worker's claims expire and are sent again with the same delivery id.
- streams: outbox events leased to one builder (a builder that lost its lease rolls
  back); one MQTT publisher holds the broker connection under a lease in the database.
- fleet: vehicles claimed (next_check_at pushed to a lease, SKIP LOCKED), transitions
  conditional on the claimed status.
- sandbox: optimistic writes (a vehicle's updated_at is its version).
- commands: commands claimed (FOR UPDATE SKIP LOCKED) and marked `sent` in their own
  transaction before the car is asked; a command found `sent` is never sent again.
- history: a series is sealed by the worker that claimed it (a lease, SKIP LOCKED on
  PostgreSQL), and each seal checks that what it replaces is still there.
- consent, console, oauth, history: deletes of rows nobody can use any more (sessions, tokens,
  history past retention); two processes deleting the same rows delete them once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass

import structlog

from autoport.config import Settings
from autoport.kit.clock import Clock
from autoport.kit.state import AppState

log = structlog.get_logger("autoport.worker")

BackgroundTask = Callable[[AppState], contextlib.AbstractAsyncContextManager[None]]


@dataclass(frozen=True, slots=True)
class WorkerKind:
    name: str
    description: str
    task: Callable[[], BackgroundTask]  # imported on use: the CLI stays cheap to start


def _webhooks() -> BackgroundTask:
    from autoport.webhooks.tasks import webhook_worker

    return webhook_worker


def _streams() -> BackgroundTask:
    from autoport.streaming.tasks import streaming_worker

    return streaming_worker


def _fleet() -> BackgroundTask:
    from autoport.fleet.tasks import fleet_worker

    return fleet_worker


def _sandbox() -> BackgroundTask:
    from autoport.sandbox.tasks import sandbox_runner

    return sandbox_runner


def _consent() -> BackgroundTask:
    from autoport.consent.tasks import session_purger

    return session_purger


def _oauth() -> BackgroundTask:
    from autoport.oauth.tasks import housekeeping

    return housekeeping


def _commands() -> BackgroundTask:
    from autoport.commands.tasks import command_worker

    return command_worker


def _console() -> BackgroundTask:
    from autoport.console.tasks import console_session_purger

    return console_session_purger


def _history() -> BackgroundTask:
    from autoport.history.tasks import history_worker

    return history_worker


# The one list of background work, in start order.
KINDS: tuple[WorkerKind, ...] = (
    WorkerKind("oauth", "delete expired tokens, codes and assertion ids", _oauth),
    WorkerKind(
        "history", "seal the data-point history into chunks, prune it past retention", _history
    ),
    WorkerKind("fleet", "drive fleet clearances by asking the carmakers", _fleet),
    WorkerKind("streams", "build stream messages (SSE, MQTT) and publish to MQTT", _streams),
    WorkerKind("consent", "purge finished consent sessions", _consent),
    WorkerKind("sandbox", "advance the simulated sandbox vehicles", _sandbox),
    WorkerKind("webhooks", "deliver webhook events", _webhooks),
    WorkerKind("commands", "send vehicle commands to the cars, each at most once", _commands),
    WorkerKind("console", "purge ended console sessions and used links", _console),
)
KIND_NAMES: tuple[str, ...] = tuple(kind.name for kind in KINDS)


class UnknownKind(ValueError):
    pass


def parse_only(text: str | None) -> tuple[str, ...]:
    """`--only webhooks,streams` -> the kinds, in the registry's order; None or empty:
    all. UnknownKind names what is wrong and what exists."""
    if text is None:
        return KIND_NAMES
    wanted = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not wanted:
        raise UnknownKind(f"--only names no worker kind; choose from: {', '.join(KIND_NAMES)}")
    unknown = [name for name in wanted if name not in KIND_NAMES]
    if unknown:
        raise UnknownKind(
            f"--only: unknown worker kind(s) {', '.join(repr(n) for n in unknown)}; "
            f"choose from: {', '.join(KIND_NAMES)}"
        )
    return tuple(name for name in KIND_NAMES if name in wanted)


def background_tasks(names: Collection[str] = KIND_NAMES) -> Sequence[BackgroundTask]:
    return [kind.task() for kind in KINDS if kind.name in names]


@contextlib.asynccontextmanager
async def running(state: AppState, names: Collection[str]) -> AsyncIterator[None]:
    """Start the background work of `names` on `state`; stopped (each kind's own
    shutdown) when the block ends."""
    async with contextlib.AsyncExitStack() as stack:
        for task in background_tasks(names):
            await stack.enter_async_context(task(state))
        yield


async def run_worker(settings: Settings, names: Collection[str], *, stop: asyncio.Event) -> None:
    """The `autoport worker` process: the database (checked migrated by the caller),
    the app's state without HTTP, the chosen background work until `stop` is set."""
    from autoport.kit.db import create_database
    from autoport.kit.metrics import PROCESS_STARTS
    from autoport.state import build_state

    database = create_database(
        settings.resolved_database_url,
        schema=settings.database_schema,
        pool_size=settings.database_pool_size,
    )
    # The same long-lived objects as an API process (autoport.state), without HTTP.
    state = build_state(settings, database, Clock())
    await database.connect()
    PROCESS_STARTS.labels("worker").inc()
    try:
        async with running(state, names):
            log.info("autoport worker running", kinds=list(names))
            await stop.wait()
            log.info("autoport worker stopping")
    finally:
        await database.close()


def serve_until_signalled(settings: Settings, names: Collection[str]) -> None:
    """Run `run_worker` until SIGTERM or SIGINT (systemd stops with SIGTERM)."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await run_worker(settings, names, stop=stop)

    asyncio.run(main())
