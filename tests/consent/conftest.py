"""Fixtures of the consent tests: real applications (tests/factories.py, through the
apps service), the real authorization server behind the flow, and helpers that finish
what the flow starts: the code exchanged at the token endpoint, vehicle data read with
the token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import FrozenClock, to_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from tests.factories import bearer, create_app_credentials, pkce_pair

REDIRECT_URI = "https://app.example.com/callback"
PROPERTIES = (
    "charging.battery_level",
    "charging.estimated_range",
    "diagnostics.odometer",
    "vehicle_location.coordinates",
)
# One brand per verification method, so one application exercises all four: the sandbox
# connector serves every brand of the sandbox and is told each brand's method by settings.
METHODS = {
    "sandbox": "instant",
    "bmw": "vehicle_code",
    "mercedes_benz": "oem_login",
    "ford": "owner_portal",
}
VIN = "SBXTEST0000000001"


BATTERY_LEVEL = 0.81


@dataclass
class ConsentApp:
    id: str
    client_id: str
    environment: Environment
    redirect_uri: str = REDIRECT_URI
    properties: tuple[str, ...] = PROPERTIES
    client_secret: str | None = None
    # PKCE, which every client must use by default (confidential ones too): the
    # application's verifier and the challenge `entry_params` sends for it.
    pkce: tuple[str, str] = field(default_factory=pkce_pair)

    @property
    def prefix(self) -> str:
        return "/sandbox" if self.environment is Environment.sandbox else ""

    def entry_params(self, **extra: str | None) -> dict[str, str]:
        """The entry point's query; a parameter given as None is left out."""
        params: dict[str, str | None] = {
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "app_id": self.id,
            "state": "st-42",
            "code_challenge": self.pkce[1],
        }
        params.update(extra)
        return {k: v for k, v in params.items() if v is not None}

    def token_request(self, code: str, verifier: str | None = None) -> dict[str, str]:
        """The application's exchange of a code at the token endpoint (RFC 6749 §4.1.3),
        with the verifier of `entry_params`' challenge unless another is given ("": none)."""
        verifier = self.pkce[0] if verifier is None else verifier or None
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "client_id": self.client_id,
        }
        if self.client_secret is not None:
            form["client_secret"] = self.client_secret
        if verifier is not None:
            form["code_verifier"] = verifier
        return form


async def insert_application(
    db: Database,
    *,
    environment: Environment = Environment.sandbox,
    brands: tuple[str, ...] | None = None,
    properties: tuple[str, ...] = PROPERTIES,
    redirect_uris: tuple[str, ...] = (REDIRECT_URI,),
    client_type: str = "confidential",
    disabled: bool = False,
    now_us: int | None = None,
    url_scheme: str | None = None,
) -> ConsentApp:
    """A real application (the apps service), with its client secret. By default every
    brand of METHODS its environment allows (the sandbox brand only in the sandbox)."""
    if brands is None:
        brands = tuple(b for b in METHODS if environment is Environment.sandbox or b != "sandbox")
    creds = await create_app_credentials(
        db,
        environment=environment,
        name="Fleet Tracker",
        properties=properties,
        brands=brands,
        redirect_uris=redirect_uris,
        client_type=client_type,
        now_us=now_us,
        url_scheme=url_scheme,
    )
    if disabled:
        await db.execute(
            "UPDATE applications SET disabled_at = created_at WHERE id = :id",
            {"id": creds.app_id},
        )
    return ConsentApp(
        creds.app_id,
        creds.client_id,
        environment,
        redirect_uris[0],
        properties,
        creds.client_secret,
    )


async def exchange(
    client: httpx.AsyncClient, app: ConsentApp, code: str, verifier: str | None = None
) -> httpx.Response:
    return await client.post(
        f"{app.prefix}/v1/access_tokens", data=app.token_request(code, verifier)
    )


async def store_vehicle_data(db: Database, *, vin: str = VIN, now_us: int) -> None:
    """What the sandbox vehicle reported (the pull endpoint serves the stored values)."""
    report = await ingest_vehicle_data(
        db,
        environment=Environment.sandbox,
        vin=vin,
        brand="sandbox",
        data={"charging": {"battery_level": {"data": BATTERY_LEVEL, "timestamp": to_iso(now_us)}}},
        now_us=now_us,
        source="test",
    )
    assert not report.rejected, report.rejected


async def read_vehicle_data(
    client: httpx.AsyncClient, access_token: str, vin: str = VIN
) -> httpx.Response:
    return await client.get(
        f"/sandbox/v1/vehicle-data/autoapi-13/{vin}", headers=bearer(access_token)
    )


def consent_settings(settings: Settings, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"sandbox_connector_verification_methods": METHODS, **overrides}
    return settings.model_copy(update=values)


@pytest.fixture
async def consent_app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    app = create_app(consent_settings(settings), clock=clock, run_background=False)
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


async def simulated_carmaker_answer(client: httpx.AsyncClient, carmaker_location: str) -> str:
    """What an attacker gets by taking the `state` of a redirect to a real carmaker to
    the sandbox's simulated login (it serves bmw and its password is public): the signed
    `result` that login sends back."""
    state = query_of(carmaker_location)["state"]
    simulated = await client.post(
        "/sandbox/oauth/oem/bmw/login",
        data={"state": state, "email": "mallory@example.com", "password": "sandbox"},
    )
    assert simulated.status_code == 303, simulated.text[:300]
    return query_of(simulated.headers["location"])["result"]
