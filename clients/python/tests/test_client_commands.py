"""Vehicle commands through the client, sync and async, against the real server's demo
sandbox (its application may send every command the simulated car obeys): typed
requests from `autoport_client.commands`, `wait`, the idempotency key, `get_command`,
a typed quantity argument, and the errors of a bad request."""

from __future__ import annotations

import secrets

import pytest
from conftest import REDIRECT_URI, Demo, LiveServer, consent_callback

from autoport_client import (
    AsyncClient,
    Client,
    CommandRequest,
    NotFound,
    ValidationError,
    commands,
    pkce_pair,
)
from autoport_client.models._base import Quantity


def test_send_and_wait_for_a_typed_command(client: Client, demo: Demo) -> None:
    vin = demo.vins["parked"]
    done = client.send_command(
        vin, commands.doors.lock_unlock_doors(locks_state="unlocked"), wait=20
    )
    assert done.status == "executed", done.raw
    assert done.finished and done.failure is None
    assert (done.capability, done.command, done.vin) == ("doors", "lock_unlock_doors", vin)
    assert done.arguments == {"locks_state": "unlocked"}
    assert done.state is not None
    assert done.state.doors.locks_state.value == "unlocked"
    # Without wait: accepted at once; get_command waits for its end.
    accepted = client.send_command(vin, commands.doors.lock_unlock_doors(locks_state="locked"))
    assert accepted.status in ("pending", "sent", "executed")
    finished = client.get_command(accepted.id, wait=20)
    assert finished.id == accepted.id
    assert finished.status == "executed"
    assert client.get_command(accepted.id).status == "executed"


def test_the_same_idempotency_key_sends_once(client: Client, demo: Demo) -> None:
    vin = demo.vins["parked"]
    key = f"honk-{secrets.token_hex(4)}"
    honk = commands.honk_horn_flash_lights.honk_flash(
        honk_time=Quantity(1.5, "seconds"), flash_times=2
    )
    assert honk.arguments == {"honk_time": {"value": 1.5, "unit": "seconds"}, "flash_times": 2}
    first = client.send_command(vin, honk, idempotency_key=key)
    again = client.send_command(vin, honk, idempotency_key=key, wait=20)
    assert again.id == first.id
    assert again.status == "executed"


def test_a_bad_request_is_a_typed_error(client: Client, demo: Demo) -> None:
    vin = demo.vins["parked"]
    with pytest.raises(ValidationError) as refused:
        client.send_command(
            vin, CommandRequest("doors", "lock_unlock_doors", {"locks_state": "ajar"})
        )
    assert refused.value.request_id
    assert "locks_state" in str(refused.value)
    with pytest.raises(NotFound):
        client.get_command("0" * 32)


async def test_the_async_client_sends_and_waits(server: LiveServer, demo: Demo) -> None:
    vin = demo.vins["charging"]
    async with AsyncClient(
        server.root, demo.client_id, demo.client_secret, environment="sandbox"
    ) as client:
        limit = commands.charging.set_charge_limit(charge_limit=0.8)
        done = await client.send_command(vin, limit, wait=20)
        assert done.status == "executed", done.raw
        assert done.state is not None
        assert done.state.charging.charge_limit.value == 0.8, done.raw["state"]
        again = await client.get_command(done.id, wait=1)
        assert again.id == done.id and again.status == "executed"


def test_an_owner_grant_sends_commands_through_its_session(
    client: Client, server: LiveServer, demo: Demo
) -> None:
    """The consent grants the application's commands (`doors.set.locks_state` in the
    token's scope); the session sends them with the vehicle token."""
    vin = demo.vins["driving"]
    verifier, challenge = pkce_pair()
    callback = consent_callback(
        server, client, vin, app_id=demo.application_id, challenge=challenge
    )
    token = client.exchange_callback(callback, REDIRECT_URI, state="st-1", code_verifier=verifier)
    assert "doors.set.locks_state" in token.scope.split()
    session = client.vehicle(token)
    done = session.send_command(
        vin, commands.honk_horn_flash_lights.honk_flash(flash_times=1), wait=20
    )
    assert done.status == "executed", done.failure
    assert session.get_command(done.id).id == done.id
