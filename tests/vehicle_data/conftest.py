"""The ONE place where vehicle-data tests get callers: real applications
(`autoport.apps.service`), real tokens from the token endpoint (consent tokens through
authorization row + code + exchange, client_credentials tokens), checked by the real
bearer authenticator. Grant states change through `set_authorization_status`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit.crypto import new_token, token_hash
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.oauth import repository as oauth_repository
from autoport.oauth import service as oauth_service
from autoport.oauth.tokens import ACCESS_PREFIX
from tests.factories import (
    AppCredentials,
    client_credentials_token,
    create_app_credentials,
    vehicle_token,
)

PROD = Environment.production


class TestCallers:
    __test__ = False  # not a test class

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.db: Database = app.state.autoport.database
        self.clock = app.state.autoport.clock
        # The token endpoint of this app instance, over ASGI.
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8080"
        )
        self.credentials: dict[str, AppCredentials] = {}
        self.authorization_of: dict[str, str] = {}  # access token -> authorization id
        self.refresh_of: dict[str, str] = {}  # access token -> its refresh token

    async def aclose(self) -> None:
        await self.client.aclose()

    async def application(
        self,
        *,
        properties: Iterable[str],
        environment: Environment = PROD,
        brands: Iterable[str] | None = None,
    ) -> str:
        if brands is None:
            # The sandbox brand exists only in the sandbox environment.
            brands = ("bmw", "sandbox") if environment is Environment.sandbox else ("bmw",)
        creds = await create_app_credentials(
            self.db,
            environment=environment,
            properties=sorted(properties),
            brands=sorted(brands),
            now_us=self.clock.now_us(),
        )
        self.credentials[creds.app_id] = creds
        return creds.app_id

    async def application_token(self, application_id: str) -> str:
        """A client_credentials token from the token endpoint (every application scope)."""
        return await client_credentials_token(self.client, self.credentials[application_id])

    async def stored_token(self, application_id: str, *, scopes: Iterable[str]) -> str:
        """An access-token row as the authorization server stores it, with scopes no grant
        hands out today (to prove the routes check scopes themselves)."""
        creds = self.credentials[application_id]
        token = new_token(ACCESS_PREFIX)
        now = self.clock.now_us()
        async with self.db.transaction() as conn:
            await oauth_repository.create_token(
                conn,
                {
                    "token_hash": token_hash(self.app.state.autoport.token_key, token),
                    "environment": str(creds.environment),
                    "kind": oauth_repository.ACCESS,
                    "application_id": application_id,
                    "authorization_id": None,
                    "family_id": None,
                    "scopes": " ".join(scopes),
                    "created_at": now,
                    "expires_at": now + 300_000_000,
                },
            )
        return token

    async def vehicle_token(
        self,
        application_id: str,
        *,
        vin: str,
        properties: Iterable[str],
        brand: str = "bmw",
        status: str = "approved",
        valid_from_us: int | None = None,
        valid_until_us: int | None = None,
    ) -> str:
        issued = await vehicle_token(
            self.client,
            self.db,
            self.credentials[application_id],
            vin=vin,
            properties=sorted(properties),
            brand=brand,
            status=status,
            valid_from_us=valid_from_us,
            valid_until_us=valid_until_us,
            now_us=self.clock.now_us(),
        )
        self.authorization_of[issued.access_token] = issued.authorization_id
        self.refresh_of[issued.access_token] = issued.refresh_token
        return issued.access_token

    async def set_grant_status(self, token: str, status: str) -> None:
        """The owner's decision (or revocation) through the authorization server."""
        authorization_id = self.authorization_of[token]
        environment = await self.db.fetch_value(
            "SELECT environment FROM authorizations WHERE id = :id", {"id": authorization_id}
        )
        async with self.db.transaction() as conn:
            await oauth_service.set_authorization_status(
                conn,
                environment=Environment(environment),
                authorization_id=authorization_id,
                status=status,
                now_us=self.clock.now_us(),
            )

    async def clear_fleet_vehicle(
        self, application_id: str, vin: str, *, brand: str = "bmw", status: str = "approved"
    ) -> None:
        """A fleet clearance in the given state (the fleet worker's end result; the real
        worker is exercised in tests/fleet/test_fleet_reads_vehicle.py)."""
        env = str(self.credentials[application_id].environment)
        now = self.clock.now_us()
        await self.db.execute(
            "INSERT INTO fleet_vehicles (environment, application_id, vin, brand, status, tags, "
            "changelog, inserted_at, updated_at) VALUES "
            "(:env, :app, :vin, :brand, :status, '{}', '[]', :now, :now)",
            {
                "env": env,
                "app": application_id,
                "vin": vin,
                "brand": brand,
                "status": status,
                "now": now,
            },
        )


@pytest.fixture
async def callers(app: FastAPI) -> AsyncIterator[TestCallers]:
    found = TestCallers(app)
    try:
        yield found
    finally:
        await found.aclose()
