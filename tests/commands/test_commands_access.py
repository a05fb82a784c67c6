"""Who may send and see a command: every rule with its attacker (another application,
another vehicle, another brand, another environment, a token without the set scope, a
revoked token, no token)."""

from __future__ import annotations

from autoport.commands.tasks import command_worker
from autoport.kit.environments import Environment
from autoport.oauth import service as oauth_service
from tests.commands.conftest import LOCK, PROD, PROPERTIES, SANDBOX, Harness, new_vin

ARGS = {"locks_state": "locked"}


async def _mine(harness: Harness) -> tuple[str, dict[str, str], str]:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers, _ = await harness.vehicle_token(creds, vin)
    sent = await harness.send(headers, vin, "doors", "lock_unlock_doors", ARGS)
    assert sent.status_code == 202, sent.text
    return vin, headers, sent.json()["id"]


async def test_another_application_cannot_read_or_wait_on_my_command(harness: Harness) -> None:
    vin, _, command_id = await _mine(harness)
    intruder = await harness.application()
    their_headers = await harness.fleet_token(intruder, [vin])  # even cleared for the VIN
    got = await harness.get(their_headers, command_id)
    assert got.status_code == 404, got.text
    waited = await harness.client.get(
        f"/sandbox/v1/vehicle-commands/{command_id}", headers={**their_headers, "Prefer": "wait=1"}
    )
    assert waited.status_code == 404
    # Nor learn its id, status or owner through the in-flight conflict: only that one
    # is in flight.
    busy = await harness.send(their_headers, vin, "doors", "lock_unlock_doors", ARGS)
    assert busy.status_code == 409
    assert command_id not in busy.text and "location" not in busy.headers
    detail = busy.json()["errors"][0]["detail"]
    assert detail.startswith("a command of doors is in flight for this vehicle"), detail
    assert "pending" not in detail and "application" not in detail


async def test_a_vehicle_token_sees_only_its_vehicles_commands(harness: Harness) -> None:
    vin, _, command_id = await _mine(harness)
    creds = await harness.application()
    other_vin = await harness.sandbox_vehicle()
    mine_a, _ = await harness.vehicle_token(creds, vin)
    mine_b, _ = await harness.vehicle_token(creds, other_vin)
    sent = await harness.send(mine_a, vin, "climate", "start_stop_hvac", {"hvac_state": "active"})
    assert (await harness.get(mine_b, sent.json()["id"])).status_code == 404
    # The token for one VIN cannot command another.
    refused = await harness.send(mine_b, vin, "doors", "lock_unlock_doors", ARGS)
    assert refused.status_code == 403, refused.text
    assert command_id  # (the first application's command stays its own)


async def test_a_token_without_the_set_scope_is_refused_naming_it(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers, body = await harness.vehicle_token(
        creds, vin, commands=["honk_horn_flash_lights.honk_flash"]
    )
    assert "doors.set.locks_state" not in body["scope"]
    refused = await harness.send(headers, vin, "doors", "lock_unlock_doors", ARGS)
    assert refused.status_code == 403
    assert refused.json()["errors"][0]["source"] == "scope"
    assert "doors.set.locks_state" in refused.json()["errors"][0]["detail"]
    # A fleet token of an application that registered no commands.
    plain = await harness.application(commands=[])
    fleet = await harness.fleet_token(plain, [vin])
    refused = await harness.send(fleet, vin, "doors", "lock_unlock_doors", ARGS)
    assert refused.status_code == 403
    assert "doors.set.locks_state" in refused.json()["errors"][0]["detail"]
    assert await harness.db.fetch_value("SELECT count(*) FROM vehicle_commands") == 0


async def test_fleet_tokens_need_an_approved_clearance(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [])  # cleared for nothing
    refused = await harness.send(headers, vin, "doors", "lock_unlock_doors", ARGS)
    assert refused.status_code == 403, refused.text


async def test_revoked_pending_and_missing_tokens_are_refused(harness: Harness) -> None:
    vin, _headers, command_id = await _mine(harness)
    creds = await harness.application()
    pending, _ = await harness.vehicle_token(creds, vin, status="pending")
    refused = await harness.send(
        pending, vin, "climate", "start_stop_hvac", {"hvac_state": "active"}
    )
    assert refused.status_code == 403
    revoked, body = await harness.vehicle_token(creds, vin)
    async with harness.db.transaction() as conn:
        await oauth_service.set_authorization_status(
            conn,
            environment=SANDBOX,
            authorization_id=body["authorization_id"],
            status="revoked",
            now_us=harness.clock.now_us(),
        )
    refused = await harness.send(
        revoked, vin, "climate", "start_stop_hvac", {"hvac_state": "active"}
    )
    assert refused.status_code == 401
    assert (await harness.get(revoked, command_id)).status_code == 401
    unauthenticated = await harness.client.post(
        f"/sandbox/v1/vehicle-commands/autoapi-13/{vin}",
        json={"capability": "doors", "command": "lock_unlock_doors", "arguments": ARGS},
    )
    assert unauthenticated.status_code == 401
    assert (
        await harness.client.get(f"/sandbox/v1/vehicle-commands/{command_id}")
    ).status_code == 401


async def test_another_environment_cannot_reach_the_command(harness: Harness) -> None:
    _vin, headers, command_id = await _mine(harness)
    # The sandbox token on the production paths: refused as another environment's.
    assert (await harness.get(headers, command_id, environment=PROD)).status_code == 401
    prod = await harness.application(environment=PROD, commands=[LOCK])
    prod_headers, _ = await harness.vehicle_token(prod, "WBA" + new_vin("")[:14], commands=[LOCK])
    assert (await harness.get(prod_headers, command_id, environment=PROD)).status_code == 404


async def test_a_brand_no_longer_activated_is_refused(harness: Harness) -> None:
    creds = await harness.application(environment=PROD, commands=[LOCK], brands=["bmw", "audi"])
    vin = "WAU" + new_vin("")[:14]
    headers, _ = await harness.vehicle_token(creds, vin, commands=[LOCK], brand="audi")
    from autoport.apps import service as apps_service

    async with harness.db.transaction() as conn:
        await apps_service.update_application(
            conn,
            environment=Environment.production,
            app_id=creds.app_id,
            now_us=harness.clock.now_us(),
            brands=["bmw"],
        )
    harness.state.access_changed()
    refused = await harness.send(headers, vin, "doors", "lock_unlock_doors", ARGS, environment=PROD)
    assert refused.status_code == 403, refused.text
    assert "audi" in refused.json()["errors"][0]["detail"]


WITHOUT_LOCKS = tuple(p for p in PROPERTIES if p != "doors.locks_state")


async def test_the_new_state_is_shown_only_to_who_may_read_it(harness: Harness) -> None:
    """An application allowed to lock the doors (doors.set.locks_state) but not to read
    their lock state (doors.get.locks_state) learns nothing of it from the command's
    answer, neither waited for nor read back; a reader of it sees the new state."""
    vin = await harness.sandbox_vehicle()
    blind = await harness.application(properties=WITHOUT_LOCKS, commands=[LOCK])
    reader = await harness.application(commands=[LOCK])
    blind_fleet = await harness.fleet_token(blind, [vin], properties=WITHOUT_LOCKS)
    reader_fleet = await harness.fleet_token(reader, [vin])
    consent, body = await harness.vehicle_token(
        blind, vin, commands=[LOCK], properties=WITHOUT_LOCKS
    )
    assert "doors.set.locks_state" in body["scope"].split()
    assert "doors.get.locks_state" not in body["scope"].split()
    async with command_worker(harness.state):
        for headers, wanted in ((blind_fleet, "unlocked"), (consent, "locked")):
            harness.clock.advance(1)
            sent = await harness.send(
                headers,
                vin,
                "doors",
                "lock_unlock_doors",
                {"locks_state": wanted},
                extra={"Prefer": "wait=5"},
            )
            assert sent.status_code == 200 and sent.json()["status"] == "executed", sent.text
            assert sent.json()["state"] == {}, sent.text
            read = await harness.get(headers, sent.json()["id"])
            assert read.json()["status"] == "executed" and read.json()["state"] == {}
        harness.clock.advance(1)
        seen = await harness.send(
            reader_fleet,
            vin,
            "doors",
            "lock_unlock_doors",
            {"locks_state": "unlocked"},
            extra={"Prefer": "wait=5"},
        )
    assert seen.status_code == 200, seen.text
    state = seen.json()["state"]
    assert state["doors"]["locks_state"]["data"] == "unlocked"
    assert state["doors"]["locks_state"]["timestamp"]
    assert set(state) == {"doors"} and set(state["doors"]) == {"locks_state"}


async def test_an_idempotency_key_never_reaches_another_vehicles_command(
    harness: Harness,
) -> None:
    """A key is the application's for one vehicle. Two owners of one application's
    customers: the second owner's token sending the key the application used for the
    first owner's car got a 422 naming the first car's command (and a fleet application
    reusing its key per car could not send the second command at all)."""
    creds = await harness.application()
    first_vin, second_vin = await harness.sandbox_vehicle(), await harness.sandbox_vehicle()
    first_owner, _ = await harness.vehicle_token(creds, first_vin)
    second_owner, _ = await harness.vehicle_token(creds, second_vin)
    key = {"Idempotency-Key": "unlock-on-arrival"}
    mine = await harness.send(first_owner, first_vin, "doors", "lock_unlock_doors", ARGS, extra=key)
    assert mine.status_code == 202, mine.text
    theirs = await harness.send(
        second_owner, second_vin, "doors", "lock_unlock_doors", ARGS, extra=key
    )
    assert theirs.status_code == 202, theirs.text
    assert theirs.json()["vin"] == second_vin and "idempotent-replayed" not in theirs.headers
    assert mine.json()["id"] not in theirs.text
    again = await harness.send(
        first_owner, first_vin, "doors", "lock_unlock_doors", ARGS, extra=key
    )
    assert again.json()["id"] == mine.json()["id"]
    assert again.headers["idempotent-replayed"] == "true"
    # One fleet token, one key per car: a command for each.
    fleet = await harness.fleet_token(creds, [first_vin, second_vin])
    honk = {"flash_times": 1}
    answers = [
        await harness.send(
            fleet, vin, "honk_horn_flash_lights", "honk_flash", honk, extra={"Idempotency-Key": "k"}
        )
        for vin in (first_vin, second_vin)
    ]
    assert [a.status_code for a in answers] == [202, 202]
    assert answers[0].json()["id"] != answers[1].json()["id"]
