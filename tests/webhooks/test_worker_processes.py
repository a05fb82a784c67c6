"""Real worker processes (`autoport webhooks worker`) against a SQLite file or a
PostgreSQL schema: killed with SIGKILL in the middle of a batch and restarted, nothing
is lost and duplicates carry the same delivery id; two workers on PostgreSQL never send
the same attempt twice (nor on SQLite, whose single writer serialises the claims)."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator

import pytest

from autoport.config import Settings
from autoport.kit import outbox
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.webhooks import service, verify
from autoport.webhooks.delivery import WebhookConfig

from .conftest import APP_ID, Answer, Receiver
from .workers import Workers

SECRET = "process-test-secret-0123456789"


@pytest.fixture
def workers(settings: Settings) -> Iterator[Workers]:
    running = Workers(settings)
    try:
        yield running
    finally:
        running.stop_all()


async def setup_events(db: Database, config: WebhookConfig, url: str, count: int) -> list[str]:
    clock = Clock()
    config = dataclasses.replace(config, deliveries_kept=1000)
    await service.save_webhook(
        db,
        environment=Environment.production,
        application_id=APP_ID,
        url=url,
        secret=SECRET,
        events=["fleet_clearance_changed"],
        config=config,
        clock_now=clock.now_us,
    )
    vins = [f"WBA00000000{n:06d}" for n in range(count)]
    async with db.transaction() as conn:
        for vin in vins:
            await outbox.emit(
                conn,
                environment=Environment.production,
                event_type="fleet_clearance_changed",
                payload={"action": "approved", "detail": None},
                now_us=clock.now_us(),
                vin=vin,
                application_id=APP_ID,
            )
    return vins


async def wait_until(predicate: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def queue_state(db: Database) -> str:
    rows = await db.fetch_all(
        "SELECT status, COUNT(*) AS n, MAX(attempts) AS a FROM webhook_deliveries GROUP BY status"
    )
    left = await db.fetch_value("SELECT COUNT(*) FROM outbox WHERE consumer = 'webhooks'")
    return f"deliveries {[(r['status'], r['n'], r['a']) for r in rows]}, outbox {left}"


async def all_delivered(db: Database, count: int) -> bool:
    done = await db.fetch_value(
        "SELECT COUNT(*) FROM webhook_deliveries WHERE event_type = 'fleet_clearance_changed' "
        "AND status = 'succeeded'"
    )
    return int(done) == count


async def test_a_worker_killed_mid_batch_loses_nothing_after_restart(
    applications: Database,
    config: WebhookConfig,
    receiver: Receiver,
    workers: Workers,
) -> None:
    db = applications
    count = 200
    vins = await setup_events(db, config, receiver.url, count)
    # Slow answers keep a batch in flight when the kill comes.
    receiver.behaviour = lambda _: Answer(delay=0.05)
    first = workers.start(concurrency=16)

    async def some_received() -> bool:
        return len(receiver.requests) >= 40

    await wait_until(some_received, 30, "the first worker to deliver")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    at_kill = len(receiver.requests)
    assert at_kill < count + 1, "the kill came after the whole batch was sent"
    receiver.behaviour = lambda _: Answer()
    second = workers.start()
    try:
        await wait_until(lambda: all_delivered(db, count), 60, "every event to be delivered")
    except AssertionError:
        second.kill()
        _, err = second.communicate(timeout=10)
        raise AssertionError(f"{await queue_state(db)}; worker: {err.decode()[-3000:]}") from None
    assert await db.fetch_value("SELECT COUNT(*) FROM outbox WHERE consumer = 'webhooks'") == 0

    ids_by_vin: dict[str, set[str]] = defaultdict(set)
    for request in receiver.requests:
        assert verify(SECRET, request.body, request.headers["X-Svc-Signature-256"])
        ids_by_vin[request.json()["vehicle"]["vin"]].add(request.headers["X-Svc-Delivery"])
    assert set(ids_by_vin) == {*vins, "*"}
    # Duplicates (sent before the kill, unrecorded) reuse the delivery id.
    assert all(len(ids) == 1 for ids in ids_by_vin.values())
    assert len({next(iter(ids)) for ids in ids_by_vin.values()}) == count + 1


async def test_two_workers_never_send_the_same_attempt_twice(
    applications: Database,
    config: WebhookConfig,
    receiver: Receiver,
    workers: Workers,
) -> None:
    # PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: the single writer across processes.
    db = applications
    count = 400
    await setup_events(db, config, receiver.url, count)
    receiver.behaviour = lambda _: Answer(delay=0.01)
    first = workers.start(concurrency=32)
    second = workers.start(concurrency=32)
    await wait_until(lambda: all_delivered(db, count), 60, "every event to be delivered")
    assert first.poll() is None and second.poll() is None, "a worker died"
    deliveries = [
        r.headers["X-Svc-Delivery"] for r in receiver.requests if r.headers["X-Svc-Event"] != "ping"
    ]
    assert len(deliveries) == count
    assert len(set(deliveries)) == count
    attempts = await db.fetch_value(
        "SELECT MAX(attempts) FROM webhook_deliveries WHERE event_type = 'fleet_clearance_changed'"
    )
    assert attempts == 1
