"""The token response of every grant: the original types each field as a non-nullable
string or integer, so a field without a value is left out, never null (docs/oauth.md,
Token endpoint). Strict clients refuse a null."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from autoport.kit.clock import MICROS, FrozenClock, to_iso
from autoport.kit.db import Database
from tests.factories import AppCredentials, vehicle_token
from tests.oauth.conftest import token_request

VIN = "1HGCM82633A004352"
# What the original declares for the token response: name -> JSON type.
DECLARED: dict[str, type] = {
    "access_token": str,
    "token_type": str,
    "expires_in": int,
    "refresh_token": str,
    "scope": str,
    "status": str,
    "authorization_id": str,
    "validity_start_date": str,
    "validity_end_date": str,
}


def assert_declared_types(body: dict[str, Any]) -> None:
    for name, value in body.items():
        assert name in DECLARED, name
        assert isinstance(value, DECLARED[name]), (name, value)


async def test_client_credentials_has_no_null_and_no_grant_fields(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await token_request(client, creds, grant_type="client_credentials")
    assert response.status_code == 200, response.text
    body = response.json()
    assert_declared_types(body)
    assert set(body) == {"access_token", "token_type", "expires_in", "scope"}


@pytest.mark.parametrize("bounded", [False, True])
async def test_code_refresh_and_grace_answers_omit_an_absent_end(
    client: httpx.AsyncClient,
    db: Database,
    creds: AppCredentials,
    clock: FrozenClock,
    bounded: bool,
) -> None:
    now = clock.now_us()
    until = now + 30 * 86_400 * MICROS if bounded else None
    token = await vehicle_token(client, db, creds, vin=VIN, valid_until_us=until, now_us=now)
    refreshed = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=token.refresh_token
    )
    assert refreshed.status_code == 200, refreshed.text
    clock.advance(1)
    # Within the grace window the old refresh token gets the same pair again.
    again = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=token.refresh_token
    )
    assert again.status_code == 200, again.text
    assert again.json()["access_token"] == refreshed.json()["access_token"]
    for body in (token.response, refreshed.json(), again.json()):
        assert_declared_types(body)
        assert set(DECLARED) - set(body) == (set() if bounded else {"validity_end_date"})
        if until is not None:
            assert body["validity_end_date"] == to_iso(until)
