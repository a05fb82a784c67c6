"""The fleet clearance API's requests and its worker's round, shared by the fleet tests."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from autoport.brands.registry import registry_of
from autoport.fleet.tasks import process_due
from autoport.kit.clock import FrozenClock
from autoport.kit.state import AppState
from tests.fleet.conftest import TestApp

VIN = "SBX00000000000001"


async def work(app: FastAPI, clock: FrozenClock) -> int:
    state: AppState = app.state.autoport
    return await process_due(state.database, registry_of(state), clock=clock)


async def add(client: httpx.AsyncClient, caller: TestApp, *vehicles: Any) -> Any:
    response = await client.post(
        f"{caller.prefix}/v1/fleets/vehicles",
        json={"vehicles": list(vehicles)},
        headers=caller.headers,
    )
    assert response.status_code == 200, response.text
    return response.json()["vehicles"]


async def vehicle(client: httpx.AsyncClient, caller: TestApp, vin: str = VIN) -> Any:
    response = await client.get(f"{caller.prefix}/v1/fleets/vehicles/{vin}", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()
