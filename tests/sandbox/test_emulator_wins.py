"""A value set through the emulator always wins and is what the pull answers, also on a
paused car (created with `"running": false`) and on a running one between two steps.

The bug this guards: the values the emulator moved were delivered with the instant of the
vehicle's current step, the very instant the values they replace already carried, so the
store kept whichever serialized greater (a lower battery level lost). Both backends, the
real pull through the sandbox connector, a real client_credentials token."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from autoport.kit.clock import FrozenClock, to_iso
from autoport.kit.db import Database
from tests.sandbox.conftest import cleared_reader

VIN = "SBXTEST0000000007"
BASE = f"/admin/v1/sandbox/vehicles/{VIN}"
PULL = f"/sandbox/v1/vehicle-data/autoapi-13/{VIN}"
PROPERTIES = [
    "charging.battery_level",
    "charging.charge_limit",
    "diagnostics.odometer",
    "climate.hvac_state",
]
# Each lower than the car's own value, so that it serializes smaller and lost the tie.
SET = {
    "charging.battery_level": 0.05,
    "charging.charge_limit": 0.5,
    "diagnostics.odometer": {"value": 1.0, "unit": "kilometers"},
}


async def pull(admin: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, Any]:
    response = await admin.get(PULL, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def value(body: dict[str, Any], key: str) -> dict[str, Any]:
    capability, _, name = key.partition(".")
    wrapper: dict[str, Any] = body[capability][name]
    return wrapper


@pytest.mark.parametrize("running", [False, True])
async def test_values_set_by_hand_win_and_are_pulled(
    admin: httpx.AsyncClient,
    db: Database,
    clock: FrozenClock,
    running: bool,
) -> None:
    created = await admin.post(
        "/admin/v1/sandbox/vehicles",
        json={
            "vin": VIN,
            "powertrain": "electric",
            "profile": "full",
            "scenario": "parked",
            "seed": 3,
            "running": running,
        },
    )
    assert created.status_code == 201, created.text
    headers = await cleared_reader(
        admin, db, vins=[VIN], properties=PROPERTIES, now_us=clock.now_us()
    )
    before = await pull(admin, headers)
    assert value(before, "charging.battery_level")["data"] > SET["charging.battery_level"]
    assert value(before, "charging.charge_limit")["data"] > SET["charging.charge_limit"]
    assert value(before, "diagnostics.odometer")["data"]["value"] > 1.0

    # Less than a step later on the running car (the runner has not stepped), minutes
    # after on the paused one (within the token's 300 s).
    clock.advance(0.5 if running else 240)
    set_at = to_iso(clock.now_us())
    response = await admin.patch(f"{BASE}/properties", json=SET)
    assert response.status_code == 200, response.text
    after = await pull(admin, headers)
    for key, expected in SET.items():
        assert value(after, key) == {"data": expected, "timestamp": set_at}, key

    # A pinned property handed back to the simulator: its value returns, after the pin.
    await admin.patch(f"{BASE}/properties", json={"climate.hvac_state": "active"})
    clock.advance(0.25)
    cleared = await admin.delete(f"{BASE}/properties/climate.hvac_state")
    assert cleared.status_code == 200, cleared.text
    again = await pull(admin, headers)
    assert value(again, "climate.hvac_state") == {
        "data": "inactive",
        "timestamp": to_iso(clock.now_us()),
    }
    # The values set by hand stay (nothing older replaced them).
    for key, expected in SET.items():
        assert value(again, key)["data"] == expected, key
