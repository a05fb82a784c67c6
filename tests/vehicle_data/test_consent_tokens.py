"""End to end with the real authorization server: a consent-style authorization (row +
code + PKCE exchange at the token endpoint) and the vehicle-data pull, through the real
bearer authenticator (grant status, expiry, refresh, revocation, environment)."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
from fastapi import FastAPI

from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.auth import GrantStatus
from autoport.kit.environments import Environment
from autoport.oauth import service as oauth_service
from tests.factories import (
    AppCredentials,
    bearer,
    create_app_credentials,
    create_authorization,
    issue_code,
    pkce_pair,
)

VIN = "WBA00000000000011"
URL = f"/v1/vehicle-data/autoapi-13/{VIN}"
TS = "2026-11-23T09:00:00.000000Z"
DATA: dict[str, Any] = {
    "charging": {
        "battery_level": {"data": 0.42, "timestamp": TS},
        "status": {"data": "charging", "timestamp": TS},
    },
    "diagnostics": {"odometer": {"data": {"unit": "kilometers", "value": 900.0}, "timestamp": TS}},
}
REGISTERED = ["charging.battery_level", "charging.status", "diagnostics.odometer"]
GRANTED = ["charging.battery_level", "diagnostics.odometer"]


async def _store(app: FastAPI, environment: Environment = Environment.production) -> None:
    state = app.state.autoport
    report = await ingest_vehicle_data(
        state.database,
        environment=environment,
        vin=VIN,
        brand="bmw",
        data=DATA,
        now_us=state.clock.now_us(),
    )
    assert not report.rejected, report.rejected


async def _application(app: FastAPI, environment: Environment) -> AppCredentials:
    state = app.state.autoport
    return await create_app_credentials(
        state.database,
        environment=environment,
        properties=REGISTERED,
        brands=["bmw"],
        now_us=state.clock.now_us(),
    )


async def _consent(
    client: httpx.AsyncClient, app: FastAPI, creds: AppCredentials, *, status: str
) -> tuple[str, dict[str, Any]]:
    """What the consent pages do (authorization row, then a code), then what the
    application does (the code exchange with its PKCE verifier)."""
    state = app.state.autoport
    now = state.clock.now_us()
    authorization_id = await create_authorization(
        state.database, creds, vin=VIN, properties=GRANTED, brand="bmw", status=status, now_us=now
    )
    verifier, challenge = pkce_pair()
    code = await issue_code(
        state.database, creds, authorization_id, code_challenge=challenge, now_us=now
    )
    response = await client.post(
        creds.token_path,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": creds.redirect_uri,
            "code_verifier": verifier,
            **creds.auth(),
        },
    )
    assert response.status_code == 200, response.text
    return authorization_id, response.json()


async def test_a_consent_token_reads_exactly_its_granted_properties(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    await _store(app)
    creds = await _application(app, Environment.production)
    authorization_id, body = await _consent(client, app, creds, status="approved")
    assert body["status"] == "approved"
    assert body["authorization_id"] == authorization_id
    assert "vehicle:data" in body["scope"].split()
    response = await client.get(URL, headers=bearer(body["access_token"]))
    assert response.status_code == 200, response.text
    assert response.json() == {
        "request_id": response.headers["x-request-id"],
        "vin": VIN,
        "brand": "bmw",
        "charging": {"battery_level": DATA["charging"]["battery_level"]},
        "diagnostics": DATA["diagnostics"],
    }


async def test_a_pending_consent_reads_once_the_owner_approves(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    state = app.state.autoport
    await _store(app)
    creds = await _application(app, Environment.production)
    authorization_id, body = await _consent(client, app, creds, status="pending")
    assert body["status"] == "pending"
    headers = bearer(body["access_token"])
    waiting = await client.get(URL, headers=headers)
    assert waiting.status_code == 403
    assert "approval of this authorization is pending" in waiting.json()["errors"][0]["detail"]

    async with state.database.transaction() as conn:
        changed = await oauth_service.set_authorization_status(
            conn,
            environment=Environment.production,
            authorization_id=authorization_id,
            status=GrantStatus.approved,
            now_us=state.clock.now_us(),
        )
    assert changed
    approved = await client.get(URL, headers=headers)
    assert approved.status_code == 200, approved.text
    assert set(approved.json()) == {"request_id", "vin", "brand", "charging", "diagnostics"}
    event = await state.database.fetch_one(
        "SELECT payload, application_id, vin FROM outbox "
        "WHERE event_type = 'authorization_changed' ORDER BY id DESC LIMIT 1"
    )
    assert event is not None
    assert (event["application_id"], event["vin"]) == (creds.app_id, VIN)
    assert orjson.loads(event["payload"])["action"] == "approved"


async def test_an_expired_access_token_is_401_and_its_refresh_reads_again(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    state = app.state.autoport
    await _store(app)
    creds = await _application(app, Environment.production)
    _, body = await _consent(client, app, creds, status="approved")
    assert (await client.get(URL, headers=bearer(body["access_token"]))).status_code == 200
    state.clock.advance(body["expires_in"])
    expired = await client.get(URL, headers=bearer(body["access_token"]))
    assert expired.status_code == 401
    assert "expired" in expired.json()["errors"][0]["detail"]
    refreshed = await client.post(
        creds.token_path,
        data={
            "grant_type": "refresh_token",
            "refresh_token": body["refresh_token"],
            **creds.auth(),
        },
    )
    assert refreshed.status_code == 200, refreshed.text
    again = await client.get(URL, headers=bearer(refreshed.json()["access_token"]))
    assert again.status_code == 200


async def test_revoked_tokens_are_401_through_the_revocation_endpoint(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    state = app.state.autoport
    await _store(app)
    creds = await _application(app, Environment.production)
    _, first = await _consent(client, app, creds, status="approved")
    authorization_id, second = await _consent(client, app, creds, status="approved")

    # Revoking an access token ends that token only.
    revoked = await client.request(
        "DELETE", creds.token_path, json={"token": first["access_token"], **creds.auth()}
    )
    assert revoked.status_code == 200
    response = await client.get(URL, headers=bearer(first["access_token"]))
    assert response.status_code == 401
    assert "revoked" in response.json()["errors"][0]["detail"]
    assert (await client.get(URL, headers=bearer(second["access_token"]))).status_code == 200

    # Revoking a refresh token ends the grant and every token of it.
    ended = await client.request(
        "DELETE", creds.token_path, json={"token": second["refresh_token"], **creds.auth()}
    )
    assert ended.status_code == 200
    response = await client.get(URL, headers=bearer(second["access_token"]))
    assert response.status_code == 401
    assert "revoked" in response.json()["errors"][0]["detail"]
    status = await state.database.fetch_value(
        "SELECT status FROM authorizations WHERE id = :id", {"id": authorization_id}
    )
    assert status == "revoked"


async def test_a_sandbox_token_is_401_in_production_and_reads_the_sandbox(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    await _store(app, Environment.sandbox)
    creds = await _application(app, Environment.sandbox)
    _, body = await _consent(client, app, creds, status="approved")
    wrong = await client.get(URL, headers=bearer(body["access_token"]))
    assert wrong.status_code == 401
    assert "sandbox" in wrong.json()["errors"][0]["detail"]
    right = await client.get(f"/sandbox{URL}", headers=bearer(body["access_token"]))
    assert right.status_code == 200, right.text
    assert right.json()["charging"] == {"battery_level": DATA["charging"]["battery_level"]}
