"""Housekeeping removes what can no longer be used, and nothing else; code issuance
refuses what the contract forbids."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.oauth.tasks import KEEP_EXPIRED_TOKENS_SECONDS, sweep
from tests.factories import (
    AppCredentials,
    bearer,
    client_credentials_token,
    create_app_credentials,
    create_authorization,
    issue_code,
    vehicle_token,
)

VIN = "1FTFW1ET5DFC10312"


async def test_sweep_deletes_tokens_a_day_after_they_expired(
    app: FastAPI,
    client: httpx.AsyncClient,
    db: Database,
    creds: AppCredentials,
    clock: FrozenClock,
) -> None:
    old = await client_credentials_token(client, creds)
    clock.advance(301)
    expired = await client_credentials_token(client, creds)
    # Expired, but kept: the client is told so (tests/oauth/test_expired_tokens.py).
    assert await sweep(app.state.autoport) == 0
    clock.advance(KEEP_EXPIRED_TOKENS_SECONDS)
    fresh = await client_credentials_token(client, creds)
    assert await sweep(app.state.autoport) == 1
    assert (await client.get("/v1/vehicleinfo", headers=bearer(fresh))).status_code == 403
    gone = await client.get("/v1/vehicleinfo", headers=bearer(old))
    assert gone.status_code == 401
    assert "not valid" in gone.json()["error_description"]
    kept = await client.get("/v1/vehicleinfo", headers=bearer(expired))
    assert "expired" in kept.json()["error_description"]


async def test_sandbox_vehicle_token_from_the_factory(
    client: httpx.AsyncClient, db: Database
) -> None:
    sandbox = await create_app_credentials(db, environment=Environment.sandbox)
    token = await vehicle_token(client, db, sandbox, vin=VIN)
    info = await client.get("/sandbox/v1/vehicleinfo", headers=token.headers)
    assert info.status_code == 200
    assert (await client.get("/v1/vehicleinfo", headers=token.headers)).status_code == 401


async def test_public_client_code_needs_a_challenge(
    db: Database, public_creds: AppCredentials
) -> None:
    authorization_id = await create_authorization(db, public_creds, vin=VIN)
    with pytest.raises(ApiError) as refused:
        await issue_code(db, public_creds, authorization_id)
    assert refused.value.source == "code_challenge"


@pytest.mark.parametrize(
    ("kwargs", "source"),
    [
        ({"redirect_uri": "https://evil.example/cb"}, "redirect_uri"),
        ({"code_challenge": "short"}, "code_challenge"),
        ({"code_challenge": "x" * 43, "code_challenge_method": "S512"}, "code_challenge_method"),
    ],
)
async def test_code_issuance_validates_its_input(
    db: Database, creds: AppCredentials, kwargs: dict[str, str], source: str
) -> None:
    authorization_id = await create_authorization(db, creds, vin=VIN)
    with pytest.raises(ApiError) as refused:
        await issue_code(db, creds, authorization_id, **kwargs)  # type: ignore[arg-type]
    assert refused.value.source == source
