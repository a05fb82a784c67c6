"""A command never outlives the access it was accepted under (docs/security.md,
"Vehicle commands"): an owner who withdraws, an application disabled, a clearance
revoked, a command no longer registered, while the command waits to be sent, and a
`Prefer: wait` answer built after the access was lost. Both backends; the worker's own
functions (claim, execute), real HTTP for every other party, a real webhook receiver.
Each test was seen failing with its check removed (commands.service.claim re-reading
access; commands.routes._answer reading it again after a wait)."""

# ruff: noqa: F811 - the webhook tests' receiver fixture is imported, then used by name

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from autoport.commands import service, tasks
from autoport.config import Settings, ensure_secrets
from autoport.kit.clock import FrozenClock
from autoport.webhooks import service as webhooks_service
from autoport.webhooks.delivery import WebhookConfig
from autoport.webhooks.tasks import DeliveryWorker
from tests.commands.conftest import ADMIN, SANDBOX, Harness, harness_for
from tests.webhooks.conftest import Receiver, receiver  # noqa: F401 - a fixture, used by name

UNLOCK = {"locks_state": "unlocked"}


@pytest.fixture
async def harness(command_settings: Settings, clock: FrozenClock) -> AsyncIterator[Harness]:
    """The commands harness with loopback webhook receivers allowed (this test's own)."""
    allowed = command_settings.model_copy(update={"webhook_allow_loopback": True})
    settings, _ = ensure_secrets(allowed)
    async with harness_for(settings, clock) as found:
        yield found


async def _locks(harness: Harness, vin: str) -> str:
    return str((await harness.vehicle(vin))["data"]["doors"]["locks_state"]["data"])


async def _row(harness: Harness, command_id: str) -> dict[str, Any]:
    row = await harness.db.fetch_one(
        "SELECT status, failure_reason, failure_description, sent_at FROM vehicle_commands "
        "WHERE id = :id",
        {"id": command_id},
    )
    assert row is not None
    return {key: row[key] for key in ("status", "failure_reason", "failure_description", "sent_at")}


async def _locked_car(harness: Harness) -> str:
    """A sandbox car whose doors are locked (the attack is to unlock it)."""
    vin = await harness.sandbox_vehicle()
    owner = await harness.application()
    headers, _ = await harness.vehicle_token(owner, vin)
    await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="locked")
    harness.clock.advance(1)
    assert await _locks(harness, vin) == "locked"
    return vin


async def _pending_unlock(harness: Harness, headers: dict[str, str], vin: str) -> str:
    sent = await harness.send(headers, vin, "doors", "lock_unlock_doors", UNLOCK)
    assert sent.status_code == 202, sent.text
    assert sent.json()["status"] == "pending"
    return str(sent.json()["id"])


async def _never_sent(harness: Harness, vin: str, command_id: str, because: str) -> None:
    """The worker's round claims nothing to send, the command ended `cancelled` with
    the reason, and the car stayed locked."""
    assert await harness.work() == []
    row = await _row(harness, command_id)
    assert row["status"] == "cancelled", row
    assert row["failure_reason"] == "unauthorised"
    assert because in row["failure_description"], row
    assert "it was never sent" in row["failure_description"]
    assert row["sent_at"] is None
    assert await _locks(harness, vin) == "locked"


async def test_an_owner_withdrawal_cancels_a_command_waiting_to_be_sent(
    harness: Harness, receiver: Receiver
) -> None:
    """The audit's attack: the owner withdrew while an unlock waited to be sent; the car
    was unlocked seconds later. Now the claim reads the grant again: the command ends
    `cancelled`, the application hears it through its webhook, and the car stays locked."""
    vin = await _locked_car(harness)
    app = await harness.application()
    headers, token = await harness.vehicle_token(app, vin)
    config = WebhookConfig.from_settings(harness.state.settings)
    saved = await webhooks_service.save_webhook(
        harness.db,
        environment=SANDBOX,
        application_id=app.app_id,
        url=receiver.url,
        secret="receiver-shared-secret-0123456789",
        events=["command_changed"],
        signature_scheme=None,
        config=config,
        clock_now=harness.clock.now_us,
    )
    assert saved is not None
    command_id = await _pending_unlock(harness, headers, vin)

    withdrawn = await harness.client.post(
        f"/sandbox/admin/v1/consent/authorizations/{token['authorization_id']}/revoke",
        headers=ADMIN,
    )
    assert withdrawn.status_code == 200, withdrawn.text
    await _never_sent(harness, vin, command_id, "the owner withdrew the authorization")

    worker = DeliveryWorker(harness.db, config, clock=harness.clock, rng=random.Random(1))
    try:
        await worker.run_until_idle()
    finally:
        await worker.close()
    delivered = [
        orjson.loads(r.body)["event"]
        for r in receiver.requests
        if orjson.loads(r.body)["event"]["type"] == "command_changed"
    ]
    statuses = [event["command"]["status"] for event in delivered]
    assert statuses == ["pending", "cancelled"], statuses
    failure = delivered[-1]["command"]["failure"]
    assert failure["reason"] == "unauthorised"
    assert "withdrew" in failure["description"]


async def test_a_disabled_application_s_command_is_never_sent(harness: Harness) -> None:
    vin = await _locked_car(harness)
    app = await harness.application()
    headers = await harness.fleet_token(app, [vin])
    command_id = await _pending_unlock(harness, headers, vin)
    disabled = await harness.client.patch(
        f"/sandbox/admin/v1/applications/{app.app_id}", headers=ADMIN, json={"disabled": True}
    )
    assert disabled.status_code == 200, disabled.text
    await _never_sent(harness, vin, command_id, "the application is disabled")


async def test_a_revoked_clearance_s_command_is_never_sent(harness: Harness) -> None:
    vin = await _locked_car(harness)
    app = await harness.application()
    headers = await harness.fleet_token(app, [vin])
    command_id = await _pending_unlock(harness, headers, vin)
    removed = await harness.client.delete(f"/sandbox/v1/fleets/vehicles/{vin}", headers=headers)
    assert removed.status_code == 200, removed.text
    await _never_sent(harness, vin, command_id, "the fleet clearance is revoking")


async def test_a_command_no_longer_registered_is_never_sent(harness: Harness) -> None:
    vin = await _locked_car(harness)
    app = await harness.application()
    headers = await harness.fleet_token(app, [vin])
    command_id = await _pending_unlock(harness, headers, vin)
    narrowed = await harness.client.patch(
        f"/sandbox/admin/v1/applications/{app.app_id}",
        headers=ADMIN,
        json={"commands": ["honk_horn_flash_lights.honk_flash"]},
    )
    assert narrowed.status_code == 200, narrowed.text
    await _never_sent(
        harness,
        vin,
        command_id,
        "the application no longer registers doors.lock_unlock_doors "
        "(scope 'doors.set.locks_state')",
    )


async def test_a_brand_deactivated_for_the_application_cancels_its_command(
    harness: Harness,
) -> None:
    vin = await _locked_car(harness)
    app = await harness.application(brands=["sandbox", "bmw"])
    headers, _ = await harness.vehicle_token(app, vin, brand="sandbox")
    command_id = await _pending_unlock(harness, headers, vin)
    narrowed = await harness.client.patch(
        f"/sandbox/admin/v1/applications/{app.app_id}", headers=ADMIN, json={"brands": ["bmw"]}
    )
    assert narrowed.status_code == 200, narrowed.text
    await _never_sent(harness, vin, command_id, "no longer activated for this application")


async def test_commands_still_allowed_are_sent_beside_cancelled_ones(harness: Harness) -> None:
    """One claim, two applications: only the one that lost its access is cancelled."""
    vin = await _locked_car(harness)
    kept, lost = await harness.application(), await harness.application()
    kept_headers = await harness.fleet_token(kept, [vin])
    lost_headers, token = await harness.vehicle_token(lost, vin)
    honk = await harness.send(
        kept_headers, vin, "honk_horn_flash_lights", "honk_flash", {"flash_times": 2}
    )
    assert honk.status_code == 202, honk.text
    unlock = await _pending_unlock(harness, lost_headers, vin)
    assert (
        await harness.client.post(
            f"/sandbox/admin/v1/consent/authorizations/{token['authorization_id']}/revoke",
            headers=ADMIN,
        )
    ).status_code == 200
    done = await harness.work()
    assert [row.id for row in done if row is not None] == [honk.json()["id"]]
    assert done[0] is not None and done[0].status == "executed"
    assert (await _row(harness, unlock))["status"] == "cancelled"
    assert await _locks(harness, vin) == "locked"


async def test_a_withdrawal_during_the_claim_waits_until_it_is_recorded(
    harness: Harness,
) -> None:
    """The claim holds the grant it read until its transaction commits: a withdrawal
    arriving meanwhile cannot slip between the check and `sent` (it lands after, when
    the command is with the carmaker, which is what it sees)."""
    vin = await _locked_car(harness)
    app = await harness.application()
    headers, token = await harness.vehicle_token(app, vin)
    command_id = await _pending_unlock(harness, headers, vin)
    async with harness.db.transaction() as conn:
        claimed = await service.claim(conn, worker_id="w", now_us=harness.clock.now_us(), limit=10)
        assert [row.id for row in claimed.sent] == [command_id]
        withdrawal = asyncio.create_task(
            harness.client.post(
                f"/sandbox/admin/v1/consent/authorizations/{token['authorization_id']}/revoke",
                headers=ADMIN,
            )
        )
        await asyncio.sleep(0.5)
        assert not withdrawal.done()  # held by the claim's transaction
    assert (await withdrawal).status_code == 200
    assert (await _row(harness, command_id))["status"] == "sent"


@pytest.mark.parametrize("how", ["withdrawn", "clearance revoked"])
async def test_a_waited_answer_shows_no_state_once_access_is_lost(
    harness: Harness, how: str
) -> None:
    """`Prefer: wait`: the access is checked when the request begins; an owner who
    withdraws while it waits (after the command was sent) must not have the car's new
    state shown to the application."""
    vin = await _locked_car(harness)
    app = await harness.application()
    if how == "withdrawn":
        headers, token = await harness.vehicle_token(app, vin)
    else:
        headers = await harness.fleet_token(app, [vin])
    waiting = asyncio.create_task(
        harness.send(
            headers, vin, "doors", "lock_unlock_doors", UNLOCK, extra={"Prefer": "wait=10"}
        )
    )
    for _ in range(100):
        rows = await tasks.claim(harness.state, "w", 10)
        if rows:
            break
        await asyncio.sleep(0.02)
    [row] = rows
    if how == "withdrawn":
        lost = await harness.client.post(
            f"/sandbox/admin/v1/consent/authorizations/{token['authorization_id']}/revoke",
            headers=ADMIN,
        )
    else:
        lost = await harness.client.delete(f"/sandbox/v1/fleets/vehicles/{vin}", headers=headers)
    assert lost.status_code == 200, lost.text
    executed = await tasks.execute(harness.state, row)
    assert executed is not None and executed.status == "executed"
    assert await _locks(harness, vin) == "unlocked"  # it was sent before the withdrawal
    answer = await waiting
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "executed"
    assert body["state"] == {}, body["state"]


async def test_the_api_description_says_when_access_is_read_again(harness: Harness) -> None:
    spec = (await harness.client.get("/openapi.json")).json()
    send = spec["paths"]["/v1/vehicle-commands/autoapi-13/{vin}"]["post"]
    read = spec["paths"]["/v1/vehicle-commands/{command_id}"]["get"]
    for operation in (send, read):
        assert "read again after a wait" in operation["description"]
        assert "`cancelled`" in operation["description"]
    assert "cancelled" in send["responses"]["202"]["content"]["application/json"]["schema"][
        "$ref"
    ] or "cancelled" in str(spec["components"]["schemas"]["CommandView"])
