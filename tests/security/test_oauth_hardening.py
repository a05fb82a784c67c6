"""OAuth hardening of RFC 9700 and RFC 9207, attacked on SQLite and PostgreSQL:

- PKCE `plain` is neither advertised nor accepted: an attacker who saw the authorization
  request (its challenge) could redeem an intercepted code with `plain`;
- PKCE is required of confidential clients too (a stolen code injected into the
  client's own callback is useless without the verifier), unless the operator turns it
  off for old clients;
- every authorization response, success or error, names its issuer (`iss`), one per
  environment, so a client can tell a sandbox answer (or another server's) from the
  production one it asked for (mix-up attack).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.oauth import pkce
from tests.consent.conftest import (
    VIN,
    consent_settings,
    exchange,
    insert_application,
    query_of,
)
from tests.consent.flow import post, start, walk_to_review
from tests.factories import create_app_credentials, create_authorization, issue_code, pkce_pair

PRODUCTION = "http://127.0.0.1:8080"
SANDBOX = "http://127.0.0.1:8080/sandbox"


async def _running(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    app = create_app(consent_settings(settings), clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def consent_app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    async for app in _running(settings, clock):
        yield app


@pytest.fixture
async def lenient_app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    """A deployment that let old confidential clients skip PKCE."""
    lenient = settings.model_copy(update={"oauth_pkce_required_for_confidential_clients": False})
    async for app in _running(lenient, clock):
        yield app


def database_of(app: FastAPI) -> Database:
    database: Database = app.state.autoport.database
    return database


@pytest.fixture
async def browser(consent_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=consent_app)
    async with httpx.AsyncClient(
        transport=transport, base_url=PRODUCTION, follow_redirects=False
    ) as client:
        yield client


# --- PKCE plain ------------------------------------------------------------------------


async def test_plain_pkce_is_neither_advertised_nor_accepted(
    browser: httpx.AsyncClient, consent_app: FastAPI
) -> None:
    for prefix in ("", "/sandbox"):
        metadata = (await browser.get(f"{prefix}/.well-known/oauth-authorization-server")).json()
        assert metadata["code_challenge_methods_supported"] == ["S256"]
    db = database_of(consent_app)
    app = await insert_application(db)
    # The attacker's downgrade: the challenge is the verifier itself, which anyone who
    # saw the authorization request knows.
    verifier = "v" * 43
    answer = await start(browser, app, code_challenge=verifier, code_challenge_method="plain")
    query = query_of(answer.headers["location"])
    assert query["error"] == "invalid_request"
    assert "S256" in query["error_description"]
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_sessions") == 0


async def test_a_code_stored_with_plain_is_not_redeemed(
    browser: httpx.AsyncClient, consent_app: FastAPI
) -> None:
    """A code an older autoport issued for a `plain` challenge: the verifier equal to
    the challenge (what an attacker who saw the request sends) gets nothing."""
    db = database_of(consent_app)
    creds = await create_app_credentials(db, environment=Environment.production)
    authorization_id = await create_authorization(db, creds, vin=VIN)
    verifier, challenge = pkce_pair()
    code = await issue_code(db, creds, authorization_id, code_challenge=challenge)
    await db.execute(
        "UPDATE authorization_codes SET code_challenge = :plain, code_challenge_method = 'plain'",
        {"plain": verifier},
    )
    refused = await browser.post(
        "/v1/access_tokens",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": creds.redirect_uri,
            "code_verifier": verifier,
            **creds.auth(),
        },
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] == "invalid_grant"
    assert "plain" in refused.json()["error_description"]
    assert await db.fetch_value("SELECT COUNT(*) FROM oauth_tokens") == 0


# --- PKCE for confidential clients -----------------------------------------------------


async def test_a_confidential_client_must_send_a_challenge(
    browser: httpx.AsyncClient, consent_app: FastAPI
) -> None:
    db = database_of(consent_app)
    app = await insert_application(db, client_type="confidential")
    answer = await start(browser, app, code_challenge=None)
    query = query_of(answer.headers["location"])
    assert query["error"] == "invalid_request"
    assert "code_challenge is required" in query["error_description"]
    assert query["iss"] == SANDBOX and query["state"] == "st-42"
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_sessions") == 0


async def test_an_injected_code_without_pkce_is_refused_at_the_token_endpoint(
    browser: httpx.AsyncClient, consent_app: FastAPI
) -> None:
    """Code injection: the attacker's own code, issued without PKCE (by an older autoport,
    or for a client that skipped it), pushed into a confidential client's callback. The
    client sends its own verifier, or none: the exchange is refused either way."""
    db = database_of(consent_app)
    creds = await create_app_credentials(db, environment=Environment.production)
    authorization_id = await create_authorization(db, creds, vin=VIN)
    code = await issue_code(db, creds, authorization_id)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": creds.redirect_uri,
        **creds.auth(),
    }
    without = await browser.post("/v1/access_tokens", data=form)
    assert without.status_code == 400, without.text
    assert without.json()["error"] == "invalid_grant"
    assert "without PKCE" in without.json()["error_description"]
    with_own = await browser.post(
        "/v1/access_tokens", data={**form, "code_verifier": pkce_pair()[0]}
    )
    assert with_own.status_code == 400 and with_own.json()["error"] == "invalid_grant"
    assert await db.fetch_value("SELECT COUNT(*) FROM oauth_tokens") == 0


async def test_old_confidential_clients_may_skip_pkce_when_the_operator_allows_it(
    lenient_app: FastAPI,
) -> None:
    """`oauth_pkce_required_for_confidential_clients = false`: a confidential client's
    consent without a challenge completes; a public client still must use PKCE."""
    db = database_of(lenient_app)
    transport = httpx.ASGITransport(app=lenient_app)
    async with httpx.AsyncClient(
        transport=transport, base_url=PRODUCTION, follow_redirects=False
    ) as client:
        app = await insert_application(db)
        await walk_to_review(client, app, code_challenge=None)
        decided = await post(client, "review", decision="approve")
        code = query_of(decided.headers["location"])["code"]
        token = await exchange(client, app, code, verifier="")
        assert token.status_code == 200, token.text
        public = await insert_application(db, client_type="public")
        refused = query_of((await start(client, public, code_challenge=None)).headers["location"])
        assert refused["error"] == "invalid_request"


# --- iss in authorization responses ----------------------------------------------------


async def test_every_authorization_response_names_its_environments_issuer(
    browser: httpx.AsyncClient, consent_app: FastAPI
) -> None:
    """A client of both environments (or of several servers) tells whose answer it got:
    the sandbox's answers name the sandbox issuer, production's the production one,
    success and error alike, as the metadata of each says."""
    db = database_of(consent_app)
    for prefix, issuer in (("", PRODUCTION), ("/sandbox", SANDBOX)):
        metadata = (await browser.get(f"{prefix}/.well-known/oauth-authorization-server")).json()
        assert metadata["issuer"] == issuer
        assert metadata["authorization_response_iss_parameter_supported"] is True
    # Errors at the entry point, in each environment.
    production_app = await insert_application(db, environment=Environment.production)
    refused = await browser.get(
        "/oauth/new", params=production_app.entry_params(response_type="token")
    )
    assert query_of(refused.headers["location"])["iss"] == PRODUCTION
    sandbox_app = await insert_application(db)
    refused = await start(browser, sandbox_app, response_type="token")
    assert query_of(refused.headers["location"])["iss"] == SANDBOX
    # The code (sandbox), then a denial.
    await walk_to_review(browser, sandbox_app)
    approved = await post(browser, "review", decision="approve")
    location = approved.headers["location"]
    assert urlsplit(location).netloc == "app.example.com"
    answer = query_of(location)
    assert answer["iss"] == SANDBOX and answer["state"] == "st-42" and answer["code"]
    await walk_to_review(browser, sandbox_app)
    denied = query_of((await post(browser, "review", decision="deny")).headers["location"])
    assert denied == {
        "error": "access_denied",
        "error_description": "the vehicle owner denied the request",
        "state": "st-42",
        "iss": SANDBOX,
    }


def test_pkce_rules_in_one_place() -> None:
    """The rule's table: public clients always, confidential ones by the setting."""
    assert pkce.required(public=True, confidential_must=False)
    assert pkce.required(public=False, confidential_must=True)
    assert not pkce.required(public=False, confidential_must=False)
