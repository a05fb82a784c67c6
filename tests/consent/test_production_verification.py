"""Ownership verification in production: only methods that really prove ownership.

A production brand served by a team's connector offers `vehicle_code` only when the
connector can put the code on the car's display (the template connector against a real
HTTP server playing the carmaker), never `instant`, and never the sandbox's simulated
carmaker login, whose password is public."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.brands.base import BrandConnector, VerificationMethod
from autoport.brands.registry import BrandRegistry, ConnectorConfigError
from autoport.config import Settings
from autoport.consent.verification import oem_state
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.fleet.test_template_connector import VIN, Carmaker, carmaker  # noqa: F401

from .conftest import ConsentApp, exchange, insert_application, query_of
from .test_flow import csrf_of

PAGES = "/oauth/consent"
TEMPLATE = "autoport.brands.template:TemplateConnector"


def production_settings(settings: Settings, url: str, method: str) -> Settings:
    return settings.model_copy(
        update={
            "brand_connectors": {"bmw": TEMPLATE},
            "brand_connector_options": {"bmw": {"base_url": url, "verification_method": method}},
        }
    )


@pytest.fixture
async def production_app(
    settings: Settings,
    clock: FrozenClock,
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> AsyncIterator[FastAPI]:
    _, url = carmaker
    app = create_app(
        production_settings(settings, url, "vehicle_code"), clock=clock, run_background=False
    )
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def owner(production_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=production_app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
    ) as client:
        yield client


async def post(client: httpx.AsyncClient, step: str, **form: str) -> httpx.Response:
    page = await client.get(f"{PAGES}/{step}")
    assert page.status_code == 200, page.text[:300]
    return await client.post(f"{PAGES}/{step}", data={"csrf_token": csrf_of(page), **form})


async def to_vehicle_entry(client: httpx.AsyncClient, app: FastAPI) -> ConsentApp:
    application = await insert_application(
        app.state.autoport.database, environment=Environment.production, brands=("bmw",)
    )
    started = await client.get("/oauth/new", params=application.entry_params(brand="bmw"))
    assert started.status_code == 303, started.text
    assert (await post(client, "brand", brand="bmw")).status_code == 303
    return application


async def test_the_code_reaches_the_car_through_the_connector_and_proves_ownership(
    owner: httpx.AsyncClient,
    production_app: FastAPI,
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    fake, _ = carmaker
    application = await to_vehicle_entry(owner, production_app)
    entered = await post(owner, "vehicle", vin=VIN)
    assert entered.status_code == 303 and entered.headers["location"].endswith("/verify")
    [(vin, shown)] = fake.displayed
    assert vin == VIN and len(shown["code"]) == 6
    # Only the code's hash is stored: nothing but the car shows it.
    db = production_app.state.autoport.database
    assert await db.fetch_value("SELECT display_code FROM consent_vehicle_codes") is None
    verified = await post(owner, "verify", action="code", code=shown["code"])
    assert verified.status_code == 303 and verified.headers["location"].endswith("/review")
    decided = await post(owner, "review", decision="approve")
    token = await exchange(owner, application, query_of(decided.headers["location"])["code"])
    assert token.status_code == 200 and token.json()["status"] == "approved"


async def test_an_unreachable_car_is_told_to_the_owner_who_may_ask_again(
    owner: httpx.AsyncClient,
    production_app: FastAPI,
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    fake, _ = carmaker
    fake.display_status = 409
    await to_vehicle_entry(owner, production_app)
    entered = await post(owner, "vehicle", vin=VIN)
    assert entered.status_code == 303 and entered.headers["location"].endswith("unreachable=1")
    page = await owner.get(entered.headers["location"])
    assert "could not be reached to show the code" in page.text
    again = await post(owner, "verify", action="new_code")
    assert again.status_code == 503 and "could not be reached" in again.text
    fake.display_status = 202
    assert (await post(owner, "verify", action="new_code")).status_code == 303
    assert len(fake.displayed) == 1


async def test_the_simulated_carmaker_login_is_refused_for_a_real_brand(
    owner: httpx.AsyncClient, production_app: FastAPI
) -> None:
    # A correctly signed state for bmw: only the brand's connector decides, and it is
    # not the sandbox's.
    settings = production_app.state.autoport.settings
    secret = settings.session_secret.get_secret_value().encode()
    clock = production_app.state.autoport.clock
    state = oem_state(
        secret, session_id="s", brand="bmw", vin=VIN, nonce="n", now_us=clock.now_us()
    )
    page = await owner.get("/oauth/oem/bmw/login", params={"state": state})
    assert page.status_code == 400
    posted = await owner.post(
        "/oauth/oem/bmw/login",
        data={"state": state, "email": "x@example.com", "password": "sandbox"},
    )
    assert posted.status_code == 400
    # The same brand in the sandbox environment is served by the sandbox connector.
    sandbox = await owner.get("/sandbox/oauth/oem/bmw/login", params={"state": state})
    assert sandbox.status_code == 200 and "password" in sandbox.text


@pytest.mark.parametrize(
    ("method", "words"),
    [
        ("instant", "proves no ownership"),
        ("oem_login", "carmaker login adapter"),
    ],
)
def test_methods_that_prove_nothing_are_refused_at_start(
    sqlite_settings: Settings, method: str, words: str
) -> None:
    with pytest.raises(ConnectorConfigError, match=words):
        BrandRegistry.from_settings(production_settings(sqlite_settings, "http://x", method))


@dataclass
class CodelessConnector(BrandConnector):
    """A connector claiming vehicle_code without a way to reach the car's display."""

    verification_method: VerificationMethod = VerificationMethod.vehicle_code


def test_vehicle_code_without_a_way_to_the_display_is_refused_at_start(
    sqlite_settings: Settings,
) -> None:
    spec = f"{__name__}:CodelessConnector"
    settings = sqlite_settings.model_copy(update={"brand_connectors": {"bmw": spec}})
    with pytest.raises(ConnectorConfigError, match="show_vehicle_code"):
        BrandRegistry.from_settings(settings)
    # The template connector can, and owner_portal needs nothing.
    for method in ("vehicle_code", "owner_portal"):
        registry = BrandRegistry.from_settings(
            production_settings(sqlite_settings, "http://x", method)
        )
        assert registry.verification_method(Environment.production, "bmw") == method
