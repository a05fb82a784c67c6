"""The admin API of applications: guarded by the admin token, per environment,
validated with 422s that name the field, credentials shown once."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from joserfc import jwt
from joserfc.jwk import ECKey
from pydantic import SecretStr

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock

ADMIN = {"authorization": "Bearer test-admin-token"}


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    settings = settings.model_copy(update={"admin_token": SecretStr("test-admin-token")})
    application = create_app(settings, clock=clock, run_background=False)
    async with application.router.lifespan_context(application):
        yield application


async def create(client: httpx.AsyncClient, prefix: str = "", **body: object) -> httpx.Response:
    payload = {
        "name": "Fleet tool",
        "redirect_uris": ["https://fleet.example.com/cb"],
        "properties": ["charging.battery_level", "diagnostics.odometer"],
        "brands": ["mercedes-benz", "sandbox"],
        **body,
    }
    return await client.post(f"{prefix}/admin/v1/applications", json=payload, headers=ADMIN)


async def test_admin_api_needs_the_admin_token(client: httpx.AsyncClient) -> None:
    response = await client.get("/admin/v1/applications")
    assert response.status_code == 401
    wrong = await client.get("/admin/v1/applications", headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401


async def test_create_show_and_use_an_application(client: httpx.AsyncClient) -> None:
    response = await create(client)
    assert response.status_code == 201, response.text
    created = response.json()
    assert len(created["app_id"]) == 24 and created["app_id"] == created["app_id"].upper()
    int(created["app_id"], 16)
    assert created["brands"] == ["mercedes_benz", "sandbox"]
    assert created["client_secret"].startswith("ap_cs_")
    assert created["token_url"] == "http://127.0.0.1:8080/v1/access_tokens"
    shown = (await client.get(f"/admin/v1/applications/{created['app_id']}", headers=ADMIN)).json()
    assert "client_secret" not in shown
    assert len(shown["secrets"]) == 1
    listed = (await client.get("/admin/v1/applications", headers=ADMIN)).json()["applications"]
    assert [a["app_id"] for a in listed] == [created["app_id"]]
    token = await client.post(
        "/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": created["client_id"],
            "client_secret": created["client_secret"],
        },
    )
    assert token.status_code == 200


async def test_applications_are_per_environment(client: httpx.AsyncClient) -> None:
    created = (await create(client, "/sandbox")).json()
    assert created["environment"] == "sandbox"
    assert created["token_url"] == "http://127.0.0.1:8080/sandbox/v1/access_tokens"
    missing = await client.get(f"/admin/v1/applications/{created['app_id']}", headers=ADMIN)
    assert missing.status_code == 404
    assert missing.json()["errors"][0]["source"] == "app_id"


@pytest.mark.parametrize(
    ("body", "source"),
    [
        ({"properties": ["charging.nonsense"]}, "properties[0]"),
        ({"properties": ["charging"]}, "properties[0]"),
        ({"brands": ["trabant"]}, "brands[0]"),
        ({"redirect_uris": ["/relative"]}, "redirect_uris[0]"),
        ({"redirect_uris": ["http://example.com/cb"]}, "redirect_uris[0]"),
        ({"redirect_uris": ["https://ok.example/cb#frag"]}, "redirect_uris[0]"),
        ({"redirect_uris": ["https://ok.example/cb", "http://[::1/cb"]}, "redirect_uris[1]"),
        ({"redirect_uris": ["http://[zz]/cb"]}, "redirect_uris[0]"),
        ({"client_type": "secretive"}, "client_type"),
        ({"name": ""}, "name"),
        ({"account_id": "no-such-account"}, "account_id"),
        ({"unexpected": 1}, "unexpected"),
    ],
)
async def test_bad_applications_get_422_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, object], source: str
) -> None:
    response = await create(client, **body)
    assert response.status_code in (404, 422), response.text
    assert response.json()["errors"][0]["source"] == source
    listed = (await client.get("/admin/v1/applications", headers=ADMIN)).json()["applications"]
    assert listed == []


async def test_accounts_and_public_clients(client: httpx.AsyncClient) -> None:
    account = await client.post("/admin/v1/accounts", json={"name": "ACME"}, headers=ADMIN)
    assert account.status_code == 201
    account_id = account.json()["id"]
    created = await create(
        client, account_id=account_id, client_type="public", redirect_uris=["com.acme.app:/cb"]
    )
    assert created.status_code == 201, created.text
    assert created.json()["client_secret"] is None
    listed = await client.get(
        "/admin/v1/applications", params={"account_id": account_id}, headers=ADMIN
    )
    assert len(listed.json()["applications"]) == 1
    rotate = await client.post(
        f"/admin/v1/applications/{created.json()['app_id']}/rotate-secret", json={}, headers=ADMIN
    )
    assert rotate.status_code == 409


async def test_patch_rotate_and_generated_key(client: httpx.AsyncClient) -> None:
    created = (await create(client)).json()
    app_id = created["app_id"]
    patched = await client.patch(
        f"/admin/v1/applications/{app_id}",
        json={"properties": ["diagnostics.odometer"], "name": "Renamed"},
        headers=ADMIN,
    )
    assert patched.status_code == 200
    assert patched.json()["properties"] == ["diagnostics.odometer"]
    assert patched.json()["name"] == "Renamed"
    rotated = await client.post(
        f"/admin/v1/applications/{app_id}/rotate-secret", json={"overlap_seconds": 0}, headers=ADMIN
    )
    assert rotated.status_code == 200
    old = await client.post(
        "/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": created["client_id"],
            "client_secret": created["client_secret"],
        },
    )
    assert old.status_code == 401
    key = await client.post(f"/admin/v1/applications/{app_id}/keys", json={}, headers=ADMIN)
    assert key.status_code == 201, key.text
    credentials = key.json()["credentials"]
    assert credentials["private_jwk"]["d"]
    assert credentials["audience"] == "http://127.0.0.1:8080/v1"
    shown = (await client.get(f"/admin/v1/applications/{app_id}", headers=ADMIN)).json()
    assert "d" not in shown["keys"][0]["public_jwk"]
    # The credentials file is enough for a client assertion.
    private = ECKey.import_key(credentials["private_jwk"])
    assertion = jwt.encode(
        {"alg": "ES256"},
        {
            "iss": credentials["key_id"],
            "aud": credentials["audience"],
            "iat": int(time.time()),
            "jti": str(uuid.uuid4()),
        },
        private,
    )
    token = await client.post(
        "/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        },
    )
    assert token.status_code == 200, token.text
    removed = await client.delete(
        f"/admin/v1/applications/{app_id}/keys/{credentials['key_id']}", headers=ADMIN
    )
    assert removed.status_code == 204
    again = await client.delete(
        f"/admin/v1/applications/{app_id}/keys/{credentials['key_id']}", headers=ADMIN
    )
    assert again.status_code == 404


@pytest.mark.parametrize(
    ("jwk", "words"),
    [
        ({"kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"}, "not an EC P-256 public key"),
        ("not a key", "not an EC P-256 public key"),
    ],
)
async def test_bad_public_keys_are_refused(
    client: httpx.AsyncClient, jwk: object, words: str
) -> None:
    app_id = (await create(client)).json()["app_id"]
    response = await client.post(
        f"/admin/v1/applications/{app_id}/keys", json={"public_jwk": jwk}, headers=ADMIN
    )
    assert response.status_code == 422
    assert words in response.json()["errors"][0]["detail"]


async def test_private_key_registration_is_refused_and_public_one_accepted(
    client: httpx.AsyncClient,
) -> None:
    app_id = (await create(client)).json()["app_id"]
    pair = ECKey.generate_key("P-256")
    private = await client.post(
        f"/admin/v1/applications/{app_id}/keys",
        json={"public_jwk": dict(pair.as_dict(private=True))},
        headers=ADMIN,
    )
    assert private.status_code == 422
    assert "private key" in private.json()["errors"][0]["detail"]
    public = await client.post(
        f"/admin/v1/applications/{app_id}/keys",
        json={"public_jwk": dict(pair.as_dict(private=False))},
        headers=ADMIN,
    )
    assert public.status_code == 201
    assert "credentials" not in public.json()
