"""Background rounds: one loop for every worker that repeats a piece of work (purges,
sweeps, the fleet worker, the sandbox emulator), instead of a copy in each feature.

A round that fails is logged and tried again at the next interval: the database may be
away for a moment (a restart, a failover), and a worker must outlive that. A round that
returns True had more due than it took (a full batch): the next one starts at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import structlog

log = structlog.get_logger("autoport.periodic")

Round = Callable[[], Awaitable[bool | None]]


@contextlib.asynccontextmanager
async def every(
    seconds: float | Callable[[], float],
    work: Round,
    *,
    name: str,
    failure: str,
    wait_first: bool = False,
    logger: Any = None,
) -> AsyncIterator[None]:
    """Run `work` every `seconds` (a number, or read before each wait: a setting) while
    the context is open; `failure` is the log line of a failed round. `wait_first`
    waits one interval before the first round; `logger` is the feature's (structlog)."""
    logger = logger or log

    def interval() -> float:
        return seconds() if callable(seconds) else seconds

    async def loop() -> None:
        if wait_first:
            await asyncio.sleep(interval())
        while True:
            try:
                more = await work()
            except Exception:
                logger.exception(failure, task=name)
                more = False
            if not more:
                await asyncio.sleep(interval())

    task = asyncio.create_task(loop(), name=name)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def wait_for(event: asyncio.Event, seconds: float) -> None:
    """Wait until `event` is set or `seconds` pass, whichever is first: a loop woken by
    a commit (`Database.on_commit`) that still polls in case it misses one.

    Not `asyncio.wait_for`: on Python 3.11 it loses a cancellation that arrives while the
    event is being set (python/cpython#86296, fixed in 3.12), so a loop stopped by
    `task.cancel()` at the moment a commit woke it ran on, and whoever awaited it hung.
    `asyncio.timeout` tells its own expiry from an outside cancellation."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
