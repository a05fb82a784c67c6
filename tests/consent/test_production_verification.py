"""Ownership verification in production: only methods that really prove ownership.

A production brand served by a team's connector offers `vehicle_code` only when the
connector can put the code on the car's display (the template connector against a real
HTTP server playing the carmaker), `oem_login` only through the connector's adapter to the
carmaker's own login, never `instant`, and never the sandbox's simulated carmaker login,
whose password is public."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.brands.base import BrandConnector, VerificationMethod
from autoport.brands.registry import BrandRegistry, ConnectorConfigError
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from autoport.proof.service import oem_state
from tests.fleet.test_template_connector import VIN, Carmaker, carmaker  # noqa: F401

from .conftest import ConsentApp, exchange, insert_application, query_of, simulated_carmaker_answer
from .flow import csrf_of

PAGES = "/oauth/consent"
TEMPLATE = "autoport.brands.template:TemplateConnector"


def production_settings(settings: Settings, url: str, method: str) -> Settings:
    options = {"base_url": url, "verification_method": method}
    if method == "oem_login":
        options["oauth_client_id"] = "autoport-client"
    return settings.model_copy(
        update={"brand_connectors": {"bmw": TEMPLATE}, "brand_connector_options": {"bmw": options}}
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
    answer = query_of(decided.headers["location"])
    assert answer["iss"] == "http://127.0.0.1:8080"  # production's issuer (RFC 9207)
    token = await exchange(owner, application, answer["code"])
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


def test_methods_that_prove_nothing_are_refused_at_start(sqlite_settings: Settings) -> None:
    with pytest.raises(ConnectorConfigError, match="proves no ownership"):
        BrandRegistry.from_settings(production_settings(sqlite_settings, "http://x", "instant"))


@dataclass
class LoginlessConnector(BrandConnector):
    """A connector claiming oem_login without an adapter to the carmaker's login."""

    verification_method: VerificationMethod = VerificationMethod.oem_login


def test_oem_login_needs_the_connector_s_login_adapter(sqlite_settings: Settings) -> None:
    spec = f"{__name__}:LoginlessConnector"
    settings = sqlite_settings.model_copy(update={"brand_connectors": {"bmw": spec}})
    with pytest.raises(ConnectorConfigError, match="oem_login_url and oem_login_owner"):
        BrandRegistry.from_settings(settings)
    # The template connector has one.
    registry = BrandRegistry.from_settings(
        production_settings(sqlite_settings, "http://x", "oem_login")
    )
    assert registry.verification_method(Environment.production, "bmw") == "oem_login"


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


# ------------------------------------------------------------ oem_login in production


@pytest.fixture
async def oem_owner(
    settings: Settings,
    clock: FrozenClock,
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> AsyncIterator[tuple[httpx.AsyncClient, FastAPI]]:
    _, url = carmaker
    app = create_app(
        production_settings(settings, url, "oem_login"), clock=clock, run_background=False
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
        ) as client:
            yield client, app


async def sign_in_at_carmaker(client: httpx.AsyncClient, app: FastAPI, url: str) -> str:
    """Verify page -> the carmaker's login -> its 302 back: our callback's path and query."""
    sent = await post(client, "verify", action="oem_login")
    assert sent.status_code == 303, sent.text[:300]
    login = sent.headers["location"]
    assert login.startswith(f"{url}/oauth/authorize?")
    async with httpx.AsyncClient() as browser:  # the owner's browser at the carmaker
        back = await browser.get(login)
    assert back.status_code == 302
    callback = urlsplit(back.headers["location"])
    base = app.state.autoport.settings.base_url
    assert f"{callback.scheme}://{callback.netloc}{callback.path}" == (
        f"{base}{PAGES}/oem-callback"
    )
    return f"{callback.path}?{callback.query}"


async def to_oem_verify(client: httpx.AsyncClient, app: FastAPI) -> ConsentApp:
    application = await to_vehicle_entry(client, app)
    entered = await post(client, "vehicle", vin=VIN)
    assert entered.status_code == 303 and entered.headers["location"].endswith("/verify")
    return application


async def authorization_count(app: FastAPI) -> int:
    count = await app.state.autoport.database.fetch_value("SELECT count(*) FROM authorizations")
    return int(count)


async def test_the_carmaker_login_proves_ownership_in_production(
    oem_owner: tuple[httpx.AsyncClient, FastAPI],
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    client, app = oem_owner
    fake, url = carmaker
    application = await to_oem_verify(client, app)
    callback = await sign_in_at_carmaker(client, app, url)
    [asked] = fake.authorize_queries
    assert asked["client_id"] == "autoport-client" and asked["vin"] == VIN
    verified = await client.get(callback)
    assert verified.status_code == 303 and verified.headers["location"].endswith("/review")
    [(form, _)] = fake.token_requests
    assert form["redirect_uri"] == asked["redirect_uri"]
    # The same answer again (a replayed callback): refused, the carmaker is not asked.
    replay = await client.get(callback)
    assert replay.status_code == 403
    assert len(fake.token_requests) == 1
    decided = await post(client, "review", decision="approve")
    token = await exchange(client, application, query_of(decided.headers["location"])["code"])
    assert token.status_code == 200 and token.json()["status"] == "approved"
    subject = await app.state.autoport.database.fetch_value("SELECT subject FROM authorizations")
    assert subject and "acme-owner-7" not in subject  # the account id is stored hashed


async def test_an_account_that_does_not_own_the_vin_proves_nothing(
    oem_owner: tuple[httpx.AsyncClient, FastAPI],
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    client, app = oem_owner
    fake, url = carmaker
    fake.oauth_vins = ["ACM00000000000002"]
    await to_oem_verify(client, app)
    refused = await client.get(await sign_in_at_carmaker(client, app, url))
    assert refused.status_code == 403
    assert "did not confirm that the vehicle is yours" in refused.text
    review = await client.get(f"{PAGES}/review")
    assert review.status_code == 303 and review.headers["location"].endswith("/verify")
    assert await authorization_count(app) == 0
    # The owner cancelling at the carmaker: refused too, nothing exchanged.
    fake.oauth_cancel = True
    asked = len(fake.token_requests)
    cancelled = await client.get(await sign_in_at_carmaker(client, app, url))
    assert cancelled.status_code == 403 and len(fake.token_requests) == asked


async def test_a_tampered_superseded_or_expired_state_is_refused(
    oem_owner: tuple[httpx.AsyncClient, FastAPI],
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    client, app = oem_owner
    fake, url = carmaker
    await to_oem_verify(client, app)
    callback = await sign_in_at_carmaker(client, app, url)
    params = query_of(callback)
    body, _, mac = params["state"].partition(".")
    tampered = {**params, "state": f"{body[:-2]}{'A' if body[-2] != 'A' else 'B'}{body[-1]}.{mac}"}
    refused = await client.get(f"{PAGES}/oem-callback?{urlencode(tampered)}")
    assert refused.status_code == 403 and "did not confirm" in refused.text
    no_state = {k: v for k, v in params.items() if k != "state"}
    assert (await client.get(f"{PAGES}/oem-callback?{urlencode(no_state)}")).status_code == 403
    # A second sign-in replaces the nonce: the first state is no longer accepted.
    latest = await sign_in_at_carmaker(client, app, url)
    assert (await client.get(callback)).status_code == 403
    # The latest one, once its state expired (10 minutes; the session lives on).
    app.state.autoport.clock.advance(601)
    assert (await client.get(latest)).status_code == 403
    assert fake.token_requests == []
    assert await authorization_count(app) == 0


async def test_an_unreachable_carmaker_is_told_to_the_owner_who_may_sign_in_again(
    oem_owner: tuple[httpx.AsyncClient, FastAPI],
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    client, app = oem_owner
    fake, url = carmaker
    await to_oem_verify(client, app)
    fake.token_status = 503
    failed = await client.get(await sign_in_at_carmaker(client, app, url))
    assert failed.status_code == 503
    assert "could not be reached to confirm your sign-in" in failed.text
    fake.token_status = 200
    again = await client.get(await sign_in_at_carmaker(client, app, url))
    assert again.status_code == 303 and again.headers["location"].endswith("/review")


async def test_the_simulated_carmaker_s_answer_never_verifies_a_real_brand(
    oem_owner: tuple[httpx.AsyncClient, FastAPI],
    carmaker: tuple[Carmaker, str],  # noqa: F811
) -> None:
    # The attacker takes our production state to the sandbox's simulated login (which
    # serves bmw in the sandbox environment and signs with the same secret), gets a
    # signed answer with the public password and brings it to the production callback:
    # a brand whose connector has its own login (oem_login_page None) never takes it.
    client, app = oem_owner
    fake, url = carmaker
    await to_oem_verify(client, app)
    sent = await post(client, "verify", action="oem_login")
    assert sent.status_code == 303 and sent.headers["location"].startswith(url)
    result = await simulated_carmaker_answer(client, sent.headers["location"])
    refused = await client.get(f"{PAGES}/oem-callback", params={"result": result})
    assert refused.status_code == 403 and "did not confirm" in refused.text
    review = await client.get(f"{PAGES}/review")
    assert review.status_code == 303 and review.headers["location"].endswith("/verify")
    assert fake.token_requests == []
    assert await authorization_count(app) == 0
