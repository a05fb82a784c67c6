"""Test helpers every feature uses to get real credentials and tokens (docs/development.md, Tests).

    creds = await create_app_credentials(db, properties=["charging.battery_level"])
    token = await client_credentials_token(client, creds)
    vehicle = await vehicle_token(client, db, creds, vin="1HGCM82633A004352")

`db` is the app's database (`app.state.autoport.database`) or the `database` fixture
(the same tables); `client` an httpx client of the app. Sandbox credentials use the
`/sandbox` prefix automatically.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from starlette.requests import Request

from autoport.apps import service as apps_service
from autoport.kit.clock import now_us as real_now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.oauth import service as oauth_service

DEFAULT_PROPERTIES = (
    "charging.battery_level",
    "charging.status",
    "diagnostics.odometer",
    "vehicle_location.coordinates",
)
DEFAULT_REDIRECT = "https://app.example.com/callback"
SANDBOX_BRAND = "sandbox"
# The default brand of production applications (the sandbox brand is refused there).
PRODUCTION_BRAND = "bmw"


@dataclass(frozen=True)
class AppCredentials:
    environment: Environment
    account_id: str
    app_id: str  # = applications.id = Caller.application_id
    client_id: str
    client_secret: str | None
    redirect_uri: str
    properties: tuple[str, ...]
    brands: tuple[str, ...]

    @property
    def application_id(self) -> str:
        return self.app_id

    @property
    def prefix(self) -> str:
        return "/sandbox" if self.environment is Environment.sandbox else ""

    @property
    def token_path(self) -> str:
        return f"{self.prefix}/v1/access_tokens"

    def auth(self) -> dict[str, str]:
        """Client authentication parameters for a token request body."""
        params = {"client_id": self.client_id}
        if self.client_secret is not None:
            params["client_secret"] = self.client_secret
        return params


@dataclass(frozen=True)
class VehicleToken:
    access_token: str
    refresh_token: str
    authorization_id: str
    vin: str
    response: dict[str, Any]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def bearer_request(token: str) -> Request:
    """A request carrying `token`, for calling the authenticator directly."""
    return Request({"type": "http", "headers": [(b"authorization", f"Bearer {token}".encode())]})


async def create_app_credentials(
    db: Database,
    *,
    environment: Environment = Environment.production,
    name: str = "Test application",
    properties: Sequence[str] = DEFAULT_PROPERTIES,
    brands: Sequence[str] | None = None,
    redirect_uris: Sequence[str] = (DEFAULT_REDIRECT,),
    client_type: str = "confidential",
    account_id: str | None = None,
    now_us: int | None = None,
    url_scheme: str | None = None,
) -> AppCredentials:
    now = real_now_us() if now_us is None else now_us
    if brands is None:
        # The sandbox brand exists only in the sandbox environment.
        brands = (SANDBOX_BRAND,) if environment is Environment.sandbox else (PRODUCTION_BRAND,)
    async with db.transaction() as conn:
        if account_id is None:
            account = await apps_service.create_account(
                conn, environment=environment, name=f"{name} account", now_us=now
            )
            account_id = account.id
        application, secret = await apps_service.create_application(
            conn,
            environment=environment,
            account_id=account_id,
            name=name,
            redirect_uris=list(redirect_uris),
            properties=list(properties),
            brands=list(brands),
            client_type=client_type,
            now_us=now,
            url_scheme=url_scheme,
        )
    return AppCredentials(
        environment=environment,
        account_id=account_id,
        app_id=application.id,
        client_id=application.client_id,
        client_secret=secret,
        redirect_uri=application.redirect_uris[0] if application.redirect_uris else "",
        properties=application.properties,
        brands=application.brands,
    )


async def client_credentials_token(client: httpx.AsyncClient, creds: AppCredentials) -> str:
    """A real client_credentials access token from the token endpoint."""
    response = await client.post(
        creds.token_path, data={"grant_type": "client_credentials", **creds.auth()}
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


async def create_authorization(
    db: Database,
    creds: AppCredentials,
    *,
    vin: str,
    properties: Sequence[str] | None = None,
    brand: str | None = None,
    status: str = "approved",
    valid_from_us: int | None = None,
    valid_until_us: int | None = None,
    subject: str | None = None,
    now_us: int | None = None,
) -> str:
    """An `authorizations` row as the consent flow would create it (for the
    application's first brand unless `brand` is given); returns its id."""
    now = real_now_us() if now_us is None else now_us
    brand = brand or creds.brands[0]
    authorization_id = str(uuid.uuid4())
    granted = list(creds.properties if properties is None else properties)
    await db.execute(
        "INSERT INTO authorizations (id, environment, application_id, vin, brand, properties, "
        "status, subject, valid_from, valid_until, created_at, updated_at) VALUES (:id, :env, "
        ":app, :vin, :brand, :props, :status, :subject, :from_, :until, :now, :now)",
        {
            "id": authorization_id,
            "env": str(creds.environment),
            "app": creds.app_id,
            "vin": vin,
            "brand": brand,
            "props": orjson.dumps(granted).decode(),
            "status": status,
            "subject": subject or f"owner-{uuid.uuid4().hex[:12]}",
            "from_": now if valid_from_us is None else valid_from_us,
            "until": valid_until_us,
            "now": now,
        },
    )
    return authorization_id


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def issue_code(
    db: Database,
    creds: AppCredentials,
    authorization_id: str,
    *,
    code_challenge: str | None = None,
    code_challenge_method: str | None = None,
    redirect_uri: str | None = None,
    now_us: int | None = None,
) -> str:
    async with db.transaction() as conn:
        return await oauth_service.issue_authorization_code(
            conn,
            environment=creds.environment,
            application_id=creds.app_id,
            authorization_id=authorization_id,
            redirect_uri=redirect_uri or creds.redirect_uri,
            code_challenge=code_challenge,
            code_challenge_method=code_challenge_method,
            now_us=real_now_us() if now_us is None else now_us,
        )


async def vehicle_token(
    client: httpx.AsyncClient,
    db: Database,
    creds: AppCredentials,
    *,
    vin: str,
    properties: Sequence[str] | None = None,
    brand: str | None = None,
    status: str = "approved",
    valid_from_us: int | None = None,
    valid_until_us: int | None = None,
    now_us: int | None = None,
) -> VehicleToken:
    """A consent token for `vin`: authorization row + code (PKCE) + a real exchange at
    the token endpoint."""
    authorization_id = await create_authorization(
        db,
        creds,
        vin=vin,
        properties=properties,
        brand=brand,
        status=status,
        valid_from_us=valid_from_us,
        valid_until_us=valid_until_us,
        now_us=now_us,
    )
    verifier, challenge = pkce_pair()
    code = await issue_code(db, creds, authorization_id, code_challenge=challenge, now_us=now_us)
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
    body = response.json()
    return VehicleToken(
        access_token=body["access_token"],
        refresh_token=body["refresh_token"],
        authorization_id=authorization_id,
        vin=vin,
        response=body,
    )
