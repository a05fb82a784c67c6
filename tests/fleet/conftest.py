"""Callers for the fleet and eligibility tests.

Until the oauth branch is merged, bearer tokens are resolved by ONE test authenticator
installed here: it maps fixed token strings to Callers built from application rows this
fixture inserts into `accounts`/`applications`. When oauth lands, `callers` is the one
place to swap for real client_credentials tokens (tests/factories.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import orjson
import pytest
from fastapi import FastAPI, Request

from autoport.config import Settings
from autoport.kit.auth import Caller, CallerKind, Grant, GrantStatus
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.state import AppState

ALL_SCOPES = frozenset({"vehicle:data", "vehicle:eligibility-check", "fleet:clearance"})
PROPERTIES = ["charging.battery_level", "diagnostics.odometer"]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The sandbox carmaker decides after 5 s and confirms removals after 1 s."""
    return settings.model_copy(
        update={
            "sandbox_connector_clearance_delay_seconds": 5.0,
            "sandbox_connector_removal_delay_seconds": 1.0,
        }
    )


@dataclass(frozen=True)
class TestApp:
    token: str
    caller: Caller

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def id(self) -> str:
        return self.caller.application_id


@dataclass(frozen=True)
class Callers:
    fleet: TestApp  # production application: every scope, brands sandbox/mercedes_benz/bmw
    other: TestApp  # another production application (scoping)
    no_scope: TestApp  # the fleet application's token with only vehicle:data
    sandbox: TestApp  # a sandbox application
    vehicle: TestApp  # a consent (vehicle) token of the fleet application


async def _insert_application(
    db: Database, *, app_id: str, environment: Environment, brands: list[str], now_us: int
) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES (:id, :environment, :name, :now)",
            {"id": f"acct-{app_id}", "environment": str(environment), "name": "t", "now": now_us},
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, "
            "client_type, redirect_uris, properties, brands, created_at) VALUES (:id, "
            ":environment, :account, :client, :name, 'confidential', '[]', :props, :brands, :now)",
            {
                "id": app_id,
                "environment": str(environment),
                "account": f"acct-{app_id}",
                "client": f"client-{app_id}",
                "name": f"app {app_id}",
                "props": orjson.dumps(PROPERTIES).decode(),
                "brands": orjson.dumps(brands).decode(),
                "now": now_us,
            },
        )


async def _caller_from_row(
    db: Database, app_id: str, *, scopes: frozenset[str], kind: CallerKind = CallerKind.application
) -> Caller:
    row = await db.fetch_one(
        "SELECT id, environment, client_id, properties, brands FROM applications WHERE id = :id",
        {"id": app_id},
    )
    assert row is not None
    grant = None
    if kind is CallerKind.vehicle:
        grant = Grant(
            authorization_id="auth-1",
            vin="SBX00000000000001",
            properties=frozenset(PROPERTIES),
            status=GrantStatus.approved,
            valid_from_us=0,
            valid_until_us=None,
        )
    return Caller(
        environment=Environment(row["environment"]),
        kind=kind,
        application_id=row["id"],
        client_id=row["client_id"],
        scopes=scopes,
        application_properties=frozenset(orjson.loads(row["properties"])),
        grant=grant,
        application_brands=frozenset(orjson.loads(row["brands"])),
    )


@pytest.fixture
async def callers(app: FastAPI, clock: FrozenClock) -> AsyncIterator[Callers]:
    state: AppState = app.state.autoport
    db = state.database
    now = clock.now_us()
    production_brands = ["sandbox", "mercedes_benz", "bmw"]
    await _insert_application(
        db,
        app_id="A" * 24,
        environment=Environment.production,
        brands=production_brands,
        now_us=now,
    )
    await _insert_application(
        db,
        app_id="B" * 24,
        environment=Environment.production,
        brands=production_brands,
        now_us=now,
    )
    await _insert_application(
        db,
        app_id="C" * 24,
        environment=Environment.sandbox,
        brands=["sandbox", "bmw"],
        now_us=now,
    )
    found = Callers(
        fleet=TestApp("tok-fleet", await _caller_from_row(db, "A" * 24, scopes=ALL_SCOPES)),
        other=TestApp("tok-other", await _caller_from_row(db, "B" * 24, scopes=ALL_SCOPES)),
        no_scope=TestApp(
            "tok-noscope", await _caller_from_row(db, "A" * 24, scopes=frozenset({"vehicle:data"}))
        ),
        sandbox=TestApp("tok-sandbox", await _caller_from_row(db, "C" * 24, scopes=ALL_SCOPES)),
        vehicle=TestApp(
            "tok-vehicle",
            await _caller_from_row(
                db, "A" * 24, scopes=frozenset({"vehicle:data"}), kind=CallerKind.vehicle
            ),
        ),
    )
    by_token = {
        t.token: t.caller
        for t in (found.fleet, found.other, found.no_scope, found.sandbox, found.vehicle)
    }

    async def authenticate(request: Request, environment: Environment) -> Caller:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        caller = by_token.get(token.strip()) if scheme.lower() == "bearer" else None
        # A token of the other environment is as unknown as a made-up one.
        if caller is None or caller.environment is not environment:
            raise ApiError(
                401, "the access token is missing, unknown or expired", source="Authorization"
            )
        return caller

    app.state.authenticator = authenticate
    yield found
    del app.state.authenticator
