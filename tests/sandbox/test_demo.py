"""The demo sandbox of a fresh install, and the runner as the app starts it."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import orjson
import pytest
from pydantic import SecretStr

from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Connection, Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.sandbox import service
from autoport.sandbox.demo import DEMO_VEHICLES, demo_vin, seed_demo
from autoport.sandbox.source import SandboxDataSource
from autoport.sandbox.tasks import DEMO_MARKER, sandbox_runner, seed_demo_if_fresh
from tests.sandbox.conftest import RecordingIngest


# The contract of autoport.apps.service (oauth branch), writing the real tables, so the
# demo is exercised against the schema it will meet once merged.
async def create_account(
    conn: Connection, *, environment: Environment, name: str, now_us: int
) -> dict[str, Any]:
    account = {"id": secrets.token_hex(12).upper(), "environment": environment.value}
    await conn.execute(
        "INSERT INTO accounts (id, environment, name, created_at) "
        "VALUES (:id, :environment, :name, :now)",
        {**account, "name": name, "now": now_us},
    )
    return account


async def create_application(
    conn: Connection,
    *,
    environment: Environment,
    account_id: str,
    name: str,
    redirect_uris: list[str],
    properties: list[str],
    brands: list[str],
    client_type: str,
    now_us: int,
) -> tuple[dict[str, Any], str]:
    application = {"id": secrets.token_hex(12).upper(), "client_id": secrets.token_hex(8)}
    await conn.execute(
        "INSERT INTO applications (id, environment, account_id, client_id, name, client_type,"
        " redirect_uris, properties, brands, created_at) VALUES (:id, :environment,"
        " :account_id, :client_id, :name, :client_type, :redirect_uris, :properties,"
        " :brands, :now)",
        {
            **application,
            "environment": environment.value,
            "account_id": account_id,
            "name": name,
            "client_type": client_type,
            "redirect_uris": orjson.dumps(redirect_uris).decode(),
            "properties": orjson.dumps(properties).decode(),
            "brands": orjson.dumps(brands).decode(),
            "now": now_us,
        },
    )
    return application, "demo-secret-" + secrets.token_hex(4)


async def test_the_demo_has_an_application_and_three_living_vehicles(
    database: Database, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    demo = await seed_demo(
        database,
        ingest=ingest,
        now_us=clock.now_us(),
        create_account=create_account,
        create_application=create_application,
    )
    assert demo.vins == [demo_vin(seed) for *_, seed in DEMO_VEHICLES]
    assert demo.client_secret is not None
    assert demo.client_secret.startswith("demo-secret-")
    row = await database.fetch_one(
        "SELECT environment, properties, brands FROM applications WHERE id = :id",
        {"id": demo.application_id},
    )
    assert row is not None
    assert row["environment"] == "sandbox"
    assert json.loads(row["brands"]) == ["sandbox"]
    assert "vehicle_location.coordinates" in json.loads(row["properties"])
    vehicles = {v.vin: v for v in await service.list_vehicles(database)}
    scenarios = sorted(vehicles[vin].scenario for vin in demo.vins)
    assert scenarios == ["charging", "driving", "parked"]
    assert ingest.keys(demo.vins[0]) >= {"vehicle_location.coordinates", "charging.battery_level"}
    text = demo.describe("http://127.0.0.1:8080/sandbox")
    assert demo.client_secret in text
    assert all(vin in text for vin in demo.vins)


async def test_without_the_apps_feature_the_demo_still_has_vehicles(
    database: Database, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    demo = await seed_demo(
        database, ingest=ingest, now_us=clock.now_us(), create_account=None, create_application=None
    )
    assert len(demo.vins) == 3
    assert demo.client_id is None
    assert "not installed" in demo.describe("http://x")


@pytest.fixture
async def app_state(sqlite_settings: Settings, clock: FrozenClock) -> Any:
    settings = sqlite_settings.model_copy(
        update={"admin_token": SecretStr("x"), "sandbox_tick_seconds": 0.01}
    )
    db = create_database(settings.resolved_database_url)
    await db.connect()
    try:
        yield AppState(settings=settings, database=db, clock=clock)
    finally:
        await db.close()


async def test_a_fresh_data_directory_gets_the_demo_once(
    app_state: AppState, ingest: RecordingIngest, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await seed_demo_if_fresh(app_state, ingest)
    marker = json.loads((app_state.settings.data_dir / DEMO_MARKER).read_text())
    assert len(marker["vins"]) == 3
    assert "Demo sandbox created" in capsys.readouterr().err
    assert not await seed_demo_if_fresh(app_state, ingest)
    assert len(await service.list_vehicles(app_state.database)) == 3


async def test_the_demo_can_be_switched_off(app_state: AppState, ingest: RecordingIngest) -> None:
    app_state.settings = app_state.settings.model_copy(update={"sandbox_demo": False})
    assert not await seed_demo_if_fresh(app_state, ingest)
    assert await service.list_vehicles(app_state.database) == []


async def test_the_runner_task_keeps_vehicles_moving(
    app_state: AppState, ingest: RecordingIngest, clock: FrozenClock
) -> None:
    async with sandbox_runner(app_state, ingest=ingest):
        assert isinstance(app_state.data_sources["sandbox"], SandboxDataSource)
        vins = [v.vin for v in await service.list_vehicles(app_state.database)]
        assert len(vins) == 3
        driving = next(
            v for v in await service.list_vehicles(app_state.database) if v.scenario == "driving"
        )
        clock.advance(30)
        for _ in range(200):
            await asyncio.sleep(0.01)
            if (await service.get_vehicle(app_state.database, driving.vin)).step >= 30:
                break
        moved = await service.get_vehicle(app_state.database, driving.vin)
    assert moved.step == 30
    assert moved.state.odometer_km > driving.state.odometer_km
    assert "diagnostics.odometer" in ingest.keys(driving.vin)
