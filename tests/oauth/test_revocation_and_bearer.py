"""Revocation (RFC 7009), the bearer authenticator behind `CallerDep`, vehicleinfo,
authorization status changes and their outbox events, and RFC 8414 metadata."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit import keyring
from autoport.kit.auth import CallerDep
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.routing import api_router, json_response
from autoport.oauth.service import set_authorization_status
from tests.factories import (
    AppCredentials,
    bearer,
    client_credentials_token,
    create_app_credentials,
    vehicle_token,
)
from tests.oauth.errors import assert_oauth_error

VIN = "5YJ3E1EA7KF317000"

probe = api_router()


@probe.get("/v1/probe")
async def whoami(caller: CallerDep) -> object:
    grant = caller.grant
    return json_response(
        {
            "kind": caller.kind,
            "application_id": caller.application_id,
            "environment": caller.environment,
            "scopes": sorted(caller.scopes),
            "vin": grant.vin if grant else None,
            "status": grant.status if grant else None,
            "properties": sorted(grant.properties) if grant else None,
        }
    )


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock, run_background=False)
    application.include_router(probe)
    async with application.router.lifespan_context(application):
        yield application


async def outbox_events(db: Database) -> list[dict[str, Any]]:
    rows = await db.fetch_all(
        "SELECT consumer, event_type, vin, application_id, payload FROM outbox ORDER BY id"
    )
    return [
        {
            "consumer": r["consumer"],
            "event_type": r["event_type"],
            "vin": r["vin"],
            "application_id": r["application_id"],
            "payload": orjson.loads(r["payload"]),
        }
        for r in rows
    ]


async def test_vehicle_token_yields_a_vehicle_caller(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN, properties=["charging.battery_level"])
    response = await client.get("/v1/probe", headers=token.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "kind": "vehicle",
        "application_id": creds.app_id,
        "environment": "production",
        "scopes": ["charging.get.battery_level", "vehicle:data"],
        "vin": VIN,
        "status": "approved",
        "properties": ["charging.battery_level"],
    }


@pytest.mark.parametrize(
    ("header", "words"),
    [
        (None, "an access token is required"),
        ("Basic abc", "must be 'Bearer <access token>'"),
        ("Bearer ap_at_unknown", "not valid"),
    ],
)
async def test_bearer_refusals_use_our_error_shape(
    client: httpx.AsyncClient, header: str | None, words: str
) -> None:
    response = await client.get("/v1/probe", headers={"authorization": header} if header else {})
    assert response.status_code == 401
    body = response.json()
    assert words in body["errors"][0]["detail"]
    assert body["errors"][0]["source"] == "Authorization"
    assert body["request_id"] == response.headers["x-request-id"]
    assert response.headers["www-authenticate"].startswith('Bearer realm="autoport"')


async def test_expired_client_token_is_refused(
    client: httpx.AsyncClient, creds: AppCredentials, clock: FrozenClock
) -> None:
    token = await client_credentials_token(client, creds)
    assert (await client.get("/v1/probe", headers=bearer(token))).status_code == 200
    clock.advance(300)
    response = await client.get("/v1/probe", headers=bearer(token))
    assert response.status_code == 401
    assert "expired" in response.json()["errors"][0]["detail"]
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_sandbox_token_is_refused_on_production(
    client: httpx.AsyncClient, db: Database
) -> None:
    sandbox = await create_app_credentials(db, environment=Environment.sandbox)
    token = await client_credentials_token(client, sandbox)
    assert (await client.get("/sandbox/v1/probe", headers=bearer(token))).json()[
        "environment"
    ] == "sandbox"
    response = await client.get("/v1/probe", headers=bearer(token))
    assert response.status_code == 401
    assert "belongs to sandbox" in response.json()["errors"][0]["detail"]
    # The client's credentials themselves are per environment too.
    cross = await client.post(
        "/v1/access_tokens", data={"grant_type": "client_credentials", **sandbox.auth()}
    )
    assert_oauth_error(cross, 401, "invalid_client", "unknown client_id in production")


async def test_refresh_token_is_not_a_bearer_token(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN)
    response = await client.get("/v1/probe", headers=bearer(token.refresh_token))
    assert response.status_code == 401


async def test_revoking_an_access_token(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN)
    response = await client.request(
        "DELETE",
        "/v1/access_tokens",
        data={"token": token.access_token, "token_type_hint": "access_token", **creds.auth()},
    )
    assert response.status_code == 200
    assert response.content == b""
    assert (await client.get("/v1/probe", headers=token.headers)).status_code == 401
    # The grant lives on: the refresh token still works.
    refreshed = await client.post(
        creds.token_path,
        data={"grant_type": "refresh_token", "refresh_token": token.refresh_token, **creds.auth()},
    )
    assert refreshed.status_code == 200
    assert await outbox_events(db) == []


async def test_revoking_a_refresh_token_ends_the_grant_and_emits_revoked(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN)
    response = await client.request(
        "DELETE",
        "/v1/access_tokens",
        json={"token": token.refresh_token, "token_type_hint": "refresh_token", **creds.auth()},
    )
    assert response.status_code == 200
    assert (await client.get("/v1/probe", headers=token.headers)).status_code == 401
    status = await db.fetch_value(
        "SELECT status FROM authorizations WHERE id = :id", {"id": token.authorization_id}
    )
    assert status == "revoked"
    events = await outbox_events(db)
    assert {e["consumer"] for e in events} == {"webhooks", "streaming"}
    for event in events:
        assert event["event_type"] == "authorization_changed"
        assert event["vin"] == VIN
        assert event["application_id"] == creds.app_id
        assert event["payload"] == {
            "action": "revoked",
            "authorization_id": token.authorization_id,
            "detail": "the application revoked its refresh token",
        }


async def test_revocation_of_unknown_or_foreign_tokens_is_a_quiet_200(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    other = await create_app_credentials(db, name="Other")
    theirs = await client_credentials_token(client, other)
    for token in ("ap_at_unknown", theirs):
        response = await client.post("/v1/revoke", data={"token": token, **creds.auth()})
        assert response.status_code == 200
        assert response.content == b""
    assert (await client.get("/v1/probe", headers=bearer(theirs))).status_code == 200


async def test_revocation_needs_client_authentication_and_a_token(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    missing = await client.request("DELETE", "/v1/access_tokens", data=creds.auth())
    assert_oauth_error(missing, 400, "invalid_request", "token is missing")
    anonymous = await client.request("DELETE", "/v1/access_tokens", data={"token": "x"})
    assert_oauth_error(anonymous, 401, "invalid_client", "no client_id")


async def test_pending_authorization_then_approved_and_rejected_events(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN, status="pending")
    assert token.response["status"] == "pending"
    assert (await client.get("/v1/probe", headers=token.headers)).json()["status"] == "pending"
    async with db.transaction() as conn:
        changed = await set_authorization_status(
            conn,
            environment=creds.environment,
            authorization_id=token.authorization_id,
            status="approved",
            now_us=clock.now_us(),
        )
    assert changed
    assert (await client.get("/v1/probe", headers=token.headers)).json()["status"] == "approved"
    events = await outbox_events(db)
    assert [e["payload"]["action"] for e in events] == ["approved", "approved"]

    second = await vehicle_token(client, db, creds, vin=VIN, status="pending")
    async with db.transaction() as conn:
        await set_authorization_status(
            conn,
            environment=creds.environment,
            authorization_id=second.authorization_id,
            status="rejected",
            now_us=clock.now_us(),
            detail="owner declined in the portal",
        )
    response = await client.get("/v1/probe", headers=second.headers)
    assert response.status_code == 401
    assert "rejected" in response.json()["errors"][0]["detail"]
    last = (await outbox_events(db))[-1]
    assert last["payload"]["action"] == "rejected"
    assert last["payload"]["detail"] == "owner declined in the portal"


async def test_status_transitions_are_checked(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    from autoport.kit.errors import ApiError

    token = await vehicle_token(client, db, creds, vin=VIN)
    async with db.transaction() as conn:
        same = await set_authorization_status(
            conn,
            environment=creds.environment,
            authorization_id=token.authorization_id,
            status="approved",
            now_us=clock.now_us(),
        )
    assert same is False
    with pytest.raises(ApiError) as refused:
        async with db.transaction() as conn:
            await set_authorization_status(
                conn,
                environment=creds.environment,
                authorization_id=token.authorization_id,
                status="rejected",
                now_us=clock.now_us(),
            )
    assert refused.value.status == 409
    with pytest.raises(ApiError) as missing:
        async with db.transaction() as conn:
            await set_authorization_status(
                conn,
                environment=Environment.sandbox,
                authorization_id=token.authorization_id,
                status="revoked",
                now_us=clock.now_us(),
            )
    assert missing.value.status == 404


async def test_vehicleinfo_errors_use_the_oauth_shape(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/vehicleinfo", headers=bearer("ap_at_nope"))
    assert_oauth_error(response, 401, "invalid_token", "not valid")
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


async def test_metadata_per_environment(client: httpx.AsyncClient) -> None:
    production = (await client.get("/.well-known/oauth-authorization-server")).json()
    assert production["issuer"] == "http://127.0.0.1:8080"
    assert production["token_endpoint"] == "http://127.0.0.1:8080/v1/access_tokens"
    assert production["authorization_endpoint"] == "http://127.0.0.1:8080/oauth/new"
    assert "private_key_jwt" in production["token_endpoint_auth_methods_supported"]
    # RFC 9700 §2.1.1: plain is neither advertised nor accepted; RFC 9207: `iss` is sent.
    assert production["code_challenge_methods_supported"] == ["S256"]
    assert production["authorization_response_iss_parameter_supported"] is True
    assert "charging.get.battery_level" in production["scopes_supported"]
    sandbox = (await client.get("/sandbox/.well-known/oauth-authorization-server")).json()
    assert sandbox["issuer"] == "http://127.0.0.1:8080/sandbox"
    assert sandbox["token_endpoint"] == "http://127.0.0.1:8080/sandbox/v1/access_tokens"


async def test_a_verified_token_is_refused_once_revoked_by_another_connection(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    # The authenticator keeps verified tokens while nothing is committed (SQLite): a
    # revocation written by another connection (another process, the CLI) must end it at
    # once, not after some time to live.
    token = await vehicle_token(client, db, creds, vin=VIN)
    for _ in range(2):  # the second call is served from the cache on SQLite
        assert (await client.get("/v1/probe", headers=token.headers)).status_code == 200
    await db.execute("UPDATE oauth_tokens SET revoked_at = 1 WHERE kind = 'access'")
    refused = await client.get("/v1/probe", headers=token.headers)
    assert refused.status_code == 401
    assert "revoked" in refused.json()["errors"][0]["detail"]


async def test_a_verified_token_is_refused_once_its_application_is_disabled(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN)
    assert (await client.get("/v1/probe", headers=token.headers)).status_code == 200
    assert (await client.get("/v1/probe", headers=token.headers)).status_code == 200
    await db.execute("UPDATE applications SET disabled_at = 1")
    refused = await client.get("/v1/probe", headers=token.headers)
    assert refused.status_code == 401
    assert "disabled" in refused.json()["errors"][0]["detail"]


async def test_a_token_issued_under_a_key_rotated_in_since_the_last_look_is_found(
    app: FastAPI,
    client: httpx.AsyncClient,
    creds: AppCredentials,
    settings: Settings,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bearer check reuses its look at the secrets file for RECHECK_SECONDS (a
    # millisecond), stretched here so that every request below falls within one look.
    monkeypatch.setattr(keyring, "RECHECK_SECONDS", 60.0)
    old = await client_credentials_token(client, creds)
    assert (await client.get("/v1/probe", headers=bearer(old))).status_code == 200
    # After a leak: no window for the old key. Another replica issues a token under the
    # new key, which this one has not looked at yet.
    keyring.rotate(settings, "token_hmac_key", window_seconds=0)
    replica = create_app(settings, clock=clock, run_background=False)
    async with (
        replica.router.lifespan_context(replica),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=replica), base_url="http://127.0.0.1:8080"
        ) as other,
    ):
        new = await client_credentials_token(other, creds)
    assert (await client.get("/v1/probe", headers=bearer(new))).status_code == 200
    # That look found the new key: the old key's token is refused from then on.
    refused = await client.get("/v1/probe", headers=bearer(old))
    assert refused.status_code == 401


async def test_a_rotation_without_window_refuses_old_tokens_once_the_look_is_renewed(
    app: FastAPI, client: httpx.AsyncClient, creds: AppCredentials, settings: Settings
) -> None:
    old = await client_credentials_token(client, creds)
    assert (await client.get("/v1/probe", headers=bearer(old))).status_code == 200
    keyring.rotate(settings, "token_hmac_key", window_seconds=0)
    await asyncio.sleep(keyring.RECHECK_SECONDS * 2)
    refused = await client.get("/v1/probe", headers=bearer(old))
    assert refused.status_code == 401
    assert refused.json()["errors"][0]["detail"] == "the access token is not valid"


async def test_a_verified_token_of_a_previous_key_is_refused_once_its_window_ends(
    app: FastAPI, client: httpx.AsyncClient, creds: AppCredentials, settings: Settings
) -> None:
    # Verified (and kept) under the previous key during its window; the window then ends
    # with nothing committed to the token tables, which alone would keep the verdict.
    old = await client_credentials_token(client, creds)
    keyring.rotate(settings, "token_hmac_key", window_seconds=1.0)
    ends = time.time() + 1.0
    await asyncio.sleep(keyring.RECHECK_SECONDS * 2)
    for _ in range(2):  # the second answer comes from the verified tokens
        assert (await client.get("/v1/probe", headers=bearer(old))).status_code == 200
    assert time.time() < ends, "the machine was too slow"
    await asyncio.sleep(max(0.0, ends - time.time()) + 0.2)
    refused = await client.get("/v1/probe", headers=bearer(old))
    assert refused.status_code == 401
