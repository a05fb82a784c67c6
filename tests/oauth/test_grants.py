"""The token endpoint's grants end to end, on both backends."""

from __future__ import annotations

import httpx

from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from tests.factories import (
    AppCredentials,
    bearer,
    bearer_request,
    client_credentials_token,
    create_authorization,
    issue_code,
    pkce_pair,
    vehicle_token,
)
from tests.oauth.conftest import token_request

VIN = "1HGCM82633A004352"


async def test_client_credentials_token_has_the_fleet_scopes(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await token_request(client, creds, grant_type="client_credentials")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 300
    assert body["scope"] == "vehicle:data vehicle:eligibility-check fleet:clearance"
    assert "refresh_token" not in body
    assert len(body["access_token"]) >= 43
    assert response.headers["cache-control"] == "no-store"


async def test_client_credentials_with_http_basic_and_json_body(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    assert creds.client_secret is not None
    response = await client.post(
        creds.token_path,
        json={"grant_type": "client_credentials"},
        auth=(creds.client_id, creds.client_secret),
    )
    assert response.status_code == 200, response.text


async def test_code_exchange_returns_the_interface_token_response(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN, properties=["charging.battery_level"])
    body = token.response
    assert set(body) == {
        "access_token",
        "token_type",
        "expires_in",
        "refresh_token",
        "scope",
        "status",
        "authorization_id",
        "validity_start_date",
    }
    assert body["scope"] == "vehicle:data charging.get.battery_level"
    assert body["status"] == "approved"
    assert body["authorization_id"] == token.authorization_id
    assert body["validity_start_date"].endswith("Z")
    # An open-ended grant has no end: the field is left out, never null.
    assert "validity_end_date" not in body
    info = await client.get("/v1/vehicleinfo", headers=token.headers)
    assert info.status_code == 200
    assert info.json()["vin"] == VIN
    assert info.json()["sub"].startswith("owner-")


async def test_code_is_single_use_and_reuse_revokes_its_tokens(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials
) -> None:
    authorization_id = await create_authorization(db, creds, vin=VIN)
    verifier, challenge = pkce_pair()
    code = await issue_code(db, creds, authorization_id, code_challenge=challenge)
    params = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": creds.redirect_uri,
        "code_verifier": verifier,
    }
    first = await token_request(client, creds, **params)
    assert first.status_code == 200, first.text
    access = first.json()["access_token"]
    assert (await client.get("/v1/vehicleinfo", headers=bearer(access))).status_code == 200
    second = await token_request(client, creds, **params)
    assert second.status_code == 400
    assert second.json()["error"] == "invalid_grant"
    assert "already used" in second.json()["error_description"]
    after = await client.get("/v1/vehicleinfo", headers=bearer(access))
    assert after.status_code == 401
    assert after.json()["error"] == "invalid_token"
    refreshed = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=first.json()["refresh_token"]
    )
    assert refreshed.status_code == 400


async def test_refresh_rotates_and_old_token_gives_same_pair_within_grace(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN)
    first = await token_request(
        client, creds, grant_type="refresh", refresh_token=token.refresh_token
    )
    assert first.status_code == 200, first.text
    new = first.json()
    assert new["refresh_token"] != token.refresh_token
    assert new["authorization_id"] == token.authorization_id
    clock.advance(5)
    again = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=token.refresh_token
    )
    assert again.status_code == 200, again.text
    assert again.json()["access_token"] == new["access_token"]
    assert again.json()["refresh_token"] == new["refresh_token"]
    # The previous access token keeps working until it expires; the new one works too.
    assert (
        await client.get("/v1/vehicleinfo", headers=bearer(new["access_token"]))
    ).status_code == 200


async def test_refresh_reuse_after_grace_revokes_the_family(
    client: httpx.AsyncClient, db: Database, creds: AppCredentials, clock: FrozenClock
) -> None:
    token = await vehicle_token(client, db, creds, vin=VIN)
    first = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=token.refresh_token
    )
    assert first.status_code == 200
    new = first.json()
    clock.advance(31)
    reuse = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=token.refresh_token
    )
    assert reuse.status_code == 400
    assert reuse.json()["error"] == "invalid_grant"
    assert "already used" in reuse.json()["error_description"]
    for access in (token.access_token, new["access_token"]):
        assert (await client.get("/v1/vehicleinfo", headers=bearer(access))).status_code == 401
    latest = await token_request(
        client, creds, grant_type="refresh_token", refresh_token=new["refresh_token"]
    )
    assert latest.status_code == 400
    assert latest.json()["error_description"] == "the refresh token was revoked"


async def test_public_client_exchanges_a_code_with_pkce(
    client: httpx.AsyncClient, db: Database, public_creds: AppCredentials
) -> None:
    authorization_id = await create_authorization(db, public_creds, vin=VIN)
    verifier, challenge = pkce_pair()
    code = await issue_code(db, public_creds, authorization_id, code_challenge=challenge)
    wrong = await token_request(
        client,
        public_creds,
        grant_type="authorization_code",
        code=code,
        redirect_uri=public_creds.redirect_uri,
        code_verifier=verifier + "x",
    )
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    assert "code_verifier" in wrong.json()["error_description"]
    good = await token_request(
        client,
        public_creds,
        grant_type="authorization_code",
        code=code,
        redirect_uri=public_creds.redirect_uri,
        code_verifier=verifier,
    )
    assert good.status_code == 200, good.text
    cc = await token_request(client, public_creds, grant_type="client_credentials")
    assert cc.status_code == 400
    assert cc.json()["error"] == "unauthorized_client"


async def test_client_credentials_token_authenticates_as_the_application(
    client: httpx.AsyncClient, app, creds: AppCredentials
) -> None:
    from autoport.kit.auth import CallerKind
    from autoport.kit.environments import Environment

    token = await client_credentials_token(client, creds)

    caller = await app.state.authenticator(bearer_request(token), Environment.production)
    assert caller.kind is CallerKind.application
    assert caller.application_id == creds.app_id
    assert caller.has_scope("fleet:clearance")
    assert caller.application_properties == frozenset(creds.properties)


async def test_concurrent_client_credentials_share_commits_and_all_work(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    import asyncio

    tokens = await asyncio.gather(*(client_credentials_token(client, creds) for _ in range(20)))
    assert len(set(tokens)) == 20
    for token in tokens:
        response = await client.get("/v1/vehicleinfo", headers=bearer(token))
        assert response.status_code == 403  # authenticated; a client token has no vehicle
