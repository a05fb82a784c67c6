"""The sandbox console's Sandbox vehicles page, through the real app and the real
simulator on both backends: create a car, script it (scenario, steps, properties,
failures, behaviour) and see its track and chart points move; another account never
sees or changes it; viewers only look; the production console has no such page."""

from __future__ import annotations

import orjson

from autoport.kit.environments import Environment
from autoport.sandbox import service as sandbox
from autoport.sandbox.physics import Scenario
from autoport.sandbox.service import NewVehicle

from .conftest import Browser, Console, World
from .sandbox import VIN, created, page


async def series(browser: Browser, account: str, after: int | None = None) -> dict:  # type: ignore[type-arg]
    query = f"?after={after}" if after is not None else ""
    answer = await browser.get(page(account, VIN) + "/series.json" + query)
    assert answer.status_code == 200, answer.text
    return orjson.loads(answer.content)  # type: ignore[no-any-return]


async def test_script_a_car_and_watch_its_track_and_charts_move(
    console: Console, world: World
) -> None:
    browser = await console.signed_in(world.a.developer)
    location = await created(browser, world.a.id)
    assert location.endswith(page(world.a.id, VIN))
    shown = await browser.get(page(world.a.id, VIN))
    assert shown.status_code == 200
    assert "Test car" in shown.text and "<polyline" in shown.text
    first = await series(browser, world.a.id)
    assert len(first["series"]["odometer"]) == 1 and first["series"]["battery"] == []
    for _ in range(3):
        console.clock.advance(60)  # the car's data points carry the (frozen) clock's time
        await browser.get(page(world.a.id, VIN))
        stepped = await browser.post(page(world.a.id, VIN) + "/step", {"seconds": "60"})
        assert stepped.status_code == 303
    more = await series(browser, world.a.id, after=first["after"])
    odometer = [value for _, value in more["series"]["odometer"]]
    assert len(odometer) == 3 and odometer == sorted(odometer)
    assert odometer[0] > first["series"]["odometer"][0][1]
    assert (await series(browser, world.a.id, after=more["after"]))["series"]["odometer"] == []
    track = await browser.get(page(world.a.id, VIN) + "/track")
    assert "The last 4 positions" in track.text and "hx-trigger" not in track.text
    bad = await browser.get(page(world.a.id, VIN) + "/series.json?after=yesterday")
    assert bad.status_code == 400


async def test_scenario_properties_failures_behaviour_and_their_errors(
    console: Console, world: World
) -> None:
    browser = await console.signed_in(world.a.owner)
    await created(browser, world.a.id, powertrain="electric", scenario="parked")
    path = page(world.a.id, VIN)
    await browser.get(path)
    done = await browser.post(
        path + "/scenario", {"scenario": "charging", "time_scale": "10", "running": "1"}
    )
    assert done.status_code == 303
    vehicle = await sandbox.get_vehicle(console.database.reader, VIN)
    assert (vehicle.scenario, vehicle.time_scale, vehicle.running) == ("charging", 10.0, True)
    bad = await browser.post(path + "/scenario", {"scenario": "charging", "time_scale": "0"})
    assert bad.status_code == 422 and 'id="sc-time-scale-error"' in bad.text
    assert "time_scale: " in bad.text
    assert (await sandbox.get_vehicle(console.database.reader, VIN)).time_scale == 10.0

    done = await browser.post(
        path + "/properties", {"key": "charging.battery_level", "value": "0.42"}
    )
    assert done.status_code == 303
    figures = await series(browser, world.a.id)
    assert figures["series"]["battery"][-1][1] == 42.0
    for form, message in (
        ({"key": "charging.battery_level", "value": "nope"}, "not valid JSON"),
        ({"key": "charging.battery_level", "value": "7"}, "charging.battery_level"),
        ({"key": "no.such_thing", "value": "1"}, "no.such_thing"),
    ):
        refused = await browser.post(path + "/properties", form)
        assert refused.status_code == 422, form
        assert message in refused.text and 'role="alert"' in refused.text

    done = await browser.post(
        path + "/failures", {"key": "diagnostics.odometer", "reason": "rate_limit"}
    )
    assert done.status_code == 303
    assert (
        "diagnostics.odometer" in (await sandbox.get_vehicle(console.database.reader, VIN)).failures
    )
    unknown = await browser.post(
        path + "/failures", {"key": "diagnostics.odometer", "reason": "gremlins"}
    )
    assert unknown.status_code == 422
    done = await browser.post(path + "/failures/clear", {"key": "diagnostics.odometer"})
    assert done.status_code == 303
    assert (await sandbox.get_vehicle(console.database.reader, VIN)).failures == {}

    done = await browser.post(
        path + "/behaviour",
        {
            "offline": "1",
            "privacy_mode": "1",
            "latency_seconds": "2.5",
            "connectivity_status": "unknown",
        },
    )
    assert done.status_code == 303
    vehicle = await sandbox.get_vehicle(console.database.reader, VIN)
    assert vehicle.offline and vehicle.privacy_mode and not vehicle.eligible
    assert (vehicle.latency_seconds, vehicle.connectivity_status) == (2.5, "unknown")
    slow = await browser.post(path + "/behaviour", {"latency_seconds": "9999"})
    assert slow.status_code == 422 and "latency_seconds" in slow.text

    shown = await browser.get(path)
    assert "privacy mode" in shown.text and "Vehicle code" in shown.text
    deleted = await browser.post(path + "/delete", {})
    assert deleted.status_code == 303
    assert await sandbox.list_account_vehicles(console.database.reader, world.a.id) == []


async def test_create_errors_re_render_the_form(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.developer)
    await browser.get(page(world.a.id))
    bad_vin = await browser.post(page(world.a.id), {"vin": "TOO-SHORT", "time_scale": "1"})
    assert bad_vin.status_code == 422 and 'id="new-vin-error"' in bad_vin.text
    assert "TOO-SHORT" in bad_vin.text
    bad_scale = await browser.post(page(world.a.id), {"time_scale": "fast"})
    assert bad_scale.status_code == 422 and 'id="new-time-scale-error"' in bad_scale.text
    wrong = await browser.post(
        page(world.a.id), {"powertrain": "combustion", "scenario": "charging"}
    )
    assert wrong.status_code == 422 and 'id="new-scenario-error"' in wrong.text
    await created(browser, world.a.id)
    await browser.get(page(world.a.id))
    twice = await browser.post(page(world.a.id), {"vin": VIN})
    assert twice.status_code == 409 and "already exists" in twice.text


async def test_a_viewer_only_looks(console: Console, world: World) -> None:
    developer = await console.signed_in(world.a.developer)
    await created(developer, world.a.id)
    viewer = await console.signed_in(world.a.viewer)
    listed = await viewer.get(page(world.a.id))
    assert VIN in listed.text and "Create vehicle" not in listed.text
    shown = await viewer.get(page(world.a.id, VIN))
    assert shown.status_code == 200 and "/step" not in shown.text
    assert (await viewer.get(page(world.a.id, VIN) + "/series.json")).status_code == 200
    for action, form in (
        ("/step", {"seconds": "60"}),
        ("/scenario", {"scenario": "parked"}),
        ("/behaviour", {"offline": "1"}),
        ("/delete", {}),
    ):
        assert (await viewer.post(page(world.a.id, VIN) + action, form)).status_code == 403
    assert (await viewer.post(page(world.a.id), {"vin": "SBX00000000000778"})).status_code == 403
    vehicle = await sandbox.get_vehicle(console.database.reader, VIN)
    assert vehicle.step == 0 and not vehicle.offline


async def test_another_accounts_and_the_operators_cars_are_404_for_every_role(
    console: Console, world: World
) -> None:
    owner_b = await console.signed_in(world.b.owner)
    await created(owner_b, world.b.id)
    operators_car = "SBX00000000000888"
    await sandbox.create_vehicle(
        console.database,
        ingest=_ingest,
        spec=NewVehicle(vin=operators_car, scenario=Scenario.parked),
        now_us=console.clock.now_us(),
    )
    for person in world.a.people:
        browser = await console.signed_in(person)
        listed = await browser.get(page(world.a.id))
        assert VIN not in listed.text and operators_car not in listed.text
        for vin in (VIN, operators_car):
            for suffix in ("", "/track", "/series.json"):
                for account in (world.a.id, world.b.id):
                    answer = await browser.get(page(account, vin) + suffix)
                    assert answer.status_code == 404, (person.role, account, vin, suffix)
            for action in ("/step", "/delete", "/behaviour"):
                answer = await browser.post(page(world.a.id, vin) + action, {"seconds": "60"})
                assert answer.status_code in (403, 404), (person.role, action)
    assert (await sandbox.get_vehicle(console.database.reader, VIN)).step == 0
    # The operator reaches B's car through B's account page.
    operator = await console.operator()
    assert (await operator.get(page(world.b.id, VIN))).status_code == 200


async def test_the_production_console_has_no_sandbox_page(console: Console) -> None:
    account = await console.add_account("Prod", Environment.production)
    person = await console.add_user(
        account, "dev@prod.example.com", "developer", Environment.production
    )
    browser = await console.signed_in(person, prefix="")
    assert (await browser.get(f"/console/a/{account}/sandbox")).status_code == 404
    fleet = await browser.get(f"/console/a/{account}/fleet")
    assert fleet.status_code == 200 and '/sandbox"' not in fleet.text.split("<main")[0]


async def _ingest(db, **kwargs):
    from autoport.ingestion.service import ingest_vehicle_data

    return await ingest_vehicle_data(db, **kwargs)
