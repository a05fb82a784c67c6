"""Each malformed or wrong token request gets its RFC 6749 error code and a description
naming the problem; JSON and form bodies behave the same."""

from __future__ import annotations

import httpx
import pytest

from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from tests.factories import AppCredentials, create_authorization, issue_code, pkce_pair
from tests.oauth.errors import assert_oauth_error

VIN = "WBA3A5C51CF256551"


@pytest.fixture
async def code(db: Database, creds: AppCredentials, clock: FrozenClock) -> tuple[str, str]:
    authorization_id = await create_authorization(db, creds, vin=VIN, now_us=clock.now_us())
    verifier, challenge = pkce_pair()
    issued = await issue_code(
        db, creds, authorization_id, code_challenge=challenge, now_us=clock.now_us()
    )
    return issued, verifier


@pytest.mark.parametrize("encoding", ["form", "json"])
@pytest.mark.parametrize(
    ("change", "status", "error", "words"),
    [
        ({"code": None}, 400, "invalid_request", "code is missing"),
        ({"redirect_uri": None}, 400, "invalid_request", "redirect_uri is missing"),
        (
            {"redirect_uri": "https://app.example.com/callback/"},
            400,
            "invalid_grant",
            "redirect_uri does not match",
        ),
        ({"code_verifier": None}, 400, "invalid_grant", "code_verifier is missing"),
        ({"code_verifier": "x" * 50}, 400, "invalid_grant", "does not match the code_challenge"),
        ({"code": "ap_ac_unknown"}, 400, "invalid_grant", "not valid"),
        ({"grant_type": "implicit"}, 400, "unsupported_grant_type", "'implicit'"),
    ],
)
async def test_code_exchange_errors(
    client: httpx.AsyncClient,
    creds: AppCredentials,
    code: tuple[str, str],
    encoding: str,
    change: dict[str, str | None],
    status: int,
    error: str,
    words: str,
) -> None:
    params: dict[str, str | None] = {
        "grant_type": "authorization_code",
        "code": code[0],
        "redirect_uri": creds.redirect_uri,
        "code_verifier": code[1],
        **creds.auth(),
        **change,
    }
    body = {k: v for k, v in params.items() if v is not None}
    if encoding == "json":
        response = await client.post(creds.token_path, json=body)
    else:
        response = await client.post(creds.token_path, data=body)
    assert_oauth_error(response, status, error, words)
    # A failed attempt does not burn the code: the right request still works.
    good = {
        "grant_type": "authorization_code",
        "code": code[0],
        "redirect_uri": creds.redirect_uri,
        "code_verifier": code[1],
        **creds.auth(),
    }
    assert (await client.post(creds.token_path, data=good)).status_code == 200


async def test_expired_code(
    client: httpx.AsyncClient, creds: AppCredentials, code: tuple[str, str], clock: FrozenClock
) -> None:
    clock.advance(601)
    response = await client.post(
        creds.token_path,
        data={
            "grant_type": "authorization_code",
            "code": code[0],
            "redirect_uri": creds.redirect_uri,
            "code_verifier": code[1],
            **creds.auth(),
        },
    )
    assert_oauth_error(response, 400, "invalid_grant", "has expired")


async def test_code_of_another_client_is_refused(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, code: tuple[str, str]
) -> None:
    from tests.factories import create_app_credentials

    other = await create_app_credentials(db, name="Other")
    response = await client.post(
        other.token_path,
        data={
            "grant_type": "authorization_code",
            "code": code[0],
            "redirect_uri": creds.redirect_uri,
            "code_verifier": code[1],
            **other.auth(),
        },
    )
    assert_oauth_error(response, 400, "invalid_grant", "another client")


@pytest.mark.parametrize(
    ("content", "content_type", "words"),
    [
        (b"{not json", "application/json", "not valid JSON"),
        (b"[1, 2]", "application/json", "must be an object"),
        (b'{"grant_type": ["client_credentials"]}', "application/json", "grant_type must be"),
        (
            b"grant_type=client_credentials&grant_type=refresh_token",
            "application/x-www-form-urlencoded",
            "grant_type is repeated",
        ),
        (b"<xml/>", "text/xml", "x-www-form-urlencoded or application/json"),
    ],
)
async def test_malformed_bodies(
    client: httpx.AsyncClient, creds: AppCredentials, content: bytes, content_type: str, words: str
) -> None:
    response = await client.post(
        creds.token_path, content=content, headers={"content-type": content_type}
    )
    assert_oauth_error(response, 400, "invalid_request", words)


async def test_refresh_errors(client: httpx.AsyncClient, creds: AppCredentials) -> None:
    missing = await client.post(
        creds.token_path, data={"grant_type": "refresh_token", **creds.auth()}
    )
    assert_oauth_error(missing, 400, "invalid_request", "refresh_token is missing")
    unknown = await client.post(
        creds.token_path,
        data={"grant_type": "refresh_token", "refresh_token": "ap_rt_nope", **creds.auth()},
    )
    assert_oauth_error(unknown, 400, "invalid_grant", "not valid")


async def test_refresh_token_of_another_application_is_refused_without_harm(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    from tests.factories import create_app_credentials, vehicle_token

    token = await vehicle_token(client, db, creds, vin=VIN)
    other = await create_app_credentials(db, name="Other")
    stolen = await client.post(
        other.token_path,
        data={"grant_type": "refresh_token", "refresh_token": token.refresh_token, **other.auth()},
    )
    assert_oauth_error(stolen, 400, "invalid_grant", "not valid")
    mine = await client.post(
        creds.token_path,
        data={"grant_type": "refresh_token", "refresh_token": token.refresh_token, **creds.auth()},
    )
    assert mine.status_code == 200, mine.text


async def test_refresh_of_revoked_authorization_is_refused(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    from autoport.oauth.service import set_authorization_status
    from tests.factories import vehicle_token

    token = await vehicle_token(client, db, creds, vin=VIN)
    async with db.transaction() as conn:
        await set_authorization_status(
            conn,
            environment=creds.environment,
            authorization_id=token.authorization_id,
            status="revoked",
            now_us=clock.now_us(),
        )
    response = await client.post(
        creds.token_path,
        data={"grant_type": "refresh_token", "refresh_token": token.refresh_token, **creds.auth()},
    )
    assert_oauth_error(response, 400, "invalid_grant", "revoked")
