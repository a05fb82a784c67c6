"""The sandbox admin API on both backends: vehicles, simulator controls, the emulator."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit.clock import FrozenClock, from_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.sandbox import routes, service
from autoport.sandbox.physics import haversine_m
from autoport.state import typed_parts
from tests.sandbox.conftest import RecordingIngest

VIN = "SBXTEST0000000001"
BASE = "/admin/v1/sandbox"


async def create(admin: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await admin.post(f"{BASE}/vehicles", json={"vin": VIN, **body})
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


async def test_create_list_show_delete(admin: httpx.AsyncClient, ingest: RecordingIngest) -> None:
    created = await create(admin, powertrain="electric", profile="full", scenario="driving", seed=5)
    assert created["vin"] == VIN
    assert created["brand"] == "sandbox"
    assert created["simulation"]["scenario"] == "driving"
    assert "charging.battery_level" in created["properties"]
    assert "diagnostics.fuel_level" not in created["properties"]
    # The first values are ingested at once, as brand sandbox in the sandbox environment.
    first = ingest.calls[0]
    assert (first.vin, first.brand, first.environment, first.source) == (
        VIN,
        "sandbox",
        Environment.sandbox,
        "sandbox",
    )
    assert "vehicle_location" in first.data

    listed = (await admin.get(f"{BASE}/vehicles")).json()["vehicles"]
    assert [v["vin"] for v in listed] == [VIN]

    shown = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()
    assert shown["data"]["charging"]["battery_level"]["data"] == pytest.approx(
        ingest.latest(VIN, "charging.battery_level")["data"]
    )

    assert (await admin.delete(f"{BASE}/vehicles/{VIN}")).status_code == 204
    assert (await admin.get(f"{BASE}/vehicles/{VIN}")).status_code == 404
    assert (await admin.get(f"{BASE}/vehicles")).json()["vehicles"] == []


async def test_a_vin_is_generated_when_none_is_given(admin: httpx.AsyncClient) -> None:
    response = await admin.post(f"{BASE}/vehicles", json={"scenario": "parked"})
    assert response.status_code == 201
    vin = response.json()["vin"]
    assert len(vin) == 17
    assert (await admin.get(f"{BASE}/vehicles/{vin}")).status_code == 200


async def test_duplicate_vin_is_409_and_keeps_the_first(admin: httpx.AsyncClient) -> None:
    await create(admin, scenario="charging", powertrain="electric")
    response = await admin.post(f"{BASE}/vehicles", json={"vin": VIN, "scenario": "parked"})
    assert response.status_code == 409
    assert VIN in response.json()["errors"][0]["detail"]
    shown = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()
    assert shown["simulation"]["scenario"] == "charging"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"vin": "SHORT"}, "vin"),
        ({"vin": "SBXTEST000000000I"}, "vin"),
        ({"powertrain": "steam"}, "powertrain"),
        ({"scenario": "flying"}, "scenario"),
        ({"profile": "deluxe"}, "profile"),
        ({"time_scale": 0}, "time_scale"),
        ({"powertrain": "combustion", "scenario": "charging"}, "scenario"),
        ({"extra_properties": ["charging.no_such_thing"]}, "extra_properties"),
        ({"colour": "red"}, "colour"),
    ],
)
async def test_bad_vehicle_is_422_naming_the_field(
    admin: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    response = await admin.post(f"{BASE}/vehicles", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert field in error["detail"] or field == error.get("source")
    assert (await admin.get(f"{BASE}/vehicles")).json()["vehicles"] == []


async def test_admin_token_is_required(admin: httpx.AsyncClient) -> None:
    response = await admin.get(f"{BASE}/vehicles", headers={"authorization": "Bearer wrong"})
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "", None),
        ("DELETE", "", None),
        ("PUT", "/scenario", {"scenario": "parked"}),
        ("POST", "/step", {"seconds": 10}),
        ("PATCH", "/properties", {"charging.battery_level": 0.5}),
        ("PUT", "/failures/charging.battery_level", {"reason": "unknown"}),
        ("PATCH", "/behaviour", {"offline": True}),
        ("GET", "/vehicle-code", None),
    ],
)
async def test_unknown_vin_is_404(
    admin: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None
) -> None:
    response = await admin.request(method, f"{BASE}/vehicles/SBXUNKNOWN0000000{path}", json=body)
    assert response.status_code == 404, response.text
    assert "SBXUNKNOWN0000000" in response.json()["errors"][0]["detail"]


async def test_setting_a_property_validates_it_and_ingests_it(
    admin: httpx.AsyncClient, ingest: RecordingIngest
) -> None:
    await create(admin, powertrain="electric", profile="full", scenario="parked", seed=1)
    response = await admin.patch(
        f"{BASE}/vehicles/{VIN}/properties",
        json={"charging.battery_level": 0.42, "climate.hvac_state": "active"},
    )
    assert response.status_code == 200, response.text
    assert ingest.latest(VIN, "charging.battery_level")["data"] == 0.42
    assert ingest.latest(VIN, "climate.hvac_state")["data"] == "active"
    # The battery is physical state: range follows it, and it is not pinned.
    assert ingest.latest(VIN, "charging.estimated_range")["data"]["value"] == pytest.approx(
        0.42 * 77 / 17 * 100, abs=0.2
    )
    vehicle = response.json()
    assert vehicle["pinned"] == {"climate.hvac_state": "active"}
    # An array property takes a list of values.
    response = await admin.patch(
        f"{BASE}/vehicles/{VIN}/properties",
        json={"doors.positions": [{"location": "front_left", "position": "open"}]},
    )
    assert response.status_code == 200, response.text
    wrappers = ingest.latest(VIN, "doors.positions")
    assert [w["data"] for w in wrappers] == [{"location": "front_left", "position": "open"}]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"charging.battery_level": 1.5}, "charging.battery_level"),
        ({"charging.battery_level": "full"}, "charging.battery_level"),
        ({"doors.locks_state": "ajar"}, "doors.locks_state"),
        ({"charging.no_such_property": 1}, "charging.no_such_property"),
        ({"nocapability.x": 1}, "nocapability.x"),
        ({"batterylevel": 1}, "batterylevel"),
        ({"doors.positions": {"location": "front_left", "position": "open"}}, "doors.positions"),
        ({"doors.positions": [{"location": "boot", "position": "open"}]}, "doors.positions[0]"),
        ({}, "capability.property"),
    ],
)
async def test_a_bad_property_value_is_422_naming_the_property_and_nothing_changes(
    admin: httpx.AsyncClient, ingest: RecordingIngest, body: dict[str, Any], named: str
) -> None:
    await create(admin, powertrain="electric", scenario="parked", seed=1)
    calls = len(ingest.calls)
    before = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()
    # A valid property alongside the bad one is not applied either.
    response = await admin.patch(
        f"{BASE}/vehicles/{VIN}/properties",
        json={"climate.hvac_state": "active", **body} if body else {},
    )
    assert response.status_code == 422, response.text
    assert named in response.json()["errors"][0]["detail"]
    assert len(ingest.calls) == calls
    after = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()
    assert after["pinned"] == before["pinned"] == {}
    assert after["data"] == before["data"]


async def test_a_pinned_property_is_not_overwritten_by_the_simulator_until_cleared(
    admin: httpx.AsyncClient, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    await create(admin, powertrain="electric", profile="full", scenario="driving", seed=2)
    pinned = {"latitude": 48.137, "longitude": 11.575}
    await admin.patch(
        f"{BASE}/vehicles/{VIN}/properties", json={"vehicle_location.coordinates": pinned}
    )
    await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 60})
    assert ingest.latest(VIN, "vehicle_location.coordinates")["data"] == pinned
    shown = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()
    assert shown["data"]["vehicle_location"]["coordinates"]["data"] == pinned
    response = await admin.delete(f"{BASE}/vehicles/{VIN}/properties/vehicle_location.coordinates")
    assert response.status_code == 200
    assert ingest.latest(VIN, "vehicle_location.coordinates")["data"] != pinned
    again = await admin.delete(f"{BASE}/vehicles/{VIN}/properties/vehicle_location.coordinates")
    assert again.status_code == 404


async def test_stepping_a_driving_car_moves_it_consistently(
    admin: httpx.AsyncClient, ingest: RecordingIngest
) -> None:
    await create(admin, powertrain="combustion", profile="full", scenario="driving", seed=3)
    start = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()["data"]
    response = await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 120})
    assert response.status_code == 200
    assert response.json()["simulation"]["step"] == 120
    end = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()["data"]
    km = (
        end["diagnostics"]["odometer"]["data"]["value"]
        - start["diagnostics"]["odometer"]["data"]["value"]
    )
    assert 0.3 < km < 120 * 70 / 3600
    a, b = (
        start["vehicle_location"]["coordinates"]["data"],
        end["vehicle_location"]["coordinates"]["data"],
    )
    assert (
        0
        < haversine_m(a["latitude"], a["longitude"], b["latitude"], b["longitude"])
        <= km * 1000 + 1
    )
    assert end["diagnostics"]["fuel_level"]["data"] < start["diagnostics"]["fuel_level"]["data"]
    trip = end["usage"]["distance_over_time"]["data"]
    assert trip["distance"]["value"] == pytest.approx(km, abs=0.002)
    assert trip["time"] == {"unit": "seconds", "value": 120}
    # The step's values went through ingestion too.
    ingested = ingest.latest(VIN, "diagnostics.odometer")
    assert ingested["data"] == end["diagnostics"]["odometer"]["data"]


async def test_scenario_change_restarts_it_and_keeps_the_odometer(
    admin: httpx.AsyncClient, ingest: RecordingIngest
) -> None:
    await create(admin, powertrain="electric", profile="full", scenario="driving", seed=3)
    await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 300})
    odometer = ingest.latest(VIN, "diagnostics.odometer")["data"]["value"]
    response = await admin.put(
        f"{BASE}/vehicles/{VIN}/scenario", json={"scenario": "charging", "seed": 9}
    )
    assert response.status_code == 200, response.text
    simulation = response.json()["simulation"]
    assert (simulation["scenario"], simulation["seed"], simulation["step"]) == ("charging", 9, 0)
    assert ingest.latest(VIN, "charging.status")["data"] == "charging"
    shown = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()["data"]
    assert shown["diagnostics"]["odometer"]["data"]["value"] == pytest.approx(odometer)
    bad = await admin.put(f"{BASE}/vehicles/{VIN}/scenario", json={"time_scale": -1})
    assert bad.status_code == 422
    assert "time_scale" in bad.json()["errors"][0]["detail"]


async def test_failure_injection_for_each_reason(
    admin: httpx.AsyncClient, ingest: RecordingIngest
) -> None:
    await create(admin, powertrain="electric", scenario="parked", seed=1)
    from autoport.catalog.validation import FAILURE_REASONS

    for reason in FAILURE_REASONS:
        response = await admin.put(
            f"{BASE}/vehicles/{VIN}/failures/charging.battery_level", json={"reason": reason}
        )
        assert response.status_code == 200, response.text
        wrapper = ingest.latest(VIN, "charging.battery_level")
        assert wrapper["failure"]["reason"] == reason
        assert "data" not in wrapper
        shown = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()
        assert shown["data"]["charging"]["battery_level"]["failure"]["reason"] == reason
    bad = await admin.put(
        f"{BASE}/vehicles/{VIN}/failures/charging.battery_level", json={"reason": "gremlins"}
    )
    assert bad.status_code == 422
    assert "reason" in bad.json()["errors"][0]["detail"]
    cleared = await admin.delete(f"{BASE}/vehicles/{VIN}/failures/charging.battery_level")
    assert cleared.status_code == 200
    assert "data" in ingest.latest(VIN, "charging.battery_level")
    missing = await admin.delete(f"{BASE}/vehicles/{VIN}/failures/charging.battery_level")
    assert missing.status_code == 404


async def test_a_failing_property_is_not_overwritten_by_the_simulator(
    admin: httpx.AsyncClient, ingest: RecordingIngest
) -> None:
    await create(admin, powertrain="electric", profile="full", scenario="driving", seed=4)
    await admin.put(
        f"{BASE}/vehicles/{VIN}/failures/vehicle_location.coordinates",
        json={"reason": "privacy_mode_active", "description": "owner enabled privacy mode"},
    )
    await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 30})
    wrapper = ingest.latest(VIN, "vehicle_location.coordinates")
    assert wrapper["failure"] == {
        "reason": "privacy_mode_active",
        "description": "owner enabled privacy mode",
    }


async def test_behaviour_changes_and_validation(admin: httpx.AsyncClient) -> None:
    await create(admin)
    response = await admin.patch(
        f"{BASE}/vehicles/{VIN}/behaviour",
        json={"offline": True, "latency_seconds": 2.5, "eligible": False},
    )
    assert response.status_code == 200
    assert response.json()["behaviour"] == {
        "offline": True,
        "latency_seconds": 2.5,
        "eligible": False,
        "connectivity_status": "activated",
        "privacy_mode": False,
    }
    for body, field in [
        ({"latency_seconds": -1}, "latency_seconds"),
        ({"connectivity_status": "maybe"}, "connectivity_status"),
        ({"offline": "sometimes"}, "offline"),
        ({"privacy_mode": "maybe"}, "privacy_mode"),
        ({"privacy_mode": 2}, "privacy_mode"),
        ({"privacy_mode": [True]}, "privacy_mode"),
    ]:
        bad = await admin.patch(f"{BASE}/vehicles/{VIN}/behaviour", json=body)
        assert bad.status_code == 422, bad.text
        assert field in bad.json()["errors"][0]["detail"]


async def test_vehicle_code_comes_from_the_consent_provider(
    admin: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await create(admin)
    # Without a consent flow waiting for it there is no code.
    response = await admin.get(f"{BASE}/vehicles/{VIN}/vehicle-code")
    assert response.status_code == 200
    assert response.json() == {"vin": VIN, "vehicle_code": None}
    asked: list[tuple[Environment, str]] = []

    async def provider(conn: Any, *, environment: Environment, vin: str, now_us: int) -> str:
        asked.append((environment, vin))
        return "483920"

    monkeypatch.setattr(routes, "current_vehicle_code", provider)
    response = await admin.get(f"{BASE}/vehicles/{VIN}/vehicle-code")
    assert response.json() == {"vin": VIN, "vehicle_code": "483920"}
    assert asked == [(Environment.sandbox, VIN)]


async def test_replay_endpoint_is_deterministic(admin: httpx.AsyncClient) -> None:
    body = {"scenario": "driving", "powertrain": "electric", "seed": 77, "steps": 30}
    first = await admin.post(f"{BASE}/replay", json=body)
    second = await admin.post(f"{BASE}/replay", json=body)
    assert first.status_code == 200, first.text
    assert first.content == second.content
    points = first.json()["points"]
    assert len(points) == 31
    assert from_iso(points[30]["timestamp"]) - from_iso(points[0]["timestamp"]) == 30_000_000
    other = await admin.post(f"{BASE}/replay", json={**body, "seed": 78})
    assert other.json() != first.json()
    bad = await admin.post(
        f"{BASE}/replay", json={**body, "powertrain": "combustion", "scenario": "charging"}
    )
    assert bad.status_code == 422
    bad = await admin.post(f"{BASE}/replay", json={**body, "start": "yesterday"})
    assert bad.status_code == 422
    assert "start" in bad.json()["errors"][0]["detail"]


async def test_the_runner_advances_running_vehicles_with_the_clock(
    admin: httpx.AsyncClient, db: Database, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    await create(
        admin, powertrain="electric", profile="standard", scenario="charging", seed=6, time_scale=60
    )
    paused_vin = "SBXTEST0000000002"
    await admin.post(
        f"{BASE}/vehicles", json={"vin": paused_vin, "scenario": "driving", "running": False}
    )
    level = ingest.latest(VIN, "charging.battery_level")["data"]
    calls = len(ingest.calls)
    clock.advance(10)  # ten real seconds at 60x: ten simulated minutes
    assert await service.tick(db, ingest=ingest, stepping=set(), now_us=clock.now_us()) == 1
    vehicle = await service.get_vehicle(db.reader, VIN)
    assert vehicle.step == 600
    new_level = ingest.latest(VIN, "charging.battery_level")
    assert new_level["data"] > level
    # Values carry the time of their step.
    assert from_iso(new_level["timestamp"]) == clock.now_us()
    assert all(call.vin == VIN for call in ingest.calls[calls:])
    # Nothing is due again at the same instant.
    assert await service.tick(db, ingest=ingest, stepping=set(), now_us=clock.now_us()) == 0
    assert (await service.get_vehicle(db.reader, paused_vin)).step == 0
    # Resumed, it continues from now rather than jumping over the paused time.
    clock.advance(100)
    await admin.put(f"{BASE}/vehicles/{paused_vin}/scenario", json={"running": True})
    clock.advance(5)
    await service.tick(db, ingest=ingest, stepping=set(), now_us=clock.now_us())
    assert (await service.get_vehicle(db.reader, paused_vin)).step == 5


async def test_a_long_step_lets_other_work_run_and_the_runner_leaves_the_car_alone(
    sandbox_app: FastAPI,
    admin: httpx.AsyncClient,
    db: Database,
    ingest: RecordingIngest,
    clock: FrozenClock,
) -> None:
    """A step of 100,000 simulated seconds (seconds of CPU) runs in pieces: the event
    loop serves other work in between (it was held for the whole step), and the runner,
    ticking meanwhile, leaves the car to the step (its own advance would turn the
    step's write into a 409)."""
    await create(admin, scenario="driving", seed=3)
    # The app's set of the VINs it is stepping, as its runner sees it.
    stepping = typed_parts(sandbox_app.state.autoport).stepping
    step = asyncio.ensure_future(
        admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 100_000})
    )
    loop = asyncio.get_running_loop()
    started = last = loop.time()
    longest, ticked = 0.0, None
    while not step.done():
        await asyncio.sleep(0)
        now = loop.time()
        last, longest = now, max(longest, now - last)
        if ticked is None and VIN in stepping:
            clock.advance(60)
            ticked = await service.tick(db, ingest=ingest, stepping=stepping, now_us=clock.now_us())
            last = loop.time()
    response = step.result()
    took = loop.time() - started
    assert response.status_code == 200, response.text
    assert response.json()["simulation"]["step"] == 100_000
    assert ticked == 0
    # Held in one piece, the longest wait would be most of the step; a piece is a small
    # part of it, also on a busy machine (a bound in seconds is not).
    assert longest < took / 4, f"the loop was held for {longest:.2f} s of {took:.2f} s"
    # A second step while one runs is refused, not interleaved.
    again = asyncio.ensure_future(
        admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 50_000})
    )
    while VIN not in stepping and not again.done():
        await asyncio.sleep(0)
    refused = await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 10})
    assert refused.status_code == 409, refused.text
    assert (await again).status_code == 200


async def test_the_runner_skips_long_downtime(
    admin: httpx.AsyncClient, db: Database, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    await create(admin, scenario="parked")
    clock.advance(86_400)
    await service.tick(db, ingest=ingest, stepping=set(), now_us=clock.now_us(), max_catch_up=100)
    vehicle = await service.get_vehicle(db.reader, VIN)
    assert vehicle.step == 100
    assert vehicle.due_step(clock.now_us()) == 100


def _values(data: dict[str, Any]) -> dict[str, Any]:
    """Capability layout without timestamps: {"cap.prop": data}."""
    out: dict[str, Any] = {}
    for capability, group in data.items():
        for name, wrapper in group.items():
            out[f"{capability}.{name}"] = (
                [w["data"] for w in wrapper] if isinstance(wrapper, list) else wrapper["data"]
            )
    return out


async def test_a_vehicle_with_a_seed_follows_the_replay_of_that_seed(
    admin: httpx.AsyncClient,
) -> None:
    await create(admin, powertrain="electric", profile="full", scenario="driving", seed=42)
    await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 40})
    await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 80})
    shown = _values((await admin.get(f"{BASE}/vehicles/{VIN}")).json()["data"])
    replayed = await admin.post(
        f"{BASE}/replay",
        json={"scenario": "driving", "powertrain": "electric", "profile": "full", "seed": 42,
              "steps": 120},
    )  # fmt: skip
    expected: dict[str, Any] = {}
    for point in replayed.json()["points"]:
        expected.update(_values(point["data"]))
    assert shown == expected


async def test_two_runners_never_deliver_the_same_steps_twice(
    admin: httpx.AsyncClient, db: Database, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    await create(admin, powertrain="electric", scenario="driving", seed=8)
    stale = await service.get_vehicle(db.reader, VIN)
    clock.advance(5)
    first = await service.advance_vehicle(
        db, ingest=ingest, vehicle=stale, steps=5, now_us=clock.now_us()
    )
    assert first is not None
    calls = len(ingest.calls)
    # A second replica that read the same version loses the race and sends nothing.
    second = await service.advance_vehicle(
        db, ingest=ingest, vehicle=stale, steps=5, now_us=clock.now_us()
    )
    assert second is None
    assert len(ingest.calls) == calls
    assert (await service.get_vehicle(db.reader, VIN)).step == 5


@pytest.mark.parametrize("body", [[1, 2], "text", 3])
async def test_properties_must_be_an_object(admin: httpx.AsyncClient, body: Any) -> None:
    await create(admin)
    response = await admin.patch(f"{BASE}/vehicles/{VIN}/properties", json=body)
    assert response.status_code == 422
    assert response.json()["errors"][0]["detail"]


async def test_step_seconds_out_of_range_is_422(admin: httpx.AsyncClient) -> None:
    response = await admin.post(f"{BASE}/vehicles", json={"step_seconds": 0})
    assert response.status_code == 422
    assert "step_seconds" in response.json()["errors"][0]["detail"]
    response = await admin.post(f"{BASE}/vehicles", json={"vin": VIN})
    assert response.status_code == 201
    bad_step = await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 0})
    assert bad_step.status_code == 422
    assert "seconds" in bad_step.json()["errors"][0]["detail"]


async def test_event_times_stay_put_when_the_time_scale_changes_or_time_is_stepped(
    admin: httpx.AsyncClient,
) -> None:
    await create(
        admin, powertrain="combustion", profile="full", scenario="crash", seed=7, time_scale=10
    )
    await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 120})

    async def ecall() -> str:
        data = (await admin.get(f"{BASE}/vehicles/{VIN}")).json()["data"]
        value: str = data["maintenance"]["last_ecall"]["data"]
        return value

    crashed_at = await ecall()
    changed = await admin.put(f"{BASE}/vehicles/{VIN}/scenario", json={"time_scale": 1})
    assert changed.status_code == 200
    assert await ecall() == crashed_at
    await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 600})
    assert await ecall() == crashed_at


@pytest.mark.parametrize("scale", [5e-324, 1e-9, 0.0009])
async def test_a_time_scale_too_close_to_zero_is_422_not_a_500_on_step(
    admin: httpx.AsyncClient, scale: float
) -> None:
    # Found by the fuzzer (tests/api): steps sit at step_seconds / time_scale in real
    # time, so a denormal scale made the next step infinitely far away.
    created = await admin.post(f"{BASE}/vehicles", json={"vin": VIN, "time_scale": scale})
    assert created.status_code == 422
    assert created.json()["errors"][0]["source"] == "time_scale"
    await create(admin, step_seconds=60)
    changed = await admin.put(f"{BASE}/vehicles/{VIN}/scenario", json={"time_scale": scale})
    assert changed.status_code == 422
    assert changed.json()["errors"][0]["source"] == "time_scale"
    slowest = await admin.put(
        f"{BASE}/vehicles/{VIN}/scenario", json={"time_scale": service.MIN_TIME_SCALE}
    )
    assert slowest.status_code == 200
    week = await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 7 * 86_400})
    assert week.status_code == 200, week.text
    assert week.json()["simulation"]["step"] == 7 * 86_400 // 60
