"""An expired access token is refused as expired for as long as its row exists: past the
housekeeping sweep, on every route that checks a bearer (pull, history, SSE, vehicleinfo,
fleet), not just until the next sweep and then as "not valid" like a random string."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.oauth.tasks import INTERVAL_SECONDS, KEEP_EXPIRED_TOKENS_SECONDS, sweep
from tests.factories import AppCredentials, bearer, client_credentials_token, vehicle_token
from tests.oauth.conftest import token_request

VIN = "1HGCM82633A004352"
DATA_ROUTES = [
    f"/v1/vehicle-data/autoapi-13/{VIN}",
    f"/v1/vehicle-data/autoapi-13/{VIN}/history?property=charging.battery_level",
    "/v1/stream",
    "/v1/fleets/vehicles",
]


async def refusal(client: httpx.AsyncClient, path: str, token: str) -> str:
    response = await client.get(path, headers=bearer(token))
    assert response.status_code == 401, (path, response.text)
    if path == "/v1/vehicleinfo":
        assert 'error="invalid_token"' in response.headers["www-authenticate"]
        detail: str = response.json()["error_description"]
    else:
        [error] = response.json()["errors"]
        assert error["source"] == "Authorization"
        detail = error["detail"]
    return detail


@pytest.mark.parametrize("path", [*DATA_ROUTES, "/v1/vehicleinfo"])
async def test_an_expired_token_stays_expired_after_the_sweep(
    app: FastAPI,
    client: httpx.AsyncClient,
    db: Database,
    creds: AppCredentials,
    clock: FrozenClock,
    path: str,
) -> None:
    if path == "/v1/vehicleinfo":
        token = (await vehicle_token(client, db, creds, vin=VIN)).access_token
    else:
        token = await client_credentials_token(client, creds)
    # Well past the lifetime (an hour at most) and several housekeeping rounds.
    for _ in range(3):
        clock.advance(3600 + INTERVAL_SECONDS)
        await sweep(app.state.autoport)
    assert "has expired" in await refusal(client, path, token)
    clock.advance(KEEP_EXPIRED_TOKENS_SECONDS)
    await sweep(app.state.autoport)
    # The row is gone: from now on it is indistinguishable from a token never issued.
    assert "not valid" in await refusal(client, path, token)
    assert "not valid" in await refusal(client, path, "ap_at_never-issued")


async def test_an_expired_refresh_token_stays_expired_after_the_sweep(
    app: FastAPI,
    client: httpx.AsyncClient,
    db: Database,
    creds: AppCredentials,
    clock: FrozenClock,
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN)
    clock.advance(app.state.autoport.settings.oauth_refresh_token_seconds + INTERVAL_SECONDS)
    await sweep(app.state.autoport)
    refused = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=token.refresh_token
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] == "invalid_grant"
    assert "has expired" in refused.json()["error_description"]
