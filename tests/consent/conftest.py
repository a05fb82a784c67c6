"""Fixtures of the consent tests: applications written straight into `applications`
(the oauth branch's factories replace this once merged) and a stand-in for the two
authorization-server functions the flow calls (contracts.md), installed in one place:
`app.state.consent_oauth`."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.consent.service import OAuthPort
from autoport.kit import outbox
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment

REDIRECT_URI = "https://app.example.com/callback"
PROPERTIES = (
    "charging.battery_level",
    "charging.estimated_range",
    "diagnostics.odometer",
    "vehicle_location.coordinates",
)
# One brand per verification method, so one application exercises all four.
METHODS = {
    "sandbox": "instant",
    "bmw": "vehicle_code",
    "mercedes_benz": "oem_login",
    "ford": "owner_portal",
}
VIN = "SBXTEST0000000001"


@dataclass
class ConsentApp:
    id: str
    client_id: str
    environment: Environment
    redirect_uri: str = REDIRECT_URI
    properties: tuple[str, ...] = PROPERTIES

    def entry_params(self, **extra: str) -> dict[str, str]:
        params = {
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "app_id": self.id,
            "state": "st-42",
        }
        params.update(extra)
        return {k: v for k, v in params.items() if v is not None}


async def insert_application(
    db: Database,
    *,
    environment: Environment = Environment.sandbox,
    brands: tuple[str, ...] = tuple(METHODS),
    properties: tuple[str, ...] = PROPERTIES,
    redirect_uris: tuple[str, ...] = (REDIRECT_URI,),
    client_type: str = "confidential",
    disabled: bool = False,
    now_us: int = 1,
) -> ConsentApp:
    app_id = secrets.token_hex(12).upper()
    account_id = uuid.uuid4().hex
    client_id = str(uuid.uuid4())
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES (:id, :env, 'Test account', :now)",
            {"id": account_id, "env": str(environment), "now": now_us},
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, "
            "client_type, redirect_uris, properties, brands, created_at, disabled_at) VALUES "
            "(:id, :env, :account, :client_id, 'Fleet Tracker', :client_type, :uris, :props, "
            ":brands, :now, :disabled)",
            {
                "id": app_id,
                "env": str(environment),
                "account": account_id,
                "client_id": client_id,
                "client_type": client_type,
                "uris": orjson.dumps(list(redirect_uris)).decode(),
                "props": orjson.dumps(list(properties)).decode(),
                "brands": orjson.dumps(list(brands)).decode(),
                "now": now_us,
                "disabled": now_us if disabled else None,
            },
        )
    return ConsentApp(app_id, client_id, environment, redirect_uris[0], properties)


@dataclass
class RecordingOAuth:
    """Stands in for autoport.oauth.service until the oauth branch is merged: the code
    is a random string it remembers; the status change is done for real (conditional
    UPDATE + authorization_changed in the same transaction), as the contract describes."""

    codes: dict[str, dict[str, Any]] = field(default_factory=dict)

    async def issue_authorization_code(self, conn: Connection, **kwargs: Any) -> str:
        code = "code_" + secrets.token_urlsafe(24)
        self.codes[code] = kwargs
        return code

    async def set_authorization_status(
        self,
        conn: Connection,
        *,
        environment: Environment,
        authorization_id: str,
        status: str,
        now_us: int,
        detail: str | None = None,
    ) -> None:
        row = await conn.fetch_one(
            "UPDATE authorizations SET status = :status, updated_at = :now "
            "WHERE id = :id AND environment = :env AND status = 'pending' "
            "RETURNING vin, application_id",
            {"status": status, "now": now_us, "id": authorization_id, "env": str(environment)},
        )
        assert row is not None
        await outbox.emit(
            conn,
            environment=environment,
            event_type="authorization_changed",
            payload={"action": status, "authorization_id": authorization_id, "detail": detail},
            now_us=now_us,
            vin=row["vin"],
            application_id=row["application_id"],
        )

    def port(self) -> OAuthPort:
        return OAuthPort(self.issue_authorization_code, self.set_authorization_status)


@pytest.fixture
def recording_oauth() -> RecordingOAuth:
    return RecordingOAuth()


def consent_settings(settings: Settings, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"consent_verification_methods": METHODS, **overrides}
    return settings.model_copy(update=values)


@pytest.fixture
async def consent_app(
    settings: Settings, clock: FrozenClock, recording_oauth: RecordingOAuth
) -> AsyncIterator[FastAPI]:
    app = create_app(consent_settings(settings), clock=clock, run_background=False)
    app.state.consent_oauth = recording_oauth.port()
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def db(consent_app: FastAPI) -> Database:
    database: Database = consent_app.state.autoport.database
    return database


@pytest.fixture
async def browser_client(consent_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """A cookie-keeping client that does not follow redirects (tests look at each)."""
    transport = httpx.ASGITransport(app=consent_app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
    ) as client:
        yield client


def query_of(location: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(location).query).items()}
