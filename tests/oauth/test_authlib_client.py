"""A standard OAuth client works unchanged: Authlib's httpx client against a real
uvicorn server (a separate process) on a free loopback port, both backends."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from authlib.common.security import generate_token
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc.jwk import ECKey

from autoport.apps import service as apps_service

# Authlib's client warns on import that it wants the httpx2 package and falls back to httpx,
# the HTTP client the project and its users have: the fallback is the case under test.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "The httpx module is deprecated")
    from authlib.integrations.httpx_client import AsyncOAuth2Client
from autoport.config import Settings
from autoport.kit.clock import now_us
from autoport.kit.db import Database
from tests.factories import create_app_credentials, create_authorization, issue_code
from tests.helpers.ports import free_port

VIN = "WVWZZZ1JZXW000001"


@pytest.fixture
def server(settings: Settings, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(settings.data_dir),
        "AUTOPORT_DATABASE_URL": settings.resolved_database_url,
        "AUTOPORT_PORT": str(port),
        "AUTOPORT_ACCESS_LOG": "false",
    }
    if settings.database_schema:
        env["AUTOPORT_DATABASE_SCHEMA"] = settings.database_schema
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "autoport.app:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp_path / "server.log").read_text())
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


async def code_with_pkce_then_refresh(server: str, database: Database) -> None:
    creds = await create_app_credentials(database)
    token_url = f"{server}/v1/access_tokens"
    verifier = generate_token(48)
    authorization_id = await create_authorization(database, creds, vin=VIN)
    code = await issue_code(
        database, creds, authorization_id, code_challenge=create_s256_code_challenge(verifier)
    )
    async with AsyncOAuth2Client(
        creds.client_id,
        creds.client_secret,
        redirect_uri=creds.redirect_uri,
        code_challenge_method="S256",
    ) as client:
        token = await client.fetch_token(
            token_url, grant_type="authorization_code", code=code, code_verifier=verifier
        )
        assert token["authorization_id"] == authorization_id
        assert token["status"] == "approved"
        info = await client.get(f"{server}/v1/vehicleinfo")
        assert info.status_code == 200
        assert info.json()["vin"] == VIN
        refreshed = await client.refresh_token(token_url, refresh_token=token["refresh_token"])
        assert refreshed["refresh_token"] != token["refresh_token"]
        assert (await client.get(f"{server}/v1/vehicleinfo")).status_code == 200


async def public_client_uses_pkce_without_secret(server: str, database: Database) -> None:
    creds = await create_app_credentials(
        database, client_type="public", redirect_uris=["com.example.app:/oauth"]
    )
    verifier = generate_token(48)
    authorization_id = await create_authorization(database, creds, vin=VIN)
    code = await issue_code(
        database, creds, authorization_id, code_challenge=create_s256_code_challenge(verifier)
    )
    async with AsyncOAuth2Client(
        creds.client_id,
        redirect_uri=creds.redirect_uri,
        token_endpoint_auth_method="none",
        code_challenge_method="S256",
    ) as client:
        token = await client.fetch_token(
            f"{server}/v1/access_tokens",
            grant_type="authorization_code",
            code=code,
            code_verifier=verifier,
        )
        assert token["scope"].startswith("vehicle:data ")


async def client_credentials_with_private_key_jwt(server: str, database: Database) -> None:
    creds = await create_app_credentials(database)
    async with database.transaction() as conn:
        new = await apps_service.add_key(
            conn, environment=creds.environment, app_id=creds.app_id, now_us=now_us()
        )
    assert new.private_jwk is not None
    token_url = f"{server}/v1/access_tokens"
    async with AsyncOAuth2Client(
        creds.client_id,
        # Authlib takes an EC private key as a key object (it assumes RSA for dicts).
        ECKey.import_key(new.private_jwk),
        token_endpoint_auth_method=PrivateKeyJWT(token_url, alg="ES256"),
    ) as client:
        token = await client.fetch_token(token_url, grant_type="client_credentials")
        assert token["scope"] == "vehicle:data vehicle:eligibility-check fleet:clearance"
        assert token["expires_in"] == 300
        # Each call signs a fresh assertion (new jti): a second token is fine too.
        again = await client.fetch_token(token_url, grant_type="client_credentials")
        assert again["access_token"] != token["access_token"]


async def metadata_is_discoverable(server: str) -> None:
    async with httpx.AsyncClient() as client:
        metadata = (await client.get(f"{server}/.well-known/oauth-authorization-server")).json()
    assert metadata["issuer"] == server
    assert metadata["token_endpoint"] == f"{server}/v1/access_tokens"


async def test_authlib_client_works_unchanged(server: str, database: Database) -> None:
    """One server per backend (starting one is the slow part): code + PKCE exchange and
    refresh, a public client without secret, client_credentials with private_key_jwt,
    and discovery."""
    await code_with_pkce_then_refresh(server, database)
    await public_client_uses_pkce_without_secret(server, database)
    await client_credentials_with_private_key_jwt(server, database)
    await metadata_is_discoverable(server)
