"""The admin API of applications: guarded by the admin token, per environment,
validated with 422s that name the field, credentials shown once."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

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
        "brands": ["mercedes-benz", "bmw"],
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
    assert created["brands"] == ["mercedes_benz", "bmw"]
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
        # The sandbox brand proves no ownership: never in production.
        ({"brands": ["bmw", "sandbox"]}, "brands[1]"),
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
    client: httpx.AsyncClient, body: dict[str, Any], source: str
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


# ----------------------------------------------- issued credentials: auth_uri, token_uri


@pytest.mark.parametrize(
    ("prefix", "base"),
    [("", "http://127.0.0.1:8080"), ("/sandbox", "http://127.0.0.1:8080/sandbox")],
)
async def test_credentials_name_the_environments_endpoints(
    client: httpx.AsyncClient, prefix: str, base: str
) -> None:
    created = (await create(client, prefix)).json()
    assert created["auth_uri"] == f"{base}/oauth/new"
    assert created["token_uri"] == f"{base}/v1/access_tokens"
    assert created["token_url"] == created["token_uri"]  # the older name, kept
    assert created["url_scheme"] is None
    # The same source as the RFC 8414 metadata: they cannot disagree.
    meta = (await client.get(f"{prefix}/.well-known/oauth-authorization-server")).json()
    assert created["auth_uri"] == meta["authorization_endpoint"]
    assert created["token_uri"] == meta["token_endpoint"]
    # Shown wherever the application is (never the secret).
    app_id = created["app_id"]
    shown = (await client.get(f"{prefix}/admin/v1/applications/{app_id}", headers=ADMIN)).json()
    listed = (await client.get(f"{prefix}/admin/v1/applications", headers=ADMIN)).json()
    patched = (
        await client.patch(
            f"{prefix}/admin/v1/applications/{app_id}", json={"name": "New"}, headers=ADMIN
        )
    ).json()
    for view in (shown, listed["applications"][0], patched):
        assert view["auth_uri"] == created["auth_uri"]
        assert view["token_uri"] == created["token_uri"]
        assert "client_secret" not in view
    # The auth_uri is the consent entry point: an unknown client gets its error page.
    entry = await client.get(f"{prefix}/oauth/new", params={"client_id": "nobody"})
    assert entry.status_code == 400 and "text/html" in entry.headers["content-type"]


async def test_an_absolute_auth_url_setting_is_the_auth_uri(
    settings: Settings, clock: FrozenClock
) -> None:
    custom = settings.model_copy(
        update={
            "admin_token": SecretStr("test-admin-token"),
            "auth_url": "https://consent.example.com/authorize",
        }
    )
    application = create_app(custom, clock=clock, run_background=False)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            created = (await create(c)).json()
            meta = (await c.get("/.well-known/oauth-authorization-server")).json()
    assert created["auth_uri"] == "https://consent.example.com/authorize"
    assert meta["authorization_endpoint"] == created["auth_uri"]


# ------------------------------------------------------------------------- url_scheme


async def nothing_stored(client: httpx.AsyncClient) -> None:
    applications = (await client.get("/admin/v1/applications", headers=ADMIN)).json()
    accounts = (await client.get("/admin/v1/accounts", headers=ADMIN)).json()
    assert applications["applications"] == [] and accounts["accounts"] == []


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("com.example.app", "com.example.app"),
        ("myapp", "myapp"),
        ("Com.Example.App-2+beta", "com.example.app-2+beta"),  # schemes are case-insensitive
    ],
)
async def test_url_scheme_is_stored_and_shown(
    client: httpx.AsyncClient, given: str, stored: str
) -> None:
    created = await create(client, client_type="public", url_scheme=given)
    assert created.status_code == 201, created.text
    assert created.json()["url_scheme"] == stored
    app_id = created.json()["app_id"]
    shown = (await client.get(f"/admin/v1/applications/{app_id}", headers=ADMIN)).json()
    assert shown["url_scheme"] == stored


@pytest.mark.parametrize(
    "url_scheme",
    [
        "",
        "1app",
        "-app",
        "com.example.app:",
        "com.example.app://",
        "com example",
        "com_example",
        "app/cb",
        "äpp",
        "a" * 101,
        "http",
        "HTTPS",
        "javascript",
        "data",
        "file",
        "vbscript",
        "about",
        "mailto",
    ],
)
async def test_bad_url_schemes_get_422_and_nothing_is_stored(
    client: httpx.AsyncClient, url_scheme: str
) -> None:
    response = await create(client, url_scheme=url_scheme)
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["source"] == "url_scheme"
    assert "url_scheme" in error["detail"]
    await nothing_stored(client)


async def test_a_registered_url_scheme_binds_private_scheme_redirect_uris(
    client: httpx.AsyncClient,
) -> None:
    uris = ["com.example.app:/callback", "https://fleet.example.com/cb", "http://127.0.0.1:7/cb"]
    created = await create(
        client, client_type="public", url_scheme="com.example.app", redirect_uris=uris
    )
    assert created.status_code == 201, created.text
    assert created.json()["redirect_uris"] == uris
    other = await create(
        client,
        client_type="public",
        url_scheme="com.example.app",
        redirect_uris=["com.example.app:/callback", "com.other.app:/callback"],
    )
    assert other.status_code == 422
    assert other.json()["errors"][0]["source"] == "redirect_uris[1]"
    assert "com.example.app" in other.json()["errors"][0]["detail"]
    listed = (await client.get("/admin/v1/applications", headers=ADMIN)).json()["applications"]
    assert [a["app_id"] for a in listed] == [created.json()["app_id"]]


@pytest.mark.parametrize(
    "uri", ["javascript:alert(1)", "data:text/html,hi", "file:///etc/passwd", "JavaScript:x"]
)
async def test_unsafe_redirect_schemes_are_refused_with_or_without_url_scheme(
    client: httpx.AsyncClient, uri: str
) -> None:
    for extra in ({}, {"url_scheme": "com.example.app"}):
        response = await create(client, redirect_uris=[uri], **extra)
        assert response.status_code == 422, response.text
        assert response.json()["errors"][0]["source"] == "redirect_uris[0]"
    await nothing_stored(client)


async def test_without_url_scheme_private_schemes_are_accepted_as_before(
    client: httpx.AsyncClient,
) -> None:
    # Applications registered before url_scheme existed keep working unchanged.
    created = await create(client, client_type="public", redirect_uris=["com.acme.app:/cb"])
    assert created.status_code == 201, created.text
    assert created.json()["url_scheme"] is None


async def test_url_scheme_is_changed_by_patch_and_must_fit_the_redirect_uris(
    client: httpx.AsyncClient,
) -> None:
    created = (await create(client, client_type="public")).json()
    path = f"/admin/v1/applications/{created['app_id']}"

    async def patch(**body: object) -> httpx.Response:
        return await client.patch(path, json=body, headers=ADMIN)

    async def shown() -> dict[str, object]:
        data: dict[str, object] = (await client.get(path, headers=ADMIN)).json()
        return data

    added = await patch(url_scheme="com.example.app")
    assert added.status_code == 200, added.text
    assert added.json()["url_scheme"] == "com.example.app"
    both = await patch(redirect_uris=["com.example.app:/cb"])
    assert both.status_code == 200, both.text
    # A PATCH without url_scheme leaves it.
    assert (await patch(name="Renamed")).json()["url_scheme"] == "com.example.app"
    # A bad scheme, or one the registered redirect URIs do not use: 422, nothing changes.
    for bad, source in (("https", "url_scheme"), ("com.other.app", "url_scheme")):
        refused = await patch(url_scheme=bad)
        assert refused.status_code == 422, refused.text
        assert refused.json()["errors"][0]["source"] == source
    wrong_uri = await patch(redirect_uris=["com.other.app:/cb"])
    assert wrong_uri.status_code == 422
    assert wrong_uri.json()["errors"][0]["source"] == "redirect_uris[0]"
    now = await shown()
    assert now["url_scheme"] == "com.example.app"
    assert now["redirect_uris"] == ["com.example.app:/cb"]
    # Changing both at once is how an app moves to another scheme.
    moved = await patch(url_scheme="com.other.app", redirect_uris=["com.other.app:/cb"])
    assert moved.status_code == 200, moved.text
    assert moved.json()["url_scheme"] == "com.other.app"
    # null removes it.
    cleared = await patch(url_scheme=None)
    assert cleared.status_code == 200
    assert cleared.json()["url_scheme"] is None
    assert (await shown())["redirect_uris"] == ["com.other.app:/cb"]


async def test_a_public_client_registers_its_bare_url_scheme_as_redirect_uri(
    client: httpx.AsyncClient,
) -> None:
    created = await create(
        client,
        client_type="public",
        url_scheme="com.example.app123",
        redirect_uris=["com.example.app123", "com.example.app123:/callback"],
    )
    assert created.status_code == 201, created.text
    assert created.json()["redirect_uris"] == ["com.example.app123", "com.example.app123:/callback"]
    # Dropping the url_scheme would orphan the bare one: refused, naming url_scheme.
    path = f"/admin/v1/applications/{created.json()['app_id']}"
    dropped = await client.patch(path, json={"url_scheme": None}, headers=ADMIN)
    assert dropped.status_code == 422
    assert dropped.json()["errors"][0]["source"] == "url_scheme"


async def test_applications_register_vehicle_commands(client: httpx.AsyncClient) -> None:
    created = await create(
        client, commands=["doors.lock_unlock_doors", "charging.start_stop_charging"]
    )
    assert created.status_code == 201, created.text
    # In catalog order, without duplicates.
    assert created.json()["commands"] == [
        "charging.start_stop_charging",
        "doors.lock_unlock_doors",
    ]
    app_id = created.json()["app_id"]
    bad = await client.patch(
        f"/admin/v1/applications/{app_id}",
        json={"commands": ["doors.lock_unlock_doors", "doors.fly"]},
        headers=ADMIN,
    )
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["source"] == "commands[1]"
    changed = await client.patch(
        f"/admin/v1/applications/{app_id}", json={"commands": []}, headers=ADMIN
    )
    assert changed.status_code == 200 and changed.json()["commands"] == []


# ------------------------------------------------- company and privacy policy (#38.10)


async def test_company_and_privacy_policy_are_stored_changed_and_removed(
    client: httpx.AsyncClient,
) -> None:
    created = await create(
        client, company="Fleet Tracker GmbH", privacy_url="https://fleet.example.com/privacy"
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["company"] == "Fleet Tracker GmbH"
    assert body["privacy_url"] == "https://fleet.example.com/privacy"
    path = f"/admin/v1/applications/{body['app_id']}"
    changed = await client.patch(path, json={"company": "Fleet Tracker AG"}, headers=ADMIN)
    assert changed.status_code == 200, changed.text
    assert changed.json()["company"] == "Fleet Tracker AG"
    assert changed.json()["privacy_url"] == "https://fleet.example.com/privacy"  # kept
    removed = await client.patch(path, json={"privacy_url": None}, headers=ADMIN)
    assert removed.json()["privacy_url"] is None and removed.json()["company"] == "Fleet Tracker AG"


@pytest.mark.parametrize(
    "privacy_url", ["http://fleet.example.com/privacy", "javascript:alert(1)", "fleet.example.com"]
)
async def test_a_privacy_policy_must_be_an_https_address(
    client: httpx.AsyncClient, privacy_url: str
) -> None:
    refused = await create(client, privacy_url=privacy_url)
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["detail"].startswith("privacy_url: ")
