"""Privacy mode of a sandbox vehicle (the owner switched data sharing off in the car),
on both backends, through the real app (ASGI): the pull answers 403 and serves nothing,
the car sends nothing (no ingestion, no history rows, no stream events) while the
simulation goes on, and everything resumes when it is switched off."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit.clock import FrozenClock, from_iso
from autoport.kit.db import Database
from autoport.sandbox import service
from tests.history import stored
from tests.sandbox.conftest import RecordingIngest, cleared_reader

VIN = "SBXPRVACY00000001"
BASE = "/admin/v1/sandbox/vehicles"
PULL = f"/sandbox/v1/vehicle-data/autoapi-13/{VIN}"
PROPERTIES = ["charging.battery_level", "diagnostics.odometer", "vehicle_location.coordinates"]


@dataclass
class Reader:
    client: httpx.AsyncClient
    headers: dict[str, str]

    async def pull(self) -> httpx.Response:
        return await self.client.get(PULL, headers=self.headers)


@pytest.fixture
async def reader(
    sandbox_app: FastAPI, admin: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> AsyncIterator[Reader]:
    """A driving sandbox car and an application with its approved fleet clearance."""
    created = await admin.post(
        BASE,
        json={"vin": VIN, "powertrain": "electric", "profile": "full", "scenario": "driving"},
    )
    assert created.status_code == 201, created.text
    transport = httpx.ASGITransport(app=sandbox_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as client:
        headers = await cleared_reader(
            client, db, vins=[VIN], properties=PROPERTIES, now_us=clock.now_us()
        )
        yield Reader(client, headers)


async def privacy(admin: httpx.AsyncClient, on: bool) -> dict[str, Any]:
    response = await admin.patch(f"{BASE}/{VIN}/behaviour", json={"privacy_mode": on})
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    assert view["behaviour"]["privacy_mode"] is on
    return view


async def counts(db: Database) -> tuple[int, int]:
    """(history rows of VIN, vehicle_data_changed events: what streams and webhooks see)."""
    history = (await stored.points_by_vin(db)).get(VIN, 0)
    events = await db.fetch_value(
        "SELECT count(*) FROM outbox WHERE event_type = 'vehicle_data_changed'"
    )
    return int(history or 0), int(events or 0)


def assert_privacy_mode_403(response: httpx.Response) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert set(body) == {"errors", "request_id"}
    (item,) = body["errors"]
    assert item["title"] == "Privacy Mode"
    assert item["detail"].startswith("the vehicle is in privacy mode")
    assert "owner switched data sharing off in the vehicle" in item["detail"]
    assert "ratelimit-remaining" in response.headers


async def test_a_pull_in_privacy_mode_is_403_and_works_again_after(
    admin: httpx.AsyncClient, reader: Reader
) -> None:
    assert (await reader.pull()).status_code == 200
    await privacy(admin, True)
    assert_privacy_mode_403(await reader.pull())
    # Stored history was shared while sharing was on: it stays readable.
    history = await reader.client.get(
        f"{PULL}/history", params={"property": "diagnostics.odometer"}, headers=reader.headers
    )
    assert history.status_code == 200, history.text
    assert history.json()["values"]
    # Offline as well: privacy mode is what the pull reports.
    await admin.patch(f"{BASE}/{VIN}/behaviour", json={"offline": True})
    assert_privacy_mode_403(await reader.pull())
    await admin.patch(f"{BASE}/{VIN}/behaviour", json={"offline": False})
    await privacy(admin, False)
    response = await reader.pull()
    assert response.status_code == 200, response.text
    assert set(response.json()) >= {"charging", "diagnostics", "vehicle_location"}


async def test_the_car_sends_nothing_in_privacy_mode_and_resumes_after(
    admin: httpx.AsyncClient,
    reader: Reader,
    db: Database,
    ingest: RecordingIngest,
    clock: FrozenClock,
) -> None:
    await privacy(admin, True)
    ingested, before = len(ingest.calls), await counts(db)
    step = (await service.get_vehicle(db.reader, VIN)).step
    # The runner keeps simulating (the car still drives) but nothing is delivered.
    clock.advance(5)
    assert await service.tick(db, ingest=ingest, stepping=set(), now_us=clock.now_us()) == 1
    assert (await service.get_vehicle(db.reader, VIN)).step == step + 5
    # Neither do the emulator's controls make the car talk.
    scenario = await admin.put(f"{BASE}/{VIN}/scenario", json={"scenario": "parked"})
    assert scenario.status_code == 200, scenario.text
    stepped = await admin.post(f"{BASE}/{VIN}/step", json={"seconds": 60})
    assert stepped.status_code == 200, stepped.text
    changed = await admin.patch(
        f"{BASE}/{VIN}/properties",
        json={
            "charging.battery_level": 0.5,
            "usage.average_speed": {"unit": "kilometers_per_hour", "value": 42.0},
        },
    )
    assert changed.status_code == 200, changed.text
    assert "usage.average_speed" in changed.json()["pinned"]
    failed = await admin.put(
        f"{BASE}/{VIN}/failures/diagnostics.odometer", json={"reason": "oem_error"}
    )
    assert failed.status_code == 200, failed.text
    cleared = await admin.delete(f"{BASE}/{VIN}/failures/diagnostics.odometer")
    assert cleared.status_code == 200, cleared.text
    failed = await admin.put(
        f"{BASE}/{VIN}/failures/diagnostics.odometer", json={"reason": "oem_error"}
    )
    assert failed.status_code == 200, failed.text
    assert len(ingest.calls) == ingested
    assert await counts(db) == before
    assert_privacy_mode_403(await reader.pull())
    assert await counts(db) == before

    # Sharing on again: the car reports its whole current state at once.
    clock.advance(1)
    switched_off = clock.now_us()
    await privacy(admin, False)
    assert len(ingest.calls) == ingested + 1
    resumed = ingest.calls[-1]
    assert resumed.vin == VIN
    assert resumed.data["charging"]["battery_level"]["data"] == 0.5
    assert resumed.data["usage"]["average_speed"]["data"]["value"] == 42.0
    assert resumed.data["diagnostics"]["odometer"]["failure"]["reason"] == "oem_error"
    assert "vehicle_location" in resumed.data
    history, events = await counts(db)
    assert history > before[0] and events == before[1] + 1
    response = await reader.pull()
    assert response.status_code == 200, response.text
    assert response.json()["charging"]["battery_level"]["data"] == 0.5
    # And the runner delivers again.
    await admin.put(f"{BASE}/{VIN}/scenario", json={"scenario": "driving"})
    calls = len(ingest.calls)
    clock.advance(5)
    assert await service.tick(db, ingest=ingest, stepping=set(), now_us=clock.now_us()) == 1
    assert len(ingest.calls) > calls
    location = ingest.latest(VIN, "vehicle_location.coordinates")
    assert from_iso(location["timestamp"]) > switched_off


async def test_privacy_mode_is_refused_with_422_for_a_bad_value(
    admin: httpx.AsyncClient, reader: Reader
) -> None:
    for value in ("maybe", 2, [True], {"on": True}):
        response = await admin.patch(f"{BASE}/{VIN}/behaviour", json={"privacy_mode": value})
        assert response.status_code == 422, response.text
        detail = response.json()["errors"][0]["detail"]
        assert "privacy_mode" in detail
    shown = await admin.get(f"{BASE}/{VIN}")
    assert shown.json()["behaviour"]["privacy_mode"] is False
    assert (await reader.pull()).status_code == 200
