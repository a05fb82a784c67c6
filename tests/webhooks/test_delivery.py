"""The delivery worker against a real receiver, on SQLite and PostgreSQL: payloads and
signatures, dropping unsubscribed events, the retry schedule on failures, timeouts,
redirects and 5xx (clock injected), ordering per vehicle, the log and redelivery."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from autoport.config import Settings
from autoport.kit.clock import MICROS, FrozenClock, to_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.webhooks import delivery, service, verify, verify_delivery
from autoport.webhooks.delivery import WebhookConfig
from autoport.webhooks.signing import new_secret
from autoport.webhooks.tasks import DeliveryWorker

from .conftest import APP_ID, OTHER_APP_ID, SECRET, Answer, Receiver, configure, emit

VIN = "WBA12345678901234"
VIN2 = "WBA98765432109876"


async def webhook_outbox_count(db: Database) -> int:
    return int(await db.fetch_value("SELECT COUNT(*) FROM outbox WHERE consumer = 'webhooks'"))


async def test_events_are_delivered_signed_with_the_interface_payload(
    worker: DeliveryWorker, config: WebhookConfig, clock: FrozenClock, receiver: Receiver
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url)
    received_at = clock.now_us()
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "rejected", "detail": "no"})
    await emit(
        db,
        clock,
        "authorization_changed",
        VIN2,
        {"action": "revoked", "authorization_id": "auth-1", "detail": None},
    )
    outcomes = await worker.run_until_idle()
    assert [o.status for o in outcomes] == ["succeeded", "succeeded"]
    assert await webhook_outbox_count(db) == 0
    fleet, auth = receiver.requests[1:]
    assert fleet.body == orjson.dumps(
        {
            "vehicle": {"vin": VIN},
            "event": {
                "type": "fleet_clearance_changed",
                "received_at": to_iso(received_at),
                "action": "rejected",
                "detail": "no",
            },
            "application": {"id": APP_ID},
        }
    )
    assert b" " not in fleet.body  # compact JSON, the exact bytes signed
    assert auth.json()["event"] == {
        "type": "authorization_changed",
        "received_at": to_iso(received_at),
        "action": "revoked",
        "authorization_id": "auth-1",
    }
    for request in (fleet, auth):
        assert verify(SECRET, request.body, request.headers["X-Svc-Signature-256"])
        assert verify(SECRET, request.body, request.headers["X-Svc-Signature"])
        assert request.headers["X-Svc-Timestamp"] == str(clock.now_us() // MICROS)
        assert (
            verify_delivery(SECRET, request.body, request.headers, now=clock.now_us() / MICROS)
            == (request.headers["X-Svc-Delivery"])
        )
        assert request.headers["Content-Type"] == "application/json"
        assert request.headers["User-Agent"] == "Svc-Webhook/1.2.0"
    assert fleet.headers["X-Svc-Event"] == "fleet_clearance_changed"
    assert auth.headers["X-Svc-Event"] == "authorization_changed"
    assert fleet.headers["X-Svc-Delivery"] != auth.headers["X-Svc-Delivery"]


async def test_unsubscribed_events_and_applications_without_webhook_are_dropped(
    worker: DeliveryWorker, config: WebhookConfig, clock: FrozenClock, receiver: Receiver
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    await emit(db, clock, "authorization_changed", VIN, {"action": "approved"})
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "approved"}, OTHER_APP_ID)
    await emit(
        db,
        clock,
        "fleet_clearance_changed",
        VIN,
        {"action": "approved"},
        environment=Environment.sandbox,
    )
    assert await worker.run_until_idle() == []
    assert await webhook_outbox_count(db) == 0
    assert [r.headers["X-Svc-Event"] for r in receiver.requests] == ["ping"]
    assert await db.fetch_value("SELECT COUNT(*) FROM webhook_deliveries") == 1


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (Answer(status=500), "answered 500"),
        (Answer(status=503), "answered 503"),
        (Answer(status=302, headers={"Location": "/elsewhere"}), "answered 302"),
        (Answer(status=404), "answered 404"),
        (Answer(delay=2.0), "no answer within"),
    ],
)
async def test_failures_are_retried_on_the_backoff_schedule_with_the_same_delivery_id(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    answer: Answer,
    error: str,
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    receiver.behaviour = lambda _: answer
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "approved"})
    [first] = await worker.run_once()
    assert first.status == "pending"
    assert first.result.error is not None and error in first.result.error
    assert first.next_attempt_at is not None
    delay = (first.next_attempt_at - clock.now_us()) / MICROS
    base = config.retry_base_us / MICROS
    assert base / 2 <= delay <= base
    # Not due before the scheduled time.
    clock.advance(delay - 0.5)
    assert await worker.run_once() == []
    clock.advance(1)
    receiver.behaviour = lambda _: Answer(status=204)
    [second] = await worker.run_once()
    assert second.status == "succeeded"
    assert second.attempt == 2
    events = [r for r in receiver.requests if r.headers["X-Svc-Event"] != "ping"]
    assert len(events) == 2
    assert events[0].headers["X-Svc-Delivery"] == events[1].headers["X-Svc-Delivery"]
    assert events[0].body == events[1].body
    # Redirects are not followed.
    assert receiver.to("/elsewhere") == []


async def test_backoff_grows_exponentially_up_to_the_cap(config: WebhookConfig) -> None:
    rng = random.Random(1)
    delays = [delivery.retry_delay_us(config, n, rng) / MICROS for n in range(1, 15)]
    for n, delay in enumerate(delays, start=1):
        ceiling = min(
            config.retry_max_delay_us / MICROS, config.retry_base_us / MICROS * 2 ** (n - 1)
        )
        assert ceiling / 2 <= delay <= ceiling
    assert max(delays) <= config.retry_max_delay_us / MICROS


async def test_unreachable_receivers_are_retried_then_failed_after_the_window(
    worker: DeliveryWorker, config: WebhookConfig, clock: FrozenClock, receiver: Receiver
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    await receiver.stop()  # nothing listens any more: connection refused
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "approved"})
    start = clock.now_us()
    attempts = []
    while True:
        outcomes = await worker.run_once()
        attempts.extend(outcomes)
        if outcomes and outcomes[-1].status == "failed":
            break
        clock.advance(config.retry_max_delay_us / MICROS)
        assert clock.now_us() - start < 2 * config.retry_window_us
    elapsed = (clock.now_us() - start) / MICROS
    assert elapsed >= config.retry_window_us / MICROS  # retried for at least 24 h
    assert len(attempts) >= 20
    assert {a.delivery_id for a in attempts} == {attempts[0].delivery_id}
    assert all(a.result.error for a in attempts)
    log = await service.list_deliveries(
        db.reader, environment=Environment.production, application_id=APP_ID, config=config
    )
    failed = next(d for d in log if d["event_type"] == "fleet_clearance_changed")
    assert failed["status"] == "failed"
    assert failed["attempts"] == len(attempts)
    # A failed delivery can be redelivered, same id, once the receiver is back.
    await receiver.start()
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    async with db.transaction() as conn:
        await service.redeliver(
            conn,
            environment=Environment.production,
            application_id=APP_ID,
            delivery_id=failed["id"],
            now_us=clock.now_us(),
            config=config,
        )
    [again] = await worker.run_once()
    assert again.status == "succeeded"
    assert again.delivery_id == failed["id"]
    assert receiver.requests[-1].headers["X-Svc-Delivery"] == failed["id"]


async def test_a_failing_receiver_never_sees_a_later_event_of_the_same_vehicle_first(
    worker: DeliveryWorker, config: WebhookConfig, clock: FrozenClock, receiver: Receiver
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    failing = {"on": True}

    def behaviour(request: Any) -> Answer:
        if failing["on"] and request.json()["vehicle"]["vin"] == VIN:
            return Answer(status=500)
        return Answer()

    receiver.behaviour = behaviour
    for action in ("pending", "approved", "revoking", "revoked"):
        await emit(db, clock, "fleet_clearance_changed", VIN, {"action": action})
    await emit(db, clock, "fleet_clearance_changed", VIN2, {"action": "approved"})
    for _ in range(5):
        await worker.run_until_idle()
        clock.advance(config.retry_max_delay_us / MICROS)
    sent = [r.json() for r in receiver.requests if r.headers["X-Svc-Event"] != "ping"]
    # Only the head of VIN's queue was tried; the other vehicle is not held up.
    assert {s["event"]["action"] for s in sent if s["vehicle"]["vin"] == VIN} == {"pending"}
    assert [s["event"]["action"] for s in sent if s["vehicle"]["vin"] == VIN2] == ["approved"]
    failing["on"] = False
    await worker.run_until_idle()
    actions = [
        r.json()["event"]["action"]
        for r in receiver.requests
        if r.headers["X-Svc-Event"] != "ping" and r.json()["vehicle"]["vin"] == VIN
    ]
    # Retries of the head, then the rest, in order.
    assert actions[-4:] == ["pending", "approved", "revoking", "revoked"]
    assert set(actions[:-3]) == {"pending"}


async def test_the_log_keeps_the_last_deliveries_with_request_and_truncated_response(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    settings: Settings,
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    long_body = b"x" * (config.body_limit + 500)
    receiver.behaviour = lambda _: Answer(status=200, body=long_body, headers={"X-Receiver": "yes"})
    for n in range(15):
        await emit(
            db, clock, "fleet_clearance_changed", f"WBA1234567890{n:04d}", {"action": "approved"}
        )
    await worker.run_until_idle()
    log = await service.list_deliveries(
        db.reader, environment=Environment.production, application_id=APP_ID, config=config
    )
    assert len(log) == settings.webhook_deliveries_kept == 10
    assert await db.fetch_value("SELECT COUNT(*) FROM webhook_deliveries") == 10
    newest = log[0]
    assert newest["vin"] == "WBA12345678900014"
    assert newest["status"] == "succeeded"
    assert newest["request"]["headers"]["X-Svc-Delivery"] == newest["id"]
    assert verify(
        SECRET,
        newest["request"]["body"].encode(),
        newest["request"]["headers"]["X-Svc-Signature-256"],
    )
    assert newest["response"]["status"] == 200
    assert newest["response"]["headers"]["X-Receiver"] == "yes"
    assert len(newest["response"]["body"]) == config.body_limit
    # Newest first, by queue order; the ping and the five oldest events were forgotten.
    assert [d["vin"] for d in log] == [f"WBA1234567890{n:04d}" for n in range(14, 4, -1)]


async def test_the_header_prefix_is_a_setting(
    applications: Database, settings: Settings, clock: FrozenClock, receiver: Receiver
) -> None:
    config = WebhookConfig.from_settings(
        settings.model_copy(update={"webhook_header_prefix": "Acme"})
    )
    result = await configure(applications, config, clock, receiver.url)
    assert result.ping.status == "succeeded"
    headers = receiver.requests[0].headers
    assert headers["User-Agent"] == "Acme-Webhook/1.2.0"
    assert verify(SECRET, receiver.requests[0].body, headers["X-Acme-Signature-256"])
    assert headers["X-Acme-Delivery"] == result.ping.delivery_id


async def test_removing_the_webhook_fails_queued_deliveries_visibly(
    worker: DeliveryWorker, config: WebhookConfig, clock: FrozenClock, receiver: Receiver
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url)
    receiver.behaviour = lambda _: Answer(status=500)
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "approved"})
    await worker.run_once()
    async with db.transaction() as conn:
        await service.remove_webhook(
            conn, environment=Environment.production, application_id=APP_ID, now_us=clock.now_us()
        )
    clock.advance(config.retry_max_delay_us / MICROS)
    assert await worker.run_once() == []
    row = await db.fetch_one(
        "SELECT status, error FROM webhook_deliveries WHERE event_type = 'fleet_clearance_changed'"
    )
    assert row is not None
    assert (row["status"], row["error"]) == ("failed", "the webhook was removed")


async def test_an_expired_lease_is_taken_over_and_the_old_holder_cannot_record(
    worker: DeliveryWorker, config: WebhookConfig, clock: FrozenClock, receiver: Receiver
) -> None:
    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "approved"})
    await worker.ingest()
    [stale] = await worker.claim(10)  # this holder "dies" before sending
    assert await worker.claim(10) == []  # held: nobody else may take it
    clock.advance(config.lease_us / MICROS + 1)
    other = DeliveryWorker(db, config, clock=clock, worker_id="second-worker")
    try:
        [fresh] = await other.claim(10)
        assert fresh.delivery_id == stale.delivery_id
        assert fresh.attempt == stale.attempt + 1
        [outcome] = [
            await delivery.attempt_delivery(
                db,
                other.session_for(fresh.environment),
                fresh,
                worker_id="second-worker",
                config=config,
                clock_now=clock.now_us,
                rng=random.Random(1),
            )
        ]
        assert outcome.recorded and outcome.status == "succeeded"
        late = await delivery.attempt_delivery(
            db,
            worker.session_for(stale.environment),
            stale,
            worker_id=worker.worker_id,
            config=config,
            clock_now=clock.now_us,
            rng=random.Random(1),
        )
        assert not late.recorded
    finally:
        await other.close()
    row = await db.fetch_one(
        "SELECT status, attempts FROM webhook_deliveries WHERE delivery_id = :d",
        {"d": fresh.delivery_id},
    )
    assert row is not None and row["status"] == "succeeded" and row["attempts"] == 2


@pytest.mark.parametrize("scheme", ["default", "standard"])
async def test_the_log_shows_the_headers_each_attempt_sent(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    scheme: str,
) -> None:
    db = worker.db
    secret = new_secret()
    await configure(
        db,
        config,
        clock,
        receiver.url,
        events=["fleet_clearance_changed"],
        secret=secret,
        signature_scheme=scheme,
    )
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "approved"})
    await worker.run_until_idle()

    async def logged() -> dict[str, str]:
        [row] = [
            d
            for d in await service.list_deliveries(
                db.reader, environment=Environment.production, application_id=APP_ID, config=config
            )
            if d["event_type"] == "fleet_clearance_changed"
        ]
        headers: dict[str, str] = row["request"]["headers"]
        # Exactly what the receiver got (aiohttp adds only transport headers).
        sent = receiver.requests[-1].headers
        assert {name: sent[name] for name in headers} == headers
        assert (
            verify_delivery(
                secret, row["request"]["body"].encode(), headers, now=clock.now_us() / MICROS
            )
            == row["id"]
        )
        return headers

    first = await logged()
    clock.advance(600)
    async with db.transaction() as conn:
        await service.redeliver(
            conn,
            environment=Environment.production,
            application_id=APP_ID,
            delivery_id=receiver.requests[-1].headers.get("X-Svc-Delivery")
            or receiver.requests[-1].headers["webhook-id"],
            now_us=clock.now_us(),
            config=config,
        )
    await worker.run_until_idle()
    second = await logged()
    changed = {name for name in first if first[name] != second[name]}
    signed = {
        "default": {"X-Svc-Timestamp", "X-Svc-Signature-Timestamped"},
        "standard": {"webhook-timestamp", "webhook-signature"},
    }
    assert changed == signed[scheme]


async def test_a_failed_conversion_leaves_its_events_due_at_once(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An outbox event is taken in the transaction that writes its delivery
    (outbox.take): when writing fails, the event is still in the outbox, unleased and
    due for the next pass at once (a claim's lease would hold it back for
    webhook_lease_seconds), and no delivery exists; the next pass delivers it once."""
    from autoport.webhooks import repository

    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    await emit(db, clock, "fleet_clearance_changed", VIN, {"action": "approved"})
    original = repository.create_deliveries

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(repository, "create_deliveries", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        await worker.ingest()
    assert await webhook_outbox_count(db) == 1
    leased = await db.fetch_value(
        "SELECT COUNT(*) FROM outbox WHERE consumer = 'webhooks' AND claimed_by IS NOT NULL"
    )
    assert leased == 0
    monkeypatch.setattr(repository, "create_deliveries", original)
    assert await worker.ingest() == 1
    await worker.run_until_idle()
    sent = [r.headers["X-Svc-Event"] for r in receiver.requests]
    assert sent.count("fleet_clearance_changed") == 1


async def test_the_log_keeps_its_finished_deliveries_beside_a_pending_backlog(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    settings: Settings,
) -> None:
    """Pending deliveries never count among the kept ones: a batch that finishes 15
    while 20 newer ones wait keeps the newest 10 finished (the prune read the newest 10
    of any status, pending included, and so deleted every finished one)."""
    db = worker.db
    await configure(db, config, clock, receiver.url, events=["fleet_clearance_changed"])
    for n in range(15):
        await emit(db, clock, "fleet_clearance_changed", f"WBA1234567890{n:04d}", {})
    assert await worker.ingest() == 15
    for n in range(20):
        await emit(db, clock, "fleet_clearance_changed", f"WBA9876543210{n:04d}", {})
    assert await worker.ingest() == 20
    await db.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = :later WHERE vin LIKE 'WBA98%'",
        {"later": clock.now_us() + 3600 * MICROS},
    )
    outcomes = await worker.run_once()
    assert len(outcomes) == 15
    rows = await db.fetch_all(
        "SELECT status, COUNT(*) AS n, MIN(vin) AS oldest FROM webhook_deliveries "
        "WHERE event_type = 'fleet_clearance_changed' GROUP BY status ORDER BY status"
    )
    assert [(r["status"], r["n"]) for r in rows] == [
        ("pending", 20),
        ("succeeded", settings.webhook_deliveries_kept),
    ]
    assert rows[1]["oldest"] == "WBA12345678900005"
