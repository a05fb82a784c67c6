"""Client authentication: secrets (body, Basic, rotation), private_key_jwt assertions,
and the RFC error codes with descriptions that name the problem."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from autoport.apps import service as apps_service
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from tests.factories import AppCredentials, bearer, client_credentials_token
from tests.oauth.errors import assert_oauth_error

BASE = "http://127.0.0.1:8080"


async def add_generated_key(db: Database, creds: AppCredentials, now_us: int) -> dict[str, Any]:
    async with db.transaction() as conn:
        new = await apps_service.add_key(
            conn, environment=creds.environment, app_id=creds.app_id, now_us=now_us
        )
    assert new.private_jwk is not None
    return new.private_jwk


def assertion(private_jwk: dict[str, Any], **claims: Any) -> str:
    key = ECKey.import_key(private_jwk)
    payload = {
        "iss": private_jwk["kid"],
        "aud": f"{BASE}/v1",
        "iat": int(time.time()),
        "jti": str(uuid.uuid4()),
        "ver": 1,
        **claims,
    }
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode({"alg": "ES256", "kid": private_jwk["kid"]}, payload, key)


def assertion_body(token: str) -> dict[str, str]:
    return {
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": token,
    }


async def test_wrong_secret_is_invalid_client(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await client.post(
        creds.token_path,
        data={
            "grant_type": "client_credentials",
            "client_id": creds.client_id,
            "client_secret": "ap_cs_wrong",
        },
    )
    assert_oauth_error(response, 401, "invalid_client", "client_secret is wrong")


async def test_wrong_secret_in_basic_gets_a_basic_challenge(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await client.post(
        creds.token_path, data={"grant_type": "client_credentials"}, auth=(creds.client_id, "bad")
    )
    assert_oauth_error(response, 401, "invalid_client", "client_secret is wrong")
    assert response.headers["www-authenticate"].startswith("Basic")


@pytest.mark.parametrize(
    ("params", "status", "error", "words"),
    [
        ({"grant_type": "client_credentials"}, 401, "invalid_client", "no client_id"),
        (
            {"grant_type": "client_credentials", "client_id": "nope", "client_secret": "x"},
            401,
            "invalid_client",
            "unknown client_id",
        ),
        ({}, 400, "invalid_request", "grant_type is missing"),
        ({"grant_type": "password"}, 400, "unsupported_grant_type", "'password'"),
    ],
)
async def test_bad_client_requests(
    client: httpx.AsyncClient,
    creds: AppCredentials,
    params: dict[str, str],
    status: int,
    error: str,
    words: str,
) -> None:
    response = await client.post(creds.token_path, data=params)
    assert_oauth_error(response, status, error, words)


async def test_missing_secret_for_confidential_client(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await client.post(
        creds.token_path, data={"grant_type": "client_credentials", "client_id": creds.client_id}
    )
    assert_oauth_error(response, 401, "invalid_client", "client_secret is missing")


async def test_secret_in_body_and_basic_at_once_is_refused(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    assert creds.client_secret is not None
    response = await client.post(
        creds.token_path,
        data={"grant_type": "client_credentials", "client_secret": creds.client_secret},
        auth=(creds.client_id, creds.client_secret),
    )
    assert_oauth_error(response, 400, "invalid_request", "both in the body and in HTTP Basic")


async def test_rotated_secret_overlaps_then_stops(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    async with db.transaction() as conn:
        new_secret, _ = await apps_service.rotate_secret(
            conn,
            environment=creds.environment,
            app_id=creds.app_id,
            now_us=clock.now_us(),
            overlap_seconds=60,
        )
    for secret in (creds.client_secret, new_secret):
        response = await client.post(
            creds.token_path,
            data={
                "grant_type": "client_credentials",
                "client_id": creds.client_id,
                "client_secret": secret,
            },
        )
        assert response.status_code == 200, response.text
    clock.advance(61)
    old = await client.post(
        creds.token_path,
        data={
            "grant_type": "client_credentials",
            "client_id": creds.client_id,
            "client_secret": creds.client_secret,
        },
    )
    assert_oauth_error(old, 401, "invalid_client", "client_secret is wrong")
    new = await client.post(
        creds.token_path,
        data={
            "grant_type": "client_credentials",
            "client_id": creds.client_id,
            "client_secret": new_secret,
        },
    )
    assert new.status_code == 200


async def test_private_key_jwt_gets_a_token_once_per_jti(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    private = await add_generated_key(db, creds, clock.now_us())
    signed = assertion(private, iat=clock.now_us() // 1_000_000)
    first = await client.post(creds.token_path, data=assertion_body(signed))
    assert first.status_code == 200, first.text
    token = first.json()["access_token"]
    caller_check = await client.get("/v1/vehicleinfo", headers=bearer(token))
    assert caller_check.status_code == 403  # a client token is bound to no vehicle
    replay = await client.post(creds.token_path, data=assertion_body(signed))
    assert_oauth_error(replay, 401, "invalid_client", "already used (replay)")


async def test_assertion_in_a_json_body_with_client_id(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    private = await add_generated_key(db, creds, clock.now_us())
    signed = assertion(private, iat=clock.now_us() // 1_000_000)
    body = {**assertion_body(signed), "client_id": creds.client_id}
    response = await client.post(creds.token_path, json=body)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("claims", "words"),
    [
        ({"iat_offset": -31}, "more than 30 s"),
        ({"iat_offset": 31}, "more than 30 s"),
        ({"exp_offset": -40}, "has expired"),
        ({"aud": "https://elsewhere.example/v1"}, "'aud' must be"),
        ({"jti": None}, "no 'jti'"),
        ({"iss": "not-a-key"}, "not a registered key"),
    ],
)
async def test_bad_assertions_are_refused(
    client: httpx.AsyncClient,
    db: Database,
    creds: AppCredentials,
    clock: FrozenClock,
    claims: dict[str, Any],
    words: str,
) -> None:
    private = await add_generated_key(db, creds, clock.now_us())
    now_s = clock.now_us() // 1_000_000
    claims = dict(claims)
    iat = now_s + claims.pop("iat_offset", 0)
    if "exp_offset" in claims:
        claims["exp"] = now_s + claims.pop("exp_offset")
    signed = assertion(private, iat=iat, **claims)
    response = await client.post(creds.token_path, data=assertion_body(signed))
    assert_oauth_error(response, 401, "invalid_client", words)


async def test_assertion_signed_by_another_key_is_refused(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    private = await add_generated_key(db, creds, clock.now_us())
    impostor = dict(ECKey.generate_key("P-256").as_dict(private=True))
    impostor["kid"] = private["kid"]
    signed = assertion(impostor, iat=clock.now_us() // 1_000_000)
    response = await client.post(creds.token_path, data=assertion_body(signed))
    assert_oauth_error(response, 401, "invalid_client", "signature is not valid")


async def test_removed_key_no_longer_authenticates(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    private = await add_generated_key(db, creds, clock.now_us())
    async with db.transaction() as conn:
        await apps_service.remove_key(
            conn,
            environment=creds.environment,
            app_id=creds.app_id,
            key_id=private["kid"],
            now_us=clock.now_us(),
        )
    signed = assertion(private, iat=clock.now_us() // 1_000_000)
    response = await client.post(creds.token_path, data=assertion_body(signed))
    assert_oauth_error(response, 401, "invalid_client", "not a registered key")


async def test_wrong_assertion_type_is_invalid_request(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await client.post(
        creds.token_path,
        data={
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:example:saml",
            "client_assertion": "x.y.z",
        },
    )
    assert_oauth_error(response, 400, "invalid_request", "client_assertion_type must be")


async def test_disabled_application_gets_no_tokens_and_its_tokens_stop(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    token = await client_credentials_token(client, creds)
    async with db.transaction() as conn:
        await apps_service.update_application(
            conn,
            environment=creds.environment,
            app_id=creds.app_id,
            now_us=clock.now_us(),
            disabled=True,
        )
    response = await client.post(
        creds.token_path, data={"grant_type": "client_credentials", **creds.auth()}
    )
    assert_oauth_error(response, 401, "invalid_client", "disabled")
    info = await client.get("/v1/vehicleinfo", headers=bearer(token))
    assert_oauth_error(info, 401, "invalid_token", "disabled")


async def test_per_account_token_path_checks_the_account(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    body = {"grant_type": "client_credentials", **creds.auth()}
    good = await client.post(f"/v1/{creds.account_id}/oauth/access_tokens", data=body)
    assert good.status_code == 200, good.text
    alias = await client.post("/v1/access_token", data=body)
    assert alias.status_code == 200
    other = await client.post("/v1/someone-else/oauth/access_tokens", data=body)
    assert_oauth_error(other, 401, "invalid_client", "does not belong to this account")


async def test_a_clients_record_is_read_once_while_its_tables_are_unchanged(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, creds: AppCredentials
) -> None:
    # The token endpoint keeps a client's application and secrets while nothing is
    # committed to them (autoport.oauth.routes._client_record): the tokens it writes
    # meanwhile do not make the record stale.
    from autoport.oauth import routes

    reads: list[str] = []
    real = apps_service.client_record

    async def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs["client_id"])
        return await real(*args, **kwargs)

    monkeypatch.setattr(routes, "client_record", counted)
    body = {"grant_type": "client_credentials", **creds.auth()}
    assert (await client.post(creds.token_path, data=body)).status_code == 200
    # PostgreSQL: the notifications of the fixture's own commits arrive by then.
    await asyncio.sleep(0.2)
    reads.clear()
    for _ in range(3):
        response = await client.post(creds.token_path, data=body)
        assert response.status_code == 200, response.text
    assert len(reads) <= 1
    for _ in range(3):
        assert (await client.post(creds.token_path, data=body)).status_code == 200
    assert len(reads) <= 1


async def test_an_application_disabled_by_another_process_gets_no_more_tokens(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    # Attacker's view: the client's record was kept (the first token); the operator
    # disables the application from another process (its own connection). The next
    # token request is refused: on SQLite within kit.db.VERSION_REUSE_SECONDS, on
    # PostgreSQL once the commit's notification has arrived.
    import sqlite3

    from autoport.kit.db import VERSION_REUSE_SECONDS, SqliteDatabase

    body = {"grant_type": "client_credentials", **creds.auth()}
    assert (await client.post(creds.token_path, data=body)).status_code == 200
    if isinstance(db, SqliteDatabase):
        other = sqlite3.connect(db.path)
        try:
            other.execute("UPDATE applications SET disabled_at = 1 WHERE id = ?", (creds.app_id,))
            other.commit()
        finally:
            other.close()
        await asyncio.sleep(VERSION_REUSE_SECONDS * 2)
        response = await client.post(creds.token_path, data=body)
    else:
        await db.execute(
            "UPDATE applications SET disabled_at = 1 WHERE id = :id", {"id": creds.app_id}
        )
        for _ in range(100):  # the notification arrives within milliseconds
            response = await client.post(creds.token_path, data=body)
            if response.status_code != 200:
                break
            await asyncio.sleep(0.01)
    assert_oauth_error(response, 401, "invalid_client", "disabled")
