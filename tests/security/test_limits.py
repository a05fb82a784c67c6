"""Floods of the token endpoint and of the consent entry point: counted per client
address and per client, refused with 429 and Retry-After (RFC 6749 shape at the token
endpoint, an error page at the entry), in memory and shared through Redis between
replicas. The limiter keeps no state in the database, so SQLite stands for both."""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from tests.consent.conftest import consent_settings, insert_application
from tests.factories import AppCredentials, create_app_credentials
from tests.security.test_consent import browser as client_at
from tests.security.test_consent import running as running_app

ATTACKER = "203.0.113.66"
OTHER = "198.51.100.10"
TOKEN_PATHS = ("/v1/access_tokens", "/v1/access_token")


def running(
    settings: Settings, clock: FrozenClock, **limits: Any
) -> contextlib.AbstractAsyncContextManager[FastAPI]:
    return running_app(consent_settings(settings, **limits), clock)


async def credentials(app: FastAPI) -> AppCredentials:
    db: Database = app.state.autoport.database
    return await create_app_credentials(db)


async def token_request(
    client: httpx.AsyncClient, creds: AppCredentials, path: str = "/v1/access_tokens", **extra: str
) -> httpx.Response:
    body = {"grant_type": "client_credentials", **creds.auth(), **extra}
    return await client.post(path, data=body)


def assert_oauth_429(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    body = response.json()
    assert set(body) == {"error", "error_description"}
    assert body["error"] == "temporarily_unavailable"
    assert "retry in" in body["error_description"]
    assert int(response.headers["retry-after"]) >= 1
    assert response.headers["cache-control"] == "no-store"


# ------------------------------------------------------------------- token endpoint


async def test_token_endpoint_limits_each_address_on_every_path(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    async with running(sqlite_settings, clock, oauth_token_ip_rate_limit="3/hour") as app:
        creds = await credentials(app)
        async with client_at(app, ATTACKER) as attacker, client_at(app, OTHER) as other:
            answers = [await token_request(attacker, creds, TOKEN_PATHS[n % 2]) for n in range(3)]
            assert [a.status_code for a in answers] == [200, 200, 200]
            # The aliases share the budget; so do requests that are not even valid.
            assert_oauth_429(await token_request(attacker, creds, "/v1/access_token"))
            assert_oauth_429(await attacker.post("/v1/access_tokens", data={}))
            account = f"/v1/{creds.account_id}/oauth/access_tokens"
            assert_oauth_429(await token_request(attacker, creds, account))
            # Another address is not affected.
            assert (await token_request(other, creds)).status_code == 200


async def test_revocation_spends_the_address_s_token_budget(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    # Revocation authenticates the client too: without the limit, an attacker could
    # guess a client's secret there, around the token endpoint's budget.
    async with running(sqlite_settings, clock, oauth_token_ip_rate_limit="3/hour") as app:
        creds = await credentials(app)
        async with client_at(app, ATTACKER) as attacker, client_at(app, OTHER) as other:
            guess = {"token": "ap_at_any", "client_id": creds.client_id}
            for n in range(3):
                wrong = {**guess, "client_secret": f"ap_cs_guess{n}"}
                answer = await (
                    attacker.post("/v1/revoke", data=wrong)
                    if n % 2
                    else attacker.request("DELETE", "/v1/access_tokens", data=wrong)
                )
                assert answer.status_code == 401, answer.text
            assert_oauth_429(await attacker.post("/v1/revoke", data={**guess, **creds.auth()}))
            assert_oauth_429(await attacker.request("DELETE", "/v1/access_tokens", data=guess))
            # One budget with the token endpoint.
            assert_oauth_429(await token_request(attacker, creds))
            # Another address revokes as before.
            revoked = await other.post("/v1/revoke", data={**guess, **creds.auth()})
            assert revoked.status_code == 200, revoked.text


async def test_token_endpoint_limits_each_authenticated_client(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    async with running(sqlite_settings, clock, oauth_token_client_rate_limit="2/hour") as app:
        busy, quiet = await credentials(app), await credentials(app)
        async with client_at(app, ATTACKER) as attacker, client_at(app, OTHER) as other:
            # Someone else naming the busy client with a wrong secret spends nothing.
            for _ in range(5):
                forged = await token_request(other, busy, client_secret="ap_cs_wrong")
                assert forged.status_code == 401
            assert (await token_request(attacker, busy)).status_code == 200
            assert (await token_request(other, busy)).status_code == 200
            # Over the client's budget, from any address.
            assert_oauth_429(await token_request(attacker, busy))
            assert_oauth_429(await token_request(other, busy))
            # Another client from the same addresses is not affected.
            assert (await token_request(attacker, quiet)).status_code == 200


async def test_token_endpoint_limit_is_shared_by_replicas_through_redis(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    from tests.kit.test_ratelimit_redis import REDIS_URL, _redis_problem

    problem = await _redis_problem()
    if problem:
        from tests.conftest import service_missing

        service_missing(f"Redis at {REDIS_URL}: {problem}")
    # A fresh address: runs in parallel (and earlier runs' windows) never share a key.
    address = f"2001:db8:{secrets.randbelow(0xFFFF):x}::1"
    limits = {"oauth_token_ip_rate_limit": "4/hour", "redis_url": REDIS_URL}
    async with (
        running(sqlite_settings, clock, **limits) as one,
        running(sqlite_settings, clock, **limits) as two,
        client_at(one, address) as first,
        client_at(two, address.replace("::1", "::2")) as second,  # same /64
    ):
        creds = await credentials(one)
        statuses = [
            (await token_request(client, creds)).status_code
            for client in (first, second, first, second, first, second)
        ]
    assert statuses == [200, 200, 200, 200, 429, 429]


# ---------------------------------------------------------------- consent entry point


async def entry(client: httpx.AsyncClient, params: dict[str, str]) -> httpx.Response:
    return await client.get("/sandbox/oauth/new", params=params)


async def sessions(app: FastAPI) -> int:
    db: Database = app.state.autoport.database
    return int(await db.fetch_value("SELECT COUNT(*) FROM consent_sessions"))


def assert_busy_page(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text[:300]
    assert "text/html" in response.headers["content-type"]
    assert "location" not in response.headers
    assert "Too many requests" in response.text
    assert int(response.headers["retry-after"]) >= 1
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


async def test_consent_entry_limits_each_address(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    async with running(sqlite_settings, clock, consent_entry_ip_rate_limit="3/hour") as app:
        consent = await insert_application(app.state.autoport.database)
        async with client_at(app, ATTACKER) as attacker, client_at(app, OTHER) as other:
            for _ in range(3):
                assert (await entry(attacker, consent.entry_params())).status_code == 303
            assert_busy_page(await entry(attacker, consent.entry_params()))
            # Unknown clients count too: the flood is turned away before any lookup.
            assert_busy_page(await entry(attacker, {"client_id": "nobody"}))
            assert await sessions(app) == 3
            assert (await entry(other, consent.entry_params())).status_code == 303
            assert await sessions(app) == 4


async def test_consent_entry_limits_each_client(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    async with running(sqlite_settings, clock, consent_entry_client_rate_limit="2/hour") as app:
        db = app.state.autoport.database
        busy, quiet = await insert_application(db), await insert_application(db)
        async with client_at(app, ATTACKER) as attacker, client_at(app, OTHER) as other:
            assert (await entry(attacker, busy.entry_params())).status_code == 303
            assert (await entry(other, busy.entry_params())).status_code == 303
            assert_busy_page(await entry(other, busy.entry_params()))
            german = await entry(other, busy.entry_params(locale="de-DE"))
            assert german.status_code == 429 and "Zu viele Anfragen" in german.text
            assert (await entry(attacker, quiet.entry_params())).status_code == 303


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("oauth_token_ip_rate_limit", "lots"),
        ("oauth_token_client_rate_limit", "5/fortnight"),
        ("consent_entry_ip_rate_limit", ""),
        ("consent_entry_client_rate_limit", "x/minute"),
    ],
)
def test_limit_settings_are_checked_when_read(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name):
        Settings(**{name: value})  # type: ignore[arg-type]
