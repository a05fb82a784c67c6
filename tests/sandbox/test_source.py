"""The sandbox as a carmaker: the DataSource the pull calls and the per-vehicle behaviour
the sandbox connector reads, on both backends."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from autoport.ingestion.sources import DataSource, VehicleOffline
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.sandbox.source import BehaviourLookup, SandboxBehaviour, SandboxDataSource, behaviour

VIN = "SBXSRC00000000001"
BASE = "/admin/v1/sandbox"
WANTED = frozenset({"charging.battery_level", "vehicle_location.coordinates", "doors.locks"})


@pytest.fixture
async def vehicle(admin: httpx.AsyncClient) -> str:
    response = await admin.post(
        f"{BASE}/vehicles",
        json={"vin": VIN, "powertrain": "electric", "profile": "full", "scenario": "driving"},
    )
    assert response.status_code == 201
    return VIN


@pytest.fixture
def source(db: Database, clock: FrozenClock) -> SandboxDataSource:
    return SandboxDataSource(db, clock)


def test_it_is_a_data_source(source: SandboxDataSource) -> None:
    as_protocol: DataSource = source
    assert as_protocol is source


async def test_fetch_returns_the_current_values_asked_for(
    source: SandboxDataSource, vehicle: str, admin: httpx.AsyncClient
) -> None:
    result = await source.fetch(environment=Environment.sandbox, vin=vehicle, properties=WANTED)
    assert result is not None
    assert set(result.data) == {"charging", "vehicle_location", "doors"}
    assert set(result.data["charging"]) == {"battery_level"}
    assert len(result.data["doors"]["locks"]) == 4
    shown = (await admin.get(f"{BASE}/vehicles/{vehicle}")).json()["data"]
    assert result.data["charging"]["battery_level"] == shown["charging"]["battery_level"]


async def test_injected_failures_appear_in_the_fetch(
    source: SandboxDataSource, vehicle: str, admin: httpx.AsyncClient
) -> None:
    await admin.put(
        f"{BASE}/vehicles/{vehicle}/failures/charging.battery_level", json={"reason": "oem_error"}
    )
    await admin.put(
        f"{BASE}/vehicles/{vehicle}/failures/doors.locks", json={"reason": "execution_timeout"}
    )
    result = await source.fetch(environment=Environment.sandbox, vin=vehicle, properties=WANTED)
    assert result is not None
    battery = result.data["charging"]["battery_level"]
    assert battery["failure"]["reason"] == "oem_error"
    assert "data" not in battery
    locks = result.data["doors"]["locks"]
    assert [w["failure"]["reason"] for w in locks] == ["execution_timeout"]
    # The others still deliver data.
    assert "data" in result.data["vehicle_location"]["coordinates"]


async def test_an_offline_vehicle_raises_vehicle_offline(
    source: SandboxDataSource, vehicle: str, admin: httpx.AsyncClient
) -> None:
    await admin.patch(f"{BASE}/vehicles/{vehicle}/behaviour", json={"offline": True})
    with pytest.raises(VehicleOffline) as caught:
        await source.fetch(environment=Environment.sandbox, vin=vehicle, properties=WANTED)
    assert caught.value.status == 408
    await admin.patch(f"{BASE}/vehicles/{vehicle}/behaviour", json={"offline": False})
    assert await source.fetch(environment=Environment.sandbox, vin=vehicle, properties=WANTED)


async def test_a_slow_vehicle_exceeds_the_pulls_timeout(
    source: SandboxDataSource, vehicle: str, admin: httpx.AsyncClient
) -> None:
    await admin.patch(f"{BASE}/vehicles/{vehicle}/behaviour", json={"latency_seconds": 5})
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await source.fetch(environment=Environment.sandbox, vin=vehicle, properties=WANTED)
    assert 0.25 < time.monotonic() - started < 2
    # Within a generous timeout a little latency only delays the answer.
    await admin.patch(f"{BASE}/vehicles/{vehicle}/behaviour", json={"latency_seconds": 0.2})
    started = time.monotonic()
    async with asyncio.timeout(3):
        result = await source.fetch(environment=Environment.sandbox, vin=vehicle, properties=WANTED)
    assert result is not None
    assert time.monotonic() - started >= 0.2


async def test_an_unknown_vin_is_left_to_the_store(source: SandboxDataSource, vehicle: str) -> None:
    assert (
        await source.fetch(
            environment=Environment.sandbox, vin="SBXNOPE0000000000", properties=WANTED
        )
        is None
    )
    # A sandbox vehicle is never visible from production.
    assert (
        await source.fetch(environment=Environment.production, vin=vehicle, properties=WANTED)
        is None
    )


async def test_behaviour_lookup_reflects_the_emulator(
    db: Database, vehicle: str, admin: httpx.AsyncClient
) -> None:
    assert await behaviour(db, Environment.sandbox, vehicle) == SandboxBehaviour()
    await admin.patch(
        f"{BASE}/vehicles/{vehicle}/behaviour",
        json={
            "offline": True,
            "latency_seconds": 1.5,
            "eligible": False,
            "connectivity_status": "deactivated",
        },
    )
    await admin.put(
        f"{BASE}/vehicles/{vehicle}/failures/charging.status", json={"reason": "rate_limit"}
    )
    lookup = BehaviourLookup(db)
    assert await lookup(Environment.sandbox, vehicle) == SandboxBehaviour(
        offline=True,
        latency_seconds=1.5,
        failures={"charging.status": "rate_limit"},
        eligible=False,
        connectivity_status="deactivated",
    )
    assert await lookup(Environment.sandbox, "SBXNOPE0000000000") is None
    assert await lookup(Environment.production, vehicle) is None
