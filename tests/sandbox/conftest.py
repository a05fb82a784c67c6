"""Sandbox fixtures: an app with the admin token and the real ingestion, watched.

`RecordingIngest` wraps autoport.ingestion.service.ingest_vehicle_data: every call is
stored for real (pull, history and streams see it) and also recorded, so a test can say
what the simulator delivered; a point the catalog refuses fails the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.app import create_app
from autoport.catalog import validate_capabilities
from autoport.config import Settings
from autoport.ingestion.service import IngestReport, ingest_vehicle_data
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.sandbox import routes
from autoport.sandbox.demo import approve_fleet_clearances
from tests.factories import bearer, client_credentials_token, create_app_credentials

ADMIN_TOKEN = "sandbox-test-admin-token"
ADMIN = {"authorization": f"Bearer {ADMIN_TOKEN}"}


@dataclass
class Ingested:
    environment: Environment
    vin: str
    brand: str
    data: dict[str, dict[str, Any]]
    now_us: int
    source: str


@dataclass
class RecordingIngest:
    calls: list[Ingested] = field(default_factory=list)

    async def __call__(
        self,
        db: Database,
        *,
        environment: Environment,
        vin: str,
        brand: str,
        data: dict[str, dict[str, Any]],
        now_us: int,
        source: str,
    ) -> IngestReport:
        checked = validate_capabilities(data)
        report = await ingest_vehicle_data(
            db,
            environment=environment,
            vin=vin,
            brand=brand,
            data=data,
            now_us=now_us,
            source=source,
        )
        assert not report.rejected, report.rejected
        self.calls.append(Ingested(environment, vin, brand, checked, now_us, source))
        return report

    def latest(self, vin: str, key: str) -> Any:
        """The last wrapper ingested for "capability.property" of `vin`."""
        capability, _, name = key.partition(".")
        for call in reversed(self.calls):
            if call.vin == vin and name in call.data.get(capability, {}):
                return call.data[capability][name]
        raise AssertionError(f"{key} of {vin} was never ingested")

    def keys(self, vin: str) -> set[str]:
        return {
            f"{cap}.{name}"
            for call in self.calls
            if call.vin == vin
            for cap, group in call.data.items()
            for name in group
        }


@pytest.fixture
def ingest() -> RecordingIngest:
    return RecordingIngest()


@pytest.fixture
def admin_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"admin_token": SecretStr(ADMIN_TOKEN)})


@pytest.fixture
async def sandbox_app(
    admin_settings: Settings,
    clock: FrozenClock,
    ingest: RecordingIngest,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[FastAPI]:
    app = create_app(admin_settings, clock=clock, run_background=False)
    # The routes call the real ingestion; the wrapper also records (see RecordingIngest).
    monkeypatch.setattr(routes, "ingest_vehicle_data", ingest)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def admin(sandbox_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=sandbox_app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", headers=ADMIN
    ) as client:
        yield client


@pytest.fixture
def db(sandbox_app: FastAPI) -> Database:
    database: Database = sandbox_app.state.autoport.database
    return database


async def cleared_reader(
    client: httpx.AsyncClient, db: Database, *, vins: list[str], properties: list[str], now_us: int
) -> dict[str, str]:
    """The bearer headers of a new sandbox application whose fleet clearance of `vins`
    is approved (a real client_credentials token from the token endpoint)."""
    creds = await create_app_credentials(
        db, environment=Environment.sandbox, properties=properties, now_us=now_us
    )
    await approve_fleet_clearances(
        db,
        application_id=creds.app_id,
        client_id=creds.client_id,
        properties=properties,
        vins=vins,
        now_us=now_us,
    )
    return bearer(await client_credentials_token(client, creds))
