"""One data source for brand `sandbox`: the connector asks the emulator, so what the
emulator sets shows in the real pull endpoint and the SSE stream (real uvicorn server,
real client_credentials token, approved fleet clearance)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import Clock, FrozenClock, from_iso, now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.sandbox.demo import approve_fleet_clearances
from tests.factories import bearer, client_credentials_token, create_app_credentials
from tests.helpers.servers import uvicorn_in_loop
from tests.vehicle_data.test_freshness import WriteCounter

ADMIN = {"authorization": "Bearer pull-test-admin"}
BASE = "/admin/v1/sandbox/vehicles"
PROPERTIES = [
    "charging.battery_level",
    "diagnostics.odometer",
    "vehicle_location.coordinates",
]


@dataclass
class Live:
    client: httpx.AsyncClient
    db: Database
    vin: str
    token: str

    def pull_path(self) -> str:
        return f"/sandbox/v1/vehicle-data/autoapi-13/{self.vin}"


@pytest.fixture
async def live(settings: Settings) -> AsyncIterator[Live]:
    settings = settings.model_copy(
        update={
            "admin_token": SecretStr("pull-test-admin"),
            "sandbox_demo": False,
            "vehicle_data_fetch_timeout_seconds": 0.5,
        }
    )
    app = create_app(settings, clock=Clock(), run_background=True)
    async with (
        uvicorn_in_loop(app, access_log=False) as served,
        httpx.AsyncClient(base_url=served.base_url, timeout=10) as client,
    ):
        created = await client.post(
            BASE,
            headers=ADMIN,
            json={"powertrain": "electric", "profile": "full", "scenario": "driving"},
        )
        assert created.status_code == 201, created.text
        vin = created.json()["vin"]
        db: Database = app.state.autoport.database
        creds = await create_app_credentials(
            db, environment=Environment.sandbox, properties=PROPERTIES
        )
        await approve_fleet_clearances(
            db,
            application_id=creds.app_id,
            client_id=creds.client_id,
            properties=PROPERTIES,
            vins=[vin],
            now_us=now_us(),
        )
        token = await client_credentials_token(client, creds)
        yield Live(client, db, vin, token)


async def pull(live: Live) -> httpx.Response:
    return await live.client.get(live.pull_path(), headers=bearer(live.token))


async def test_a_sandbox_vehicle_is_pulled_through_the_connector(live: Live) -> None:
    response = await pull(live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["brand"] == "sandbox"
    assert set(body) >= {"charging", "diagnostics", "vehicle_location"}
    history = await live.client.get(
        f"{live.pull_path()}/history",
        params={"property": "diagnostics.odometer"},
        headers=bearer(live.token),
    )
    assert history.status_code == 200, history.text


async def test_an_offline_sandbox_vehicle_is_408(live: Live) -> None:
    changed = await live.client.patch(
        f"{BASE}/{live.vin}/behaviour", headers=ADMIN, json={"offline": True}
    )
    assert changed.status_code == 200, changed.text
    response = await pull(live)
    assert response.status_code == 408, response.text
    await live.client.patch(f"{BASE}/{live.vin}/behaviour", headers=ADMIN, json={"offline": False})
    assert (await pull(live)).status_code == 200


async def test_a_slow_sandbox_vehicle_is_504_past_the_fetch_timeout(live: Live) -> None:
    changed = await live.client.patch(
        f"{BASE}/{live.vin}/behaviour", headers=ADMIN, json={"latency_seconds": 2}
    )
    assert changed.status_code == 200, changed.text
    response = await pull(live)
    assert response.status_code == 504, response.text


async def sse_messages(live: Live, found: asyncio.Queue[dict[str, Any]]) -> None:
    headers = {**bearer(live.token), "Accept": "text/event-stream"}
    async with live.client.stream("GET", "/sandbox/v1/stream", headers=headers) as response:
        assert response.status_code == 200
        named = False  # an `event:` line: the stream's own events (start, gap, end)
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                named = True
            elif line == "":
                named = False
            elif line.startswith("data:") and not named:
                await found.put(orjson.loads(line[5:].strip()))


async def test_an_injected_failure_shows_in_pull_and_stream(live: Live) -> None:
    found: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    reader = asyncio.create_task(sse_messages(live, found))
    try:
        # The stream is live once the driving car's first message arrives (a new stream
        # starts at "now": the failure must come after it).
        async with asyncio.timeout(15):
            await found.get()
        injected = await live.client.put(
            f"{BASE}/{live.vin}/failures/charging.battery_level",
            headers=ADMIN,
            json={"reason": "rate_limit"},
        )
        assert injected.status_code == 200, injected.text
        response = await pull(live)
        assert response.status_code == 200, response.text
        wrapper = response.json()["charging"]["battery_level"]
        assert wrapper["failure"]["reason"] == "rate_limit"
        assert "data" not in wrapper
        async with asyncio.timeout(15):
            while True:
                message = await found.get()
                level = message.get("data", {}).get("charging", {}).get("battery_level")
                if message.get("vin") == live.vin and level and "failure" in level[0]:
                    assert level[0]["failure"]["reason"] == "rate_limit"
                    break
    finally:
        reader.cancel()


def _newest_us(message: dict[str, Any]) -> int:
    """The newest wrapper timestamp of a stream message (0 when it has none)."""
    stamps = [
        from_iso(wrapper["timestamp"])
        for group in message.get("data", {}).values()
        for wrappers in group.values()
        for wrapper in (wrappers if isinstance(wrappers, list) else [wrappers])
        if wrapper.get("timestamp")
    ]
    return max(stamps, default=0)


async def test_a_car_in_privacy_mode_streams_nothing_until_switched_off(live: Live) -> None:
    found: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    reader = asyncio.create_task(sse_messages(live, found))
    try:
        async with asyncio.timeout(15):
            await found.get()  # the stream is live: the driving car reports every tick
        changed = await live.client.patch(
            f"{BASE}/{live.vin}/behaviour", headers=ADMIN, json={"privacy_mode": True}
        )
        assert changed.status_code == 200, changed.text
        switched_on = now_us()
        response = await pull(live)
        assert response.status_code == 403, response.text
        assert "privacy mode" in response.json()["errors"][0]["detail"]
        # Three runner rounds (1 s each): whatever still arrives was measured before
        # privacy mode was switched on (a round in flight); nothing newer.
        loop = asyncio.get_running_loop()
        until = loop.time() + 3.0
        while (left := until - loop.time()) > 0:
            try:
                async with asyncio.timeout(left):
                    message = await found.get()
            except TimeoutError:
                break
            if message.get("vin") == live.vin:
                assert _newest_us(message) < switched_on, message
        changed = await live.client.patch(
            f"{BASE}/{live.vin}/behaviour", headers=ADMIN, json={"privacy_mode": False}
        )
        assert changed.status_code == 200, changed.text
        # The car reports again, starting with its state simulated meanwhile.
        async with asyncio.timeout(15):
            while True:
                message = await found.get()
                if message.get("vin") == live.vin and _newest_us(message) > switched_on:
                    break
        assert (await pull(live)).status_code == 200
    finally:
        reader.cancel()


async def test_pulls_of_a_car_standing_still_write_nothing(
    sandbox_app: FastAPI, admin: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    """The sandbox carmaker is asked at most once a second (its freshness window); a pull
    inside the window writes nothing, and a fetch that finds the car as stored writes
    only the window's own two rows (lease and outcome), no ingestion. (No background
    work runs in this app, so every write transaction counted is the pull's.)"""
    created = await admin.post(
        BASE,
        json={"powertrain": "electric", "profile": "full", "scenario": "parked", "running": False},
    )
    assert created.status_code == 201, created.text
    vin = created.json()["vin"]
    creds = await create_app_credentials(
        db, environment=Environment.sandbox, properties=PROPERTIES, now_us=clock.now_us()
    )
    await approve_fleet_clearances(
        db,
        application_id=creds.app_id,
        client_id=creds.client_id,
        properties=PROPERTIES,
        vins=[vin],
        now_us=clock.now_us(),
    )
    headers = bearer(await client_credentials_token(admin, creds))
    path = f"/sandbox/v1/vehicle-data/autoapi-13/{vin}"
    first = await admin.get(path, headers=headers)
    assert first.status_code == 200, first.text
    with WriteCounter(db) as inside:
        for _ in range(20):
            clock.advance(0.04)
            response = await admin.get(path, headers=headers)
            assert response.status_code == 200
            assert {**response.json(), "request_id": ""} == {**first.json(), "request_id": ""}
    assert inside.count == 0
    clock.advance(1)  # the sandbox's window (1 s) has passed
    with WriteCounter(db) as after:
        assert (await admin.get(path, headers=headers)).status_code == 200
    assert after.count == 2
