"""End to end: a client_credentials token reads a vehicle exactly while the real fleet
worker (the sandbox environment's emulated carmaker, FrozenClock) holds its clearance
approved. Production's push-fed brands: tests/security/test_clearance.py."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.fleet.clearance import add, vehicle, work
from tests.fleet.conftest import Callers

VIN = "SBX00000000000007"
URL = f"/sandbox/v1/vehicle-data/autoapi-13/{VIN}"
TS = "2026-11-23T10:00:00.000000Z"
DATA: dict[str, Any] = {
    "charging": {
        "battery_level": {"data": 0.64, "timestamp": TS},
        "status": {"data": "charging", "timestamp": TS},
    },
    "diagnostics": {
        "odometer": {"data": {"unit": "kilometers", "value": 12_345.0}, "timestamp": TS}
    },
}


async def _store(app: FastAPI) -> None:
    state = app.state.autoport
    report = await ingest_vehicle_data(
        state.database,
        environment=Environment.sandbox,
        vin=VIN,
        brand="sandbox",
        data=DATA,
        now_us=state.clock.now_us(),
    )
    assert not report.rejected, report.rejected


async def test_a_cleared_fleet_vehicle_is_readable_until_its_clearance_is_revoked(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    await _store(app)
    fleet = callers.sandbox
    headers = fleet.headers

    before = await client.get(URL, headers=headers)
    assert before.status_code == 403
    assert "fleet clearance" in before.json()["errors"][0]["detail"]

    await add(client, fleet, {"vin": VIN, "brand": "sandbox"})
    pending = await client.get(URL, headers=headers)
    assert pending.status_code == 403, pending.text

    clock.advance(5)  # the sandbox carmaker's clearance delay
    assert await work(app, clock) == 1
    assert (await vehicle(client, fleet, VIN))["status"] == "approved"

    read = await client.get(URL, headers=headers)
    assert read.status_code == 200, read.text
    body = read.json()
    # Exactly the application's registered properties (charging.status is not one).
    assert body["vin"] == VIN
    assert body["charging"] == {"battery_level": DATA["charging"]["battery_level"]}
    assert body["diagnostics"] == DATA["diagnostics"]
    assert set(body) == {"request_id", "vin", "brand", "charging", "diagnostics"}

    # Another application of the same environment has no clearance for it.
    other = await client.get(URL, headers=callers.sandbox_other.headers)
    assert other.status_code == 403

    deleted = await client.delete(f"/sandbox/v1/fleets/vehicles/{VIN}", headers=headers)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["status"] == "revoking"
    assert (await client.get(URL, headers=headers)).status_code == 403

    clock.advance(1)  # the carmaker confirms the removal
    assert await work(app, clock) == 1
    assert (await vehicle(client, fleet, VIN))["status"] == "revoked"
    after = await client.get(URL, headers=headers)
    assert after.status_code == 403
    assert "fleet clearance" in after.json()["errors"][0]["detail"]


async def test_an_expired_client_credentials_token_is_401_even_with_a_clearance(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    await _store(app)
    fleet = callers.sandbox
    headers = fleet.headers
    await add(client, fleet, {"vin": VIN, "brand": "sandbox"})
    clock.advance(5)
    await work(app, clock)
    assert (await client.get(URL, headers=headers)).status_code == 200
    clock.advance(300)  # client_credentials tokens live 300 s
    expired = await client.get(URL, headers=headers)
    assert expired.status_code == 401
    assert "expired" in expired.json()["errors"][0]["detail"]
