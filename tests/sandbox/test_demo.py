"""The demo sandbox of a fresh install, and the runner as the app starts it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import SecretStr

from autoport.config import Settings, ensure_secrets
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database, create_database
from autoport.kit.state import AppState
from autoport.sandbox import service
from autoport.sandbox.demo import DEMO_REDIRECT_URI, DEMO_VEHICLES, demo_vin, seed_demo
from autoport.sandbox.tasks import DEMO_MARKER, sandbox_runner, seed_demo_if_fresh
from autoport.state import build_state
from tests.sandbox.conftest import RecordingIngest


async def test_the_demo_has_an_application_three_vehicles_and_their_clearances(
    database: Database, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    demo = await seed_demo(database, ingest=ingest, now_us=clock.now_us())
    assert demo.vins == [demo_vin(seed) for *_, seed in DEMO_VEHICLES]
    assert demo.client_secret
    row = await database.fetch_one(
        "SELECT environment, properties, brands, redirect_uris FROM applications WHERE id = :id",
        {"id": demo.application_id},
    )
    assert row is not None
    assert row["environment"] == "sandbox"
    assert json.loads(row["brands"]) == ["sandbox"]
    assert json.loads(row["redirect_uris"]) == [DEMO_REDIRECT_URI]
    vehicles = {v.vin: v for v in await service.list_vehicles(database.reader)}
    produced = set().union(*(vehicles[vin].properties for vin in demo.vins))
    assert set(json.loads(row["properties"])) == produced
    scenarios = sorted(vehicles[vin].scenario for vin in demo.vins)
    assert scenarios == ["charging", "driving", "parked"]
    # The data really landed in the store.
    stored = await database.fetch_one(
        "SELECT COUNT(*) AS n FROM vehicles WHERE environment = 'sandbox' AND vin = :vin",
        {"vin": demo.vins[0]},
    )
    assert stored is not None and stored["n"] == 1
    # Approved clearances, requested then approved, each change an event.
    clearances = await database.fetch_all(
        "SELECT vin, status, changelog FROM fleet_vehicles WHERE application_id = :app",
        {"app": demo.application_id},
    )
    assert sorted(r["vin"] for r in clearances) == sorted(demo.vins)
    for clearance in clearances:
        assert clearance["status"] == "approved"
        steps = [entry["status"] for entry in json.loads(clearance["changelog"])]
        assert steps == ["pending", "approved"]
    events = await database.fetch_all(
        "SELECT vin, payload FROM outbox WHERE event_type = 'fleet_clearance_changed' "
        "AND application_id = :app",
        {"app": demo.application_id},
    )
    changes = {(e["vin"], json.loads(e["payload"])["action"]) for e in events}
    assert changes == {(vin, action) for vin in demo.vins for action in ("pending", "approved")}
    text = demo.describe("http://127.0.0.1:8080/sandbox")
    assert demo.client_secret in text
    assert all(vin in text for vin in demo.vins)


@pytest.fixture
async def app_state(sqlite_settings: Settings, clock: FrozenClock) -> Any:
    settings = sqlite_settings.model_copy(
        update={
            "admin_token": SecretStr("x"),
            "sandbox_tick_seconds": 0.01,
            "sandbox_demo": True,
        }
    )
    settings, _ = ensure_secrets(settings)
    db = create_database(settings.resolved_database_url)
    await db.connect()
    try:
        # The app's parts (the runner reads the VINs being stepped), built as create_app
        # builds them.
        yield build_state(settings, db, clock)
    finally:
        await db.close()


async def test_a_fresh_data_directory_gets_the_demo_once(
    app_state: AppState, ingest: RecordingIngest, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await seed_demo_if_fresh(app_state, ingest)
    marker = json.loads((app_state.settings.data_dir / DEMO_MARKER).read_text())
    assert len(marker["vins"]) == 3
    # Not a terminal here: handed over in the 0600 file, the log says only where.
    assert "Demo sandbox created" not in capsys.readouterr().err
    handed_over = (app_state.settings.data_dir / "first-start-secrets.txt").read_text()
    assert "Demo sandbox created" in handed_over
    assert not await seed_demo_if_fresh(app_state, ingest)
    assert len(await service.list_vehicles(app_state.database.reader)) == 3


async def test_the_demo_can_be_switched_off(app_state: AppState, ingest: RecordingIngest) -> None:
    app_state.settings = app_state.settings.model_copy(update={"sandbox_demo": False})
    assert not await seed_demo_if_fresh(app_state, ingest)
    assert await service.list_vehicles(app_state.database.reader) == []


async def test_the_runner_task_keeps_vehicles_moving(
    app_state: AppState, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    async with sandbox_runner(app_state, ingest=ingest):
        vins = [v.vin for v in await service.list_vehicles(app_state.database.reader)]
        assert len(vins) == 3
        driving = next(
            v
            for v in await service.list_vehicles(app_state.database.reader)
            if v.scenario == "driving"
        )
        clock.advance(30)
        for _ in range(200):
            await asyncio.sleep(0.01)
            if (await service.get_vehicle(app_state.database.reader, driving.vin)).step >= 30:
                break
        moved = await service.get_vehicle(app_state.database.reader, driving.vin)
    assert moved.step == 30
    assert moved.state.odometer_km > driving.state.odometer_km
    assert "diagnostics.odometer" in ingest.keys(driving.vin)
