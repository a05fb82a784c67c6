"""The ONE place where vehicle-data tests get callers.

Until the oauth branch is merged, a test authenticator maps test token strings to
`Caller`s built from rows these helpers insert into `accounts`, `applications`,
`authorizations` (and `fleet_vehicles`). The grant is read from its row at every request,
so a test can change its status or window between calls. Swapping this for real tokens
(tests/factories.py) happens here only.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

import orjson
import pytest
from fastapi import FastAPI, Request

from autoport.kit.auth import Caller, CallerKind, Grant, GrantStatus
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError

PROD = Environment.production


class TestCallers:
    __test__ = False  # not a test class

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.db: Database = app.state.autoport.database
        self.clock = app.state.autoport.clock
        # token -> (kind, id of the application or authorization)
        self.tokens: dict[str, tuple[CallerKind, str]] = {}
        self.scopes: dict[str, frozenset[str]] = {}
        app.state.authenticator = self.authenticate

    async def application(
        self,
        *,
        properties: Iterable[str],
        environment: Environment = PROD,
        brands: Iterable[str] = ("bmw", "sandbox"),
    ) -> str:
        app_id = secrets.token_hex(12).upper()
        now = self.clock.now_us()
        async with self.db.transaction() as conn:
            await conn.execute(
                "INSERT INTO accounts (id, environment, name, created_at) "
                "VALUES (:id, :env, 'test', :now)",
                {"id": "acc_" + app_id, "env": str(environment), "now": now},
            )
            await conn.execute(
                "INSERT INTO applications (id, environment, account_id, client_id, name, "
                "client_type, redirect_uris, properties, brands, created_at) VALUES "
                "(:id, :env, :account, :client, 'test app', 'confidential', '[]', :props, "
                ":brands, :now)",
                {
                    "id": app_id,
                    "env": str(environment),
                    "account": "acc_" + app_id,
                    "client": "client_" + app_id,
                    "props": orjson.dumps(sorted(properties)).decode(),
                    "brands": orjson.dumps(sorted(brands)).decode(),
                    "now": now,
                },
            )
        return app_id

    def application_token(
        self,
        application_id: str,
        scopes: Iterable[str] = ("vehicle:data", "vehicle:eligibility-check", "fleet:clearance"),
    ) -> str:
        token = "test_app_" + secrets.token_hex(8)
        self.tokens[token] = (CallerKind.application, application_id)
        self.scopes[token] = frozenset(scopes)
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
        authorization_id = "auth_" + secrets.token_hex(8)
        now = self.clock.now_us()
        env = await self.db.fetch_value(
            "SELECT environment FROM applications WHERE id = :id", {"id": application_id}
        )
        await self.db.execute(
            "INSERT INTO authorizations (id, environment, application_id, vin, brand, properties,"
            " status, subject, valid_from, valid_until, created_at, updated_at) VALUES "
            "(:id, :env, :app, :vin, :brand, :props, :status, 'owner', :from_, :until, :now, :now)",
            {
                "id": authorization_id,
                "env": env,
                "app": application_id,
                "vin": vin,
                "brand": brand,
                "props": orjson.dumps(sorted(properties)).decode(),
                "status": status,
                "from_": now - 1 if valid_from_us is None else valid_from_us,
                "until": valid_until_us,
                "now": now,
            },
        )
        token = "test_vehicle_" + secrets.token_hex(8)
        self.tokens[token] = (CallerKind.vehicle, authorization_id)
        return token

    async def set_grant_status(self, token: str, status: str) -> None:
        await self.db.execute(
            "UPDATE authorizations SET status = :status WHERE id = :id",
            {"status": status, "id": self.tokens[token][1]},
        )

    async def clear_fleet_vehicle(
        self, application_id: str, vin: str, *, brand: str = "bmw", status: str = "approved"
    ) -> None:
        env = await self.db.fetch_value(
            "SELECT environment FROM applications WHERE id = :id", {"id": application_id}
        )
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

    async def authenticate(self, request: Request, environment: Environment) -> Caller:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        entry = self.tokens.get(token) if scheme.lower() == "bearer" else None
        if entry is None:
            raise ApiError(401, "the access token is missing or unknown", source="Authorization")
        kind, ident = entry
        if kind is CallerKind.vehicle:
            grant_row = await self.db.fetch_one(
                "SELECT * FROM authorizations WHERE id = :id", {"id": ident}
            )
            assert grant_row is not None
            app_id = grant_row["application_id"]
        else:
            grant_row, app_id = None, ident
        app_row = await self.db.fetch_one(
            "SELECT * FROM applications WHERE id = :id", {"id": app_id}
        )
        assert app_row is not None
        if app_row["environment"] != str(environment):
            raise ApiError(
                401, "the access token belongs to another environment", source="Authorization"
            )
        grant = None
        scopes = {"vehicle:data"}
        if grant_row is not None:
            grant = Grant(
                authorization_id=grant_row["id"],
                vin=grant_row["vin"],
                properties=frozenset(orjson.loads(grant_row["properties"])),
                status=GrantStatus(grant_row["status"]),
                valid_from_us=grant_row["valid_from"],
                valid_until_us=grant_row["valid_until"],
            )
        else:
            scopes = set(self.scopes[token])
        return Caller(
            environment=environment,
            kind=kind,
            application_id=app_id,
            client_id=app_row["client_id"],
            scopes=frozenset(scopes),
            application_properties=frozenset(orjson.loads(app_row["properties"])),
            grant=grant,
            application_brands=frozenset(orjson.loads(app_row["brands"])),
        )


@pytest.fixture
def callers(app: FastAPI) -> TestCallers:
    return TestCallers(app)
