"""The delivery worker: outbox events of consumer `webhooks` -> delivery rows -> HTTP.

Runs in the app (background task) or alone (`autoport webhooks worker`); any number of
processes may run it against one PostgreSQL database: outbox events and deliveries are
claimed with leases, so no attempt is sent twice, and a worker that dies mid-batch
leaves its claims to expire and be taken up again (same delivery id).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import socket
import uuid
from collections.abc import AsyncIterator

import aiohttp
import structlog

from autoport.kit import outbox
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.periodic import wait_for
from autoport.kit.state import AppState
from autoport.webhooks import repository as repo
from autoport.webhooks.client import new_session
from autoport.webhooks.delivery import (
    AttemptOutcome,
    SentAttempt,
    WebhookConfig,
    enqueue_events,
    hooks_for,
    record_attempts,
    send_attempt,
)
from autoport.webhooks.repository import ClaimedDelivery, WebhookRow
from autoport.webhooks.ssrf import AddressPolicy

CONSUMER = "webhooks"
# What the worker waits on: commits that may have added events for it.
OUTBOX_TABLES = frozenset({"outbox"})
log = structlog.get_logger("autoport.webhooks")


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class DeliveryWorker:
    def __init__(
        self,
        db: Database,
        config: WebhookConfig,
        *,
        clock: Clock | None = None,
        concurrency: int = 64,
        batch: int = 200,
        poll_interval: float = 0.1,
        worker_id: str | None = None,
        rng: random.Random | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        self.db = db
        self.config = config
        self.clock = clock or Clock()
        self.concurrency = concurrency
        self.batch = batch
        self.poll_interval = poll_interval
        self.worker_id = worker_id or new_worker_id()
        self.rng = rng or random.Random()
        # One session per address policy (production and sandbox may differ: loopback
        # receivers on a laptop's sandbox); a session given is used for every delivery.
        self._given_session = session
        self._sessions: dict[AddressPolicy, aiohttp.ClientSession] = {}
        self._inflight: set[asyncio.Task[SentAttempt | None]] = set()
        self._finished_attempts: list[SentAttempt] = []
        self._wake = asyncio.Event()

    def session_for(self, environment: Environment) -> aiohttp.ClientSession:
        if self._given_session is not None:
            return self._given_session
        policy = self.config.policy(environment)
        if policy not in self._sessions:
            self._sessions[policy] = new_session(policy, limit=self.concurrency)
        return self._sessions[policy]

    async def close(self, *, grace_seconds: float = 0.0) -> None:
        """Stop: let attempts in flight finish for up to `grace_seconds`, record what
        finished; the rest are sent again after their claims expire (same id)."""
        if self._inflight and grace_seconds > 0:
            await asyncio.wait(set(self._inflight), timeout=grace_seconds)
        for task in list(self._inflight):
            task.cancel()
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        if self._finished_attempts:
            batch, self._finished_attempts = self._finished_attempts, []
            try:
                await self._record(batch)
            except Exception:
                log.exception("recording webhook attempts at shutdown failed")
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()

    def wake(self) -> None:
        self._wake.set()

    async def ingest(self) -> int:
        """Convert due outbox events into deliveries; returns events consumed."""
        now = self.clock.now_us()
        # A cheap read first: an idle pass must not take SQLite's write lock.
        if not await outbox.any_due(self.db, consumer=CONSUMER, now_us=now):
            return 0
        return await enqueue_events(
            self.db, consumer=CONSUMER, now_us=now, limit=self.batch, config=self.config
        )

    async def claim(self, limit: int) -> list[ClaimedDelivery]:
        return await repo.claim_deliveries(
            self.db,
            worker_id=self.worker_id,
            now_us=self.clock.now_us(),
            lease_us=self.config.lease_us,
            limit=limit,
        )

    async def _send(self, delivery: ClaimedDelivery, hook: WebhookRow | None) -> SentAttempt | None:
        try:
            return await send_attempt(
                self.session_for(delivery.environment),
                delivery,
                hook,
                config=self.config,
                clock_now=self.clock.now_us,
                rng=self.rng,
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            # The claim expires and a later pass retries it; the worker keeps going.
            log.exception("webhook attempt failed", delivery_id=delivery.delivery_id)
            return None

    async def _record(self, sent: list[SentAttempt]) -> list[AttemptOutcome]:
        outcomes = await record_attempts(
            self.db, sent, worker_id=self.worker_id, config=self.config
        )
        for outcome in outcomes:
            if not outcome.result.ok:
                log.info(
                    "webhook delivery not accepted",
                    delivery_id=outcome.delivery_id,
                    attempt=outcome.attempt,
                    status=outcome.status,
                    error=outcome.result.error,
                )
        return outcomes

    async def run_once(self) -> list[AttemptOutcome]:
        """One pass, waiting for every attempt it started (tests, the CLI)."""
        await self.ingest()
        claimed = await self.claim(self.batch)
        if not claimed:
            return []
        hooks = await hooks_for(self.db, claimed)
        sent = await asyncio.gather(
            *(self._send(d, hooks.get((d.environment, d.application_id))) for d in claimed)
        )
        return await self._record([s for s in sent if s is not None])

    async def run_until_idle(self, *, max_passes: int = 1000) -> list[AttemptOutcome]:
        """Passes until nothing is due (deliveries of one vehicle go one after another)."""
        done: list[AttemptOutcome] = []
        for _ in range(max_passes):
            outcomes = await self.run_once()
            if not outcomes and not await outbox.any_due(
                self.db, consumer=CONSUMER, now_us=self.clock.now_us()
            ):
                break
            done.extend(outcomes)
        return done

    async def run(self) -> None:
        """Forever: keep up to `concurrency` attempts in flight, record finished ones in
        batches (one commit each). Idle, it waits for a commit of the outbox (this
        process's; on PostgreSQL every process's) or an attempt to finish, and looks
        anyway every `poll_interval` (retries fall due by the clock, and on SQLite other
        processes' events are not heard)."""
        stop = self.db.on_commit(OUTBOX_TABLES, self.wake)
        try:
            while True:
                # Cleared before looking: a commit from here on ends the wait below.
                self._wake.clear()
                busy = await self._pass()
                full = len(self._inflight) >= self.concurrency
                if not busy or (full and not self._finished_attempts):
                    # Idle, or full: wait for work, or for an attempt to finish.
                    await wait_for(self._wake, self.poll_interval)
        finally:
            stop()

    async def _pass(self) -> bool:
        """Record finished attempts, take new events, start attempts: whether any of it
        had work."""
        busy = False
        try:
            if self._finished_attempts:
                # Recorded before claiming: a recorded success may make the next
                # event of that vehicle due.
                batch, self._finished_attempts = self._finished_attempts, []
                try:
                    await self._record(batch)
                except Exception:
                    # Unrecorded attempts are sent again when their claims expire
                    # (same delivery id): at-least-once, never lost.
                    log.exception("recording webhook attempts failed")
                busy = True
            busy = await self.ingest() > 0 or busy
            free = self.concurrency - len(self._inflight)
            if free > 0:
                claimed = await self.claim(min(free, self.batch))
                if claimed:
                    busy = True
                    hooks = await hooks_for(self.db, claimed)
                    for delivery in claimed:
                        hook = hooks.get((delivery.environment, delivery.application_id))
                        task = asyncio.create_task(self._send(delivery, hook))
                        self._inflight.add(task)
                        task.add_done_callback(self._finished)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("webhook worker pass failed")
        return busy

    def _finished(self, task: asyncio.Task[SentAttempt | None]) -> None:
        self._inflight.discard(task)
        if not task.cancelled() and task.exception() is None:
            sent = task.result()
            if sent is not None:
                self._finished_attempts.append(sent)
        self._wake.set()


@contextlib.asynccontextmanager
async def webhook_worker(state: AppState) -> AsyncIterator[None]:
    """The app's background task (see autoport.app.background_tasks)."""
    settings = state.settings
    if not settings.webhook_worker_enabled:
        yield
        return
    worker = DeliveryWorker(
        state.database,
        WebhookConfig.from_settings(settings),
        clock=state.clock,
        concurrency=settings.webhook_worker_concurrency,
        poll_interval=settings.webhook_poll_interval_seconds,
    )
    task = asyncio.create_task(worker.run(), name="webhook-worker")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await worker.close(grace_seconds=2.0)
