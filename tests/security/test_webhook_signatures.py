"""Attacks on webhook signatures: someone who captured a delivery (a proxy log, a
leaked request dump) sends it to the receiver again, later, with its timestamp or
delivery id changed, or stripped down to the untimed signatures.

Real deliveries from the worker to a real HTTP receiver on loopback that checks them
with `autoport.webhooks.verify_delivery` (401 on refusal), in both signature schemes,
on SQLite and PostgreSQL. The receiver's clock is the worker's (`FrozenClock`), so "five
minutes later" is exact.
"""

# ruff: noqa: F811 - the webhook tests' fixtures are imported, then requested by name

from __future__ import annotations

import uuid

import aiohttp
import pytest

from autoport.kit.clock import MICROS, FrozenClock
from autoport.kit.environments import Environment
from autoport.webhooks import SignatureError, service, verify, verify_delivery
from autoport.webhooks.delivery import WebhookConfig
from autoport.webhooks.signing import new_secret
from autoport.webhooks.tasks import DeliveryWorker

# The webhook tests' fixtures: a loopback receiver, applications, a worker on `clock`.
from tests.webhooks.conftest import (  # noqa: F401 - pytest fixtures, used by name
    APP_ID,
    Answer,
    Received,
    Receiver,
    applications,
    config,
    configure,
    emit,
    receiver,
    settings,
    worker,
)

VIN = "WBA12345678901234"
# Per scheme: the header carrying the delivery id, the one carrying the timestamp, and
# the timestamped signature.
HEADERS = {
    "default": ("X-Svc-Delivery", "X-Svc-Timestamp", "X-Svc-Signature-Timestamped"),
    "standard": ("webhook-id", "webhook-timestamp", "webhook-signature"),
}

pytestmark = pytest.mark.parametrize("scheme", ["default", "standard"])


async def deliver_one(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    scheme: str,
) -> tuple[str, Received]:
    """Configure a webhook whose receiver verifies every request, deliver one event, and
    return the secret and the captured delivery."""
    secret = new_secret()

    def checking(received: Received) -> Answer:
        try:
            delivery_id = verify_delivery(
                secret, received.body, received.headers, now=clock.now_us() / MICROS
            )
        except SignatureError as refused:
            return Answer(status=401, body=str(refused).encode())
        return Answer(status=200, body=f"accepted {delivery_id}".encode())

    receiver.behaviour = checking
    saved = await configure(
        worker.db,
        config,
        clock,
        receiver.url,
        events=["authorization_changed"],
        secret=secret,
        signature_scheme=scheme,
    )
    assert saved.ping.status == "succeeded", saved.ping
    await emit(
        worker.db,
        clock,
        "authorization_changed",
        VIN,
        {"action": "revoked", "authorization_id": "auth-1"},
    )
    [outcome] = await worker.run_until_idle()
    assert outcome.status == "succeeded" and outcome.result.response_status == 200
    return secret, receiver.requests[-1]


async def replay(
    receiver: Receiver, captured: Received, headers: dict[str, str]
) -> tuple[int, str]:
    """The attacker: POST the captured bytes with these headers to the receiver."""
    sent = {k: v for k, v in headers.items() if k.lower() not in {"host", "content-length"}}
    async with (
        aiohttp.ClientSession() as session,
        session.post(receiver.url, data=captured.body, headers=sent) as response,
    ):
        return response.status, await response.text()


async def test_a_captured_delivery_replayed_after_five_minutes_is_refused(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    scheme: str,
) -> None:
    secret, captured = await deliver_one(worker, config, clock, receiver, scheme)
    delivery_id, _, _ = HEADERS[scheme]
    # Inside the window the helper accepts it and names the delivery id: the receiver
    # drops it as a duplicate by that id.
    clock.advance(299)
    accepted = f"accepted {captured.headers[delivery_id]}"
    assert await replay(receiver, captured, captured.headers) == (200, accepted)
    clock.advance(2)
    status, why = await replay(receiver, captured, captured.headers)
    assert (status, why) == (401, "the delivery is too old (signed more than the tolerance ago)")
    if scheme == "default":
        # What existing receivers check still passes forever: why they should move to
        # verify_delivery (docs/webhooks.md).
        assert verify(secret, captured.body, captured.headers["X-Svc-Signature-256"])


async def test_a_tampered_timestamp_breaks_the_signature(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    scheme: str,
) -> None:
    _, captured = await deliver_one(worker, config, clock, receiver, scheme)
    _, timestamp, _ = HEADERS[scheme]
    clock.advance(3600)
    fresh = captured.headers | {timestamp: str(clock.now_us() // MICROS)}
    assert await replay(receiver, captured, fresh) == (401, "the signature does not match")


async def test_a_replay_cannot_pose_as_a_new_delivery_id(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    scheme: str,
) -> None:
    _, captured = await deliver_one(worker, config, clock, receiver, scheme)
    delivery_id, _, _ = HEADERS[scheme]
    clock.advance(10)
    renamed = captured.headers | {delivery_id: str(uuid.uuid4())}
    assert await replay(receiver, captured, renamed) == (401, "the signature does not match")


async def test_a_replay_stripped_to_the_untimed_signatures_is_refused(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    scheme: str,
) -> None:
    _, captured = await deliver_one(worker, config, clock, receiver, scheme)
    _, timestamp, signature = HEADERS[scheme]
    clock.advance(3600)
    stripped = {k: v for k, v in captured.headers.items() if k not in {timestamp, signature}}
    assert await replay(receiver, captured, stripped) == (401, "no timestamped signature header")


async def test_a_redelivery_is_signed_afresh_and_accepted_while_the_capture_is_not(
    worker: DeliveryWorker,
    config: WebhookConfig,
    clock: FrozenClock,
    receiver: Receiver,
    scheme: str,
) -> None:
    _, captured = await deliver_one(worker, config, clock, receiver, scheme)
    delivery_id, timestamp, _ = HEADERS[scheme]
    clock.advance(600)
    async with worker.db.transaction() as conn:
        await service.redeliver(
            conn,
            environment=Environment.production,
            application_id=APP_ID,
            delivery_id=captured.headers[delivery_id],
            now_us=clock.now_us(),
            config=config,
        )
    [again] = await worker.run_until_idle()
    assert again.status == "succeeded" and again.result.response_status == 200
    resent = receiver.requests[-1]
    assert resent.headers[delivery_id] == captured.headers[delivery_id]
    assert resent.body == captured.body
    assert int(resent.headers[timestamp]) == clock.now_us() // MICROS
    assert int(resent.headers[timestamp]) == int(captured.headers[timestamp]) + 600
    assert (await replay(receiver, captured, captured.headers))[0] == 401
