"""Vehicle-command fixtures: real applications and tokens (token endpoint), real sandbox
vehicles (admin API), the real worker functions (claim, execute, sweep)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.app import create_app
from autoport.apps import service as apps_service
from autoport.commands import tasks
from autoport.commands.schemas import CommandRow
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.sandbox.demo import approve_fleet_clearances
from autoport.webhooks import repository as webhooks_repository
from tests.factories import (
    AppCredentials,
    bearer,
    client_credentials_token,
    create_app_credentials,
    issue_code,
    pkce_pair,
)

ADMIN_TOKEN = "commands-test-admin-token"
ADMIN = {"authorization": f"Bearer {ADMIN_TOKEN}"}
SANDBOX = Environment.sandbox
PROD = Environment.production
PROPERTIES = (
    "doors.locks_state",
    "charging.status",
    "charging.charge_limit",
    "climate.inside_temperature",
    "climate.hvac_state",
)
LOCK = "doors.lock_unlock_doors"
ALL_SANDBOX = (
    "doors.lock_unlock_doors",
    "charging.start_stop_charging",
    "charging.set_charge_limit",
    "climate.start_stop_hvac",
    "climate.set_temperature_settings",
    "honk_horn_flash_lights.honk_flash",
    "trunk.control_trunk",
)


def path(environment: Environment, vin: str) -> str:
    prefix = "/sandbox" if environment is SANDBOX else ""
    return f"{prefix}/v1/vehicle-commands/autoapi-13/{vin}"


def command_path(environment: Environment, command_id: str) -> str:
    prefix = "/sandbox" if environment is SANDBOX else ""
    return f"{prefix}/v1/vehicle-commands/{command_id}"


def new_vin(prefix: str = "SBX") -> str:
    return (prefix + uuid.uuid4().hex.upper().replace("I", "1").replace("O", "0"))[:17]


class Harness:
    __test__ = False

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.state: AppState = app.state.autoport
        self.db: Database = self.state.database
        self.clock: FrozenClock = self.state.clock
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8080"
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def application(
        self,
        *,
        environment: Environment = SANDBOX,
        commands: Sequence[str] = ALL_SANDBOX,
        brands: Sequence[str] | None = None,
        properties: Sequence[str] = PROPERTIES,
    ) -> AppCredentials:
        creds = await create_app_credentials(
            self.db,
            environment=environment,
            properties=properties,
            brands=brands,
            now_us=self.clock.now_us(),
        )
        async with self.db.transaction() as conn:
            await apps_service.update_application(
                conn,
                environment=environment,
                app_id=creds.app_id,
                now_us=self.clock.now_us(),
                commands=list(commands),
            )
        return creds

    async def subscribe(self, app_id: str, events: Sequence[str]) -> None:
        """A webhook of the application subscribing to `events` (nothing is delivered
        here: the outbox rows are what the tests read)."""
        async with self.db.transaction() as conn:
            await webhooks_repository.upsert_webhook(
                conn,
                environment=SANDBOX,
                application_id=app_id,
                url="https://hooks.example.com/autoport",
                secret_sealed="not-delivered-here",
                events=list(events),
                signature_scheme="default",
                now_us=self.clock.now_us(),
            )

    async def vehicle_token(
        self,
        creds: AppCredentials,
        vin: str,
        *,
        commands: Sequence[str] = ALL_SANDBOX,
        brand: str | None = None,
        status: str = "approved",
        properties: Sequence[str] = PROPERTIES,
    ) -> tuple[dict[str, str], dict[str, Any]]:
        """A consent token (authorization row with granted commands + code + exchange):
        its headers and the token response."""
        authorization_id = str(uuid.uuid4())
        now = self.clock.now_us()
        await self.db.execute(
            "INSERT INTO authorizations (id, environment, application_id, vin, brand, "
            "properties, status, subject, valid_from, valid_until, created_at, updated_at, "
            "commands) VALUES (:id, :env, :app, :vin, :brand, :props, :status, 'owner', "
            ":now, NULL, :now, :now, :commands)",
            {
                "id": authorization_id,
                "env": str(creds.environment),
                "app": creds.app_id,
                "vin": vin,
                "brand": brand or creds.brands[0],
                "props": orjson.dumps(list(properties)).decode(),
                "status": status,
                "now": now,
                "commands": orjson.dumps(list(commands)).decode(),
            },
        )
        verifier, challenge = pkce_pair()
        code = await issue_code(self.db, creds, authorization_id, code_challenge=challenge)
        response = await self.client.post(
            creds.token_path,
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": creds.redirect_uri,
                "code_verifier": verifier,
                **creds.auth(),
            },
        )
        assert response.status_code == 200, response.text
        body = response.json()
        body["authorization_id"] = authorization_id
        return bearer(body["access_token"]), body

    async def fleet_token(
        self, creds: AppCredentials, vins: Sequence[str], *, properties: Sequence[str] = PROPERTIES
    ) -> dict[str, str]:
        await approve_fleet_clearances(
            self.db,
            application_id=creds.app_id,
            client_id=creds.client_id,
            properties=list(properties),
            vins=list(vins),
            now_us=self.clock.now_us(),
        )
        return bearer(await client_credentials_token(self.client, creds))

    async def sandbox_vehicle(
        self, *, vin: str | None = None, powertrain: str = "electric", scenario: str = "parked"
    ) -> str:
        vin = vin or new_vin()
        response = await self.client.post(
            "/admin/v1/sandbox/vehicles",
            headers=ADMIN,
            json={
                "vin": vin,
                "powertrain": powertrain,
                "scenario": scenario,
                "profile": "full",
                "running": False,
            },
        )
        assert response.status_code == 201, response.text
        return vin

    async def vehicle(self, vin: str) -> dict[str, Any]:
        response = await self.client.get(f"/admin/v1/sandbox/vehicles/{vin}", headers=ADMIN)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def send(
        self,
        headers: dict[str, str],
        vin: str,
        capability: str,
        command: str,
        arguments: dict[str, Any] | None = None,
        *,
        environment: Environment = SANDBOX,
        extra: dict[str, str] | None = None,
    ) -> httpx.Response:
        return await self.client.post(
            path(environment, vin),
            headers={**headers, **(extra or {})},
            json={"capability": capability, "command": command, "arguments": arguments or {}},
        )

    async def get(
        self, headers: dict[str, str], command_id: str, *, environment: Environment = SANDBOX
    ) -> httpx.Response:
        return await self.client.get(command_path(environment, command_id), headers=headers)

    async def work(self) -> list[CommandRow | None]:
        """One round of the worker: claim every pending command and execute it."""
        rows = await tasks.claim(self.state, "test-worker", 1000)
        return [await tasks.execute(self.state, row) for row in rows]

    async def run(
        self, headers: dict[str, str], vin: str, capability: str, command: str, **arguments: Any
    ) -> dict[str, Any]:
        """Send a command, run the worker, answer the command as GET shows it."""
        sent = await self.send(headers, vin, capability, command, arguments)
        assert sent.status_code == 202, sent.text
        await self.work()
        got = await self.get(headers, sent.json()["id"])
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        return body


@pytest.fixture
def command_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "admin_token": SecretStr(ADMIN_TOKEN),
            "vehicle_command_rate_limit": "1000/minute",
            "vehicle_command_timeout_seconds": 30.0,
        }
    )


@contextlib.asynccontextmanager
async def harness_for(settings: Settings, clock: FrozenClock) -> AsyncIterator[Harness]:
    """An app built from `settings` (its rate limiters among them) and its harness."""
    app = create_app(settings, clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        found = Harness(app)
        try:
            yield found
        finally:
            await found.aclose()


@pytest.fixture
async def harness(command_settings: Settings, clock: FrozenClock) -> AsyncIterator[Harness]:
    async with harness_for(command_settings, clock) as found:
        yield found
