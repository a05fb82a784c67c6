"""The command API end to end on both backends: every status path, validation, the
`Prefer: wait` preference, idempotency and the in-flight and rate limits."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from autoport.commands import tasks
from autoport.commands.tasks import command_worker
from autoport.config import Settings
from autoport.kit.clock import MICROS, FrozenClock
from autoport.state import typed_parts
from tests.commands.conftest import LOCK, PROD, SANDBOX, Harness, harness_for, new_vin
from tests.factories import bearer, client_credentials_token


async def _locked(harness: Harness, vin: str) -> str:
    data = (await harness.vehicle(vin))["data"]
    return str(data["doors"]["locks_state"]["data"])


async def test_lock_goes_pending_sent_executed_and_the_car_locks(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    await harness.subscribe(creds.app_id, ["command_changed"])
    headers, _ = await harness.vehicle_token(creds, vin)
    await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="unlocked")
    assert await _locked(harness, vin) == "unlocked"
    harness.clock.advance(1)  # the next state carries a later instant than the last one

    sent = await harness.send(headers, vin, "doors", "lock_unlock_doors", {"locks_state": "locked"})
    assert sent.status_code == 202, sent.text
    body = sent.json()
    assert body["status"] == "pending"
    assert body["vin"] == vin and body["capability"] == "doors"
    assert body["arguments"] == {"locks_state": "locked"}
    assert body["failure"] is None and body["created_at"] and body["sent_at"] is None
    assert sent.headers["location"] == f"/v1/vehicle-commands/{body['id']}"

    rows = await tasks.claim(harness.state, "w", 10)
    assert [r.status for r in rows] == ["sent"]
    assert (await harness.get(headers, body["id"])).json()["status"] == "sent"
    await tasks.execute(harness.state, rows[0])
    done = (await harness.get(headers, body["id"])).json()
    assert done["status"] == "executed" and done["failure"] is None
    assert done["sent_at"] and done["finished_at"]
    # The resulting state arrived through ingestion: the pull serves it, and the
    # executed command shows it.
    assert await _locked(harness, vin) == "locked"
    assert done["state"]["doors"]["locks_state"]["data"] == "locked"
    assert body["state"] is None  # pending: no state yet
    # Every status change went to webhooks and streams through the outbox.
    events = await harness.db.fetch_all(
        "SELECT consumer, payload FROM outbox WHERE event_type = 'command_changed' AND vin = :vin",
        {"vin": vin},
    )
    statuses = sorted(
        (e["consumer"], orjson.loads(e["payload"])["command"]["status"])
        for e in events
        if orjson.loads(e["payload"])["command"]["id"] == body["id"]
    )
    assert statuses == sorted(
        (consumer, status)
        for consumer in ("streaming", "webhooks")
        for status in ("pending", "sent", "executed")
    )


async def test_start_charging_unplugged_fails_with_a_reason(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle(scenario="parked")
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    done = await harness.run(headers, vin, "charging", "start_stop_charging", status="charging")
    assert done["status"] == "failed"
    assert done["failure"]["reason"] == "oem_error"
    assert "not plugged in" in done["failure"]["description"]


async def test_charge_limit_below_the_level_stops_charging(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle(scenario="charging")
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    admin = {"authorization": "Bearer commands-test-admin-token"}
    moved = await harness.client.patch(
        f"/admin/v1/sandbox/vehicles/{vin}/properties",
        headers=admin,
        json={"charging.battery_level": 0.7},
    )
    assert moved.status_code == 200, moved.text
    before = await harness.vehicle(vin)
    assert before["data"]["charging"]["status"]["data"] == "charging"
    done = await harness.run(headers, vin, "charging", "set_charge_limit", charge_limit=0.6)
    assert done["status"] == "executed", done
    after = await harness.vehicle(vin)
    assert after["data"]["charging"]["charge_limit"]["data"] == 0.6
    assert after["data"]["charging"]["status"]["data"] == "charging_complete"
    # Stopped charging can start again once the limit is above the level.
    done = await harness.run(headers, vin, "charging", "set_charge_limit", charge_limit=1.0)
    assert done["status"] == "executed"
    done = await harness.run(headers, vin, "charging", "start_stop_charging", status="charging")
    assert done["status"] == "executed", done
    assert (await harness.vehicle(vin))["data"]["charging"]["status"]["data"] == "charging"
    done = await harness.run(headers, vin, "charging", "start_stop_charging", status="not_charging")
    assert (await harness.vehicle(vin))["data"]["charging"]["status"]["data"] == "not_charging"


async def test_climate_honk_and_trunk_change_the_sandbox_car(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    temp = {"value": 28.0, "unit": "celsius"}
    done = await harness.run(
        headers, vin, "climate", "set_temperature_settings", driver_temperature_setting=temp
    )
    assert done["status"] == "executed"
    done = await harness.run(headers, vin, "climate", "start_stop_hvac", hvac_state="active")
    assert done["status"] == "executed"
    inside = (await harness.vehicle(vin))["data"]["climate"]["inside_temperature"]["data"]
    assert (await harness.vehicle(vin))["data"]["climate"]["hvac_state"]["data"] == "active"
    step = await harness.client.post(
        f"/admin/v1/sandbox/vehicles/{vin}/step",
        headers={"authorization": "Bearer commands-test-admin-token"},
        json={"seconds": 600},
    )
    assert step.status_code == 200, step.text
    warmer = (await harness.vehicle(vin))["data"]["climate"]["inside_temperature"]["data"]
    assert warmer["value"] > inside["value"] + 3  # heading for 28 °C
    honk = {"value": 2, "unit": "seconds"}
    done = await harness.run(
        headers, vin, "honk_horn_flash_lights", "honk_flash", honk_time=honk, flash_times=3
    )
    assert done["status"] == "executed"
    done = await harness.run(headers, vin, "trunk", "control_trunk", lock="unlocked")
    done = await harness.run(headers, vin, "trunk", "control_trunk", position="open")
    assert done["status"] == "executed"
    car = await harness.vehicle(vin)
    assert car["commands"]["horn_honks"] == 1 and car["commands"]["light_flashes"] == 3
    assert car["commands"]["hvac_active"] is True
    assert car["commands"]["executed"] == 5
    assert car["data"]["trunk"]["position"]["data"] == "open"


async def test_offline_times_out_privacy_refuses_scripted_failures(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    admin = {"authorization": "Bearer commands-test-admin-token"}
    base = f"/admin/v1/sandbox/vehicles/{vin}"
    await harness.client.patch(f"{base}/behaviour", headers=admin, json={"offline": True})
    done = await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="unlocked")
    assert done["status"] == "timed_out"
    assert done["failure"]["reason"] == "execution_timeout"
    await harness.client.patch(
        f"{base}/behaviour", headers=admin, json={"offline": False, "privacy_mode": True}
    )
    done = await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="unlocked")
    assert done["status"] == "failed"
    assert done["failure"]["reason"] == "privacy_mode_active"
    await harness.client.patch(f"{base}/behaviour", headers=admin, json={"privacy_mode": False})
    scripted = await harness.client.put(
        f"{base}/command-failures/{LOCK}",
        headers=admin,
        json={"reason": "unauthorised", "description": "the key is not paired"},
    )
    assert scripted.status_code == 200, scripted.text
    done = await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="unlocked")
    assert done["failure"] == {"reason": "unauthorised", "description": "the key is not paired"}
    bad = await harness.client.put(
        f"{base}/command-failures/{LOCK}", headers=admin, json={"reason": "nope"}
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["source"] == "reason"
    assert (await harness.vehicle(vin))["commands"]["executed"] == 0
    await harness.client.delete(f"{base}/command-failures/{LOCK}", headers=admin)
    done = await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="unlocked")
    assert done["status"] == "executed"


async def test_latency_past_the_deadline_times_out(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    admin = {"authorization": "Bearer commands-test-admin-token"}
    await harness.client.patch(
        f"/admin/v1/sandbox/vehicles/{vin}/behaviour", headers=admin, json={"latency_seconds": 5}
    )
    sent = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "unlocked"}
    )
    # The deadline is 0.3 s away: the car's 5 s latency passes it.
    harness.clock.advance(30 - 0.3)
    await harness.work()
    done = (await harness.get(headers, sent.json()["id"])).json()
    assert done["status"] == "timed_out", done
    assert (await harness.vehicle(vin))["commands"]["executed"] == 0


async def test_prefer_wait_answers_the_finished_command(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    async with command_worker(harness.state):
        sent = await harness.send(
            headers,
            vin,
            "doors",
            "lock_unlock_doors",
            {"locks_state": "unlocked"},
            extra={"Prefer": "respond-async, wait=5"},
        )
        assert sent.status_code == 200, sent.text
        assert sent.json()["status"] == "executed"
        assert sent.headers["preference-applied"] == "wait=5"
        got = await harness.client.get(
            f"/sandbox/v1/vehicle-commands/{sent.json()['id']}",
            headers={**headers, "Prefer": "wait=1"},
        )
        assert got.status_code == 200 and got.json()["status"] == "executed"


async def test_prefer_wait_times_out_with_202(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    sent = await harness.send(
        headers,
        vin,
        "doors",
        "lock_unlock_doors",
        {"locks_state": "unlocked"},
        extra={"Prefer": "wait=1"},
    )
    assert sent.status_code == 202 and sent.json()["status"] == "pending"
    assert sent.headers["preference-applied"] == "wait=1"


async def test_arguments_are_checked_against_the_catalog(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("doorz", "lock_unlock_doors", {"locks_state": "locked"}, "capability"),
        ("doors", "open_sesame", {}, "command"),
        ("doors", "lock_unlock_doors", {"locks_state": "welded"}, "arguments.locks_state"),
        ("doors", "lock_unlock_doors", {}, "arguments.locks_state"),
        ("doors", "lock_unlock_doors", {"locks_state": "locked", "x": 1}, "arguments.x"),
        ("charging", "set_charge_limit", {"charge_limit": 1.5}, "arguments.charge_limit"),
        ("honk_horn_flash_lights", "honk_flash", {}, "arguments"),
    ]
    for capability, command, arguments, source in cases:
        response = await harness.send(headers, vin, capability, command, arguments)
        assert response.status_code == 422, (capability, command, response.text)
        assert response.json()["errors"][0]["source"] == source, response.text
    bad_vin = await harness.send(headers, "SHORT", "doors", "lock_unlock_doors", {})
    assert bad_vin.status_code == 400
    missing = await harness.client.post(
        f"/sandbox/v1/vehicle-commands/autoapi-13/{vin}", headers=headers, json={"command": "x"}
    )
    assert missing.status_code in (400, 422), missing.text
    assert await harness.db.fetch_value("SELECT count(*) FROM vehicle_commands") == 0


async def test_idempotency_key_returns_the_same_command_once(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    key = {"Idempotency-Key": "lock-2026-11-24-a"}
    args = {"locks_state": "unlocked"}
    first = await harness.send(headers, vin, "doors", "lock_unlock_doors", args, extra=key)
    again = await harness.send(headers, vin, "doors", "lock_unlock_doors", args, extra=key)
    assert first.status_code == again.status_code == 202
    assert first.json()["id"] == again.json()["id"]
    assert again.headers["idempotent-replayed"] == "true"
    await harness.work()
    third = await harness.send(headers, vin, "doors", "lock_unlock_doors", args, extra=key)
    assert third.status_code == 200 and third.json()["status"] == "executed"
    assert third.json()["id"] == first.json()["id"]
    await harness.work()
    assert (await harness.vehicle(vin))["commands"]["executed"] == 1
    other = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "locked"}, extra=key
    )
    assert other.status_code == 422
    assert other.json()["errors"][0]["source"] == "Idempotency-Key"
    # Another application's key space is its own.
    creds2 = await harness.application()
    headers2 = await harness.fleet_token(creds2, [vin])
    own = await harness.send(headers2, vin, "doors", "lock_unlock_doors", args, extra=key)
    assert own.status_code == 202 and own.json()["id"] != first.json()["id"]
    await harness.work()
    # After 24 hours the key names a new command.
    harness.clock.advance(24 * 3600 + 1)
    headers = bearer(await client_credentials_token(harness.client, creds))
    later = await harness.send(headers, vin, "doors", "lock_unlock_doors", args, extra=key)
    assert later.status_code == 202 and later.json()["id"] != first.json()["id"]
    count = await harness.db.fetch_value(
        "SELECT count(*) FROM vehicle_commands WHERE application_id = :a", {"a": creds.app_id}
    )
    assert count == 2


async def test_concurrent_requests_with_one_key_make_one_command(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    key = {"Idempotency-Key": "burst"}
    answers = await asyncio.gather(
        *(
            harness.send(
                headers, vin, "doors", "lock_unlock_doors", {"locks_state": "locked"}, extra=key
            )
            for _ in range(8)
        )
    )
    assert {a.status_code for a in answers} == {202}
    assert len({a.json()["id"] for a in answers}) == 1
    assert await harness.db.fetch_value("SELECT count(*) FROM vehicle_commands") == 1


async def test_one_command_in_flight_per_vehicle_and_capability(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    first = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "unlocked"}
    )
    second = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "locked"}
    )
    assert second.status_code == 409, second.text
    assert first.json()["id"] in second.json()["errors"][0]["detail"]
    assert second.headers["location"].endswith(first.json()["id"])
    # Another capability of the same car is free.
    other = await harness.send(headers, vin, "climate", "start_stop_hvac", {"hvac_state": "active"})
    assert other.status_code == 202
    await harness.work()
    third = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "locked"}
    )
    assert third.status_code == 202


async def test_command_rate_limit_per_vehicle_apart_from_reads(
    command_settings: Settings, clock: FrozenClock
) -> None:
    limited = command_settings.model_copy(update={"vehicle_command_rate_limit": "2/minute"})
    async with harness_for(limited, clock) as harness:
        await _two_commands_then_429(harness)


async def _two_commands_then_429(harness: Harness) -> None:
    vin, other_vin = await harness.sandbox_vehicle(), await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin, other_vin])
    for _ in range(2):
        ok = await harness.send(
            headers, vin, "honk_horn_flash_lights", "honk_flash", {"flash_times": 1}
        )
        assert ok.status_code == 202, ok.text
        await harness.work()
    limited = await harness.send(
        headers, vin, "honk_horn_flash_lights", "honk_flash", {"flash_times": 1}
    )
    assert limited.status_code == 429, limited.text
    assert int(limited.headers["retry-after"]) >= 1
    # Another vehicle has its own budget; reads are not counted against commands.
    assert (
        await harness.send(
            headers, other_vin, "honk_horn_flash_lights", "honk_flash", {"flash_times": 1}
        )
    ).status_code == 202
    pull = await harness.client.get(f"/sandbox/v1/vehicle-data/autoapi-13/{vin}", headers=headers)
    assert pull.status_code == 200, pull.text


async def test_a_sent_command_is_never_sent_again(harness: Harness) -> None:
    """The worker's process dies after `sent` was committed: the command is timed_out by
    the sweep after its deadline, and never reaches the vehicle."""
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    sent = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "unlocked"}
    )
    claimed = await tasks.claim(harness.state, "dead-worker", 10)
    assert [c.id for c in claimed] == [sent.json()["id"]]
    # ...the process is gone. Other workers claim nothing; the deadline passes.
    assert await tasks.claim(harness.state, "live-worker", 10) == []
    harness.clock.advance(30 + tasks.SWEEP_GRACE_SECONDS + 0.1)
    assert await tasks.sweep(harness.state) == 1
    done = (await harness.get(headers, sent.json()["id"])).json()
    assert done["status"] == "timed_out"
    assert "not sent again" in done["failure"]["description"]
    assert await tasks.claim(harness.state, "live-worker", 10) == []
    car = await harness.vehicle(vin)
    assert car["commands"]["executed"] == 0
    # A late answer of the dead worker cannot overwrite the sweep's.
    assert await tasks.execute(harness.state, claimed[0]) is None


async def test_pending_past_its_deadline_is_timed_out_unsent(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    sent = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "unlocked"}
    )
    harness.clock.advance(31)
    assert await tasks.claim(harness.state, "w", 10) == []
    await tasks.sweep(harness.state)
    done = (await harness.get(headers, sent.json()["id"])).json()
    assert done["status"] == "timed_out" and done["sent_at"] is None


async def test_push_only_brand_fails_clearly(harness: Harness) -> None:
    creds = await harness.application(environment=PROD, commands=[LOCK])
    vin = "WBA" + new_vin("")[:14]
    headers, _ = await harness.vehicle_token(creds, vin, commands=[LOCK])
    sent = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "locked"}, environment=PROD
    )
    assert sent.status_code == 202, sent.text
    await harness.work()
    done = (await harness.get(headers, sent.json()["id"], environment=PROD)).json()
    assert done["status"] == "failed"
    assert "offers no remote commands" in done["failure"]["description"]


async def test_token_responses_show_the_set_scopes(harness: Harness) -> None:
    creds = await harness.application(commands=[LOCK, "honk_horn_flash_lights.honk_flash"])
    _, body = await harness.vehicle_token(creds, new_vin(), commands=[LOCK])
    scopes = body["scope"].split()
    assert "doors.set.locks_state" in scopes
    assert "honk_horn_flash_lights.set.honk_time" not in scopes
    response = await harness.client.post(
        creds.token_path, data={"grant_type": "client_credentials", **creds.auth()}
    )
    scopes = response.json()["scope"].split()
    assert {"doors.set.locks_state", "honk_horn_flash_lights.set.flash_times"} <= set(scopes)


async def test_the_command_catalog_is_served(harness: Harness) -> None:
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [])
    response = await harness.client.get("/sandbox/v1/vehicle-commands", headers=headers)
    assert response.status_code == 200
    found = {f"{c['capability']}.{c['command']}": c for c in response.json()["commands"]}
    assert len(found) == 63
    assert found[LOCK]["label_en"] == "Lock and unlock the doors"
    assert found[LOCK]["scopes"] == ["doors.set.locks_state"]


async def test_waiting_needs_no_busy_loop_of_sleeps(harness: Harness) -> None:
    """Prefer: wait against a command finished by another process (polled)."""
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    sent = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "unlocked"}
    )

    async def other_process() -> None:
        await asyncio.sleep(0.3)
        rows = await tasks.claim(harness.state, "elsewhere", 10)
        # Finished without this process's hub hearing of it.
        typed_parts(harness.state).command_hub.waiters.clear()
        for row in rows:
            await tasks.execute(harness.state, row)

    job = asyncio.create_task(other_process())
    started = asyncio.get_running_loop().time()
    got = await harness.client.get(
        f"/sandbox/v1/vehicle-commands/{sent.json()['id']}", headers={**headers, "Prefer": "wait=5"}
    )
    await job
    assert got.json()["status"] == "executed"
    assert asyncio.get_running_loop().time() - started < 2
    assert MICROS  # imported for the clock arithmetic above
    assert SANDBOX


async def test_prefer_wait_is_capped_per_application_with_429(
    command_settings: Settings, clock: FrozenClock
) -> None:
    """An application holds at most `vehicle_command_max_waiting_per_application` waiting
    requests (each a connection and, for another process's command, a read every 0.1 s);
    one more is 429 before any command is accepted. Other applications wait on."""
    settings = command_settings.model_copy(
        update={"vehicle_command_max_waiting_per_application": 2}
    )
    async with harness_for(settings, clock) as harness:
        creds, other = await harness.application(), await harness.application()
        vins = [await harness.sandbox_vehicle() for _ in range(4)]
        headers = await harness.fleet_token(creds, vins)
        other_headers = await harness.fleet_token(other, vins[3:])
        wait = {"Prefer": "wait=5"}
        args = {"locks_state": "locked"}
        waiting = [
            asyncio.create_task(
                harness.send(headers, vin, "doors", "lock_unlock_doors", args, extra=wait)
            )
            for vin in vins[:2]
        ]
        for _ in range(100):
            if await harness.db.fetch_value("SELECT count(*) FROM vehicle_commands") == 2:
                break
            await asyncio.sleep(0.02)
        refused = await harness.send(
            headers, vins[2], "doors", "lock_unlock_doors", args, extra=wait
        )
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["errors"][0]["source"] == "Prefer"
        count = "SELECT count(*) FROM vehicle_commands WHERE vin = :vin"
        assert await harness.db.fetch_value(count, {"vin": vins[2]}) == 0  # nothing accepted
        # A read that would wait counts too; one that does not wait is served.
        rows = await harness.db.fetch_all("SELECT id FROM vehicle_commands")
        read = await harness.client.get(
            f"/sandbox/v1/vehicle-commands/{rows[0]['id']}", headers={**headers, **wait}
        )
        assert read.status_code == 429
        assert (await harness.get(headers, rows[0]["id"])).status_code == 200
        # Without waiting, and another application's waits, go on.
        plain = await harness.send(headers, vins[2], "doors", "lock_unlock_doors", args)
        assert plain.status_code == 202, plain.text
        theirs = asyncio.create_task(
            harness.send(other_headers, vins[3], "climate", "start_stop_hvac",
                         {"hvac_state": "active"}, extra={"Prefer": "wait=1"})
        )  # fmt: skip
        for _ in range(100):
            if await harness.db.fetch_value(count, {"vin": vins[3]}) == 1:
                break
            await asyncio.sleep(0.02)
        await harness.work()
        assert [a.status_code for a in await asyncio.gather(*waiting, theirs)] == [200] * 3
        # The places are given back.
        again = await harness.send(
            headers,
            vins[0],
            "doors",
            "lock_unlock_doors",
            {"locks_state": "unlocked"},
            extra={"Prefer": "wait=1"},
        )
        assert again.status_code == 202, again.text
        assert typed_parts(harness.state).command_hub.waiting == {}
