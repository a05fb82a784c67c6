"""Callers for the fleet and eligibility tests: real applications (autoport.apps) and real
tokens from the token endpoint, checked by the real bearer authenticator."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI

from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.factories import (
    AppCredentials,
    bearer,
    client_credentials_token,
    create_app_credentials,
    vehicle_token,
)

PROPERTIES = ["charging.battery_level", "diagnostics.odometer"]
# The sandbox brand exists only in the sandbox environment (docs/security.md).
PRODUCTION_BRANDS = ("mercedes_benz", "bmw", "ford")
SANDBOX_BRANDS = ("sandbox", "mercedes_benz", "bmw")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The sandbox carmaker decides after 5 s and confirms removals after 1 s."""
    return settings.model_copy(
        update={
            "sandbox_connector_clearance_delay_seconds": 5.0,
            "sandbox_connector_removal_delay_seconds": 1.0,
        }
    )


@dataclass(frozen=True)
class TestApp:
    __test__ = False  # not a test class

    token: str
    credentials: AppCredentials

    @property
    def headers(self) -> dict[str, str]:
        return bearer(self.token)

    @property
    def id(self) -> str:
        return self.credentials.app_id

    @property
    def prefix(self) -> str:
        """The environment's path prefix ("/sandbox" or "")."""
        return self.credentials.prefix


@dataclass(frozen=True)
class Callers:
    fleet: TestApp  # production application, client_credentials token: every scope
    other: TestApp  # another production application (scoping)
    # The fleet application's consent token: scopes `vehicle:data` and the capabilities'
    # read scopes only, no `vehicle:eligibility-check`/`fleet:clearance`.
    no_scope: TestApp
    sandbox: TestApp  # a sandbox application, client_credentials token
    vehicle: TestApp  # another consent (vehicle) token of the fleet application
    # A second sandbox application: the emulated carmaker decides both one's clearances.
    sandbox_other: TestApp


@pytest.fixture
async def callers(app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock) -> Callers:
    db = app.state.autoport.database
    now = clock.now_us()

    async def application(environment: Environment, brands: tuple[str, ...]) -> AppCredentials:
        return await create_app_credentials(
            db, environment=environment, properties=PROPERTIES, brands=brands, now_us=now
        )

    fleet = await application(Environment.production, PRODUCTION_BRANDS)
    other = await application(Environment.production, PRODUCTION_BRANDS)
    sandbox = await application(Environment.sandbox, SANDBOX_BRANDS)
    sandbox_other = await application(Environment.sandbox, SANDBOX_BRANDS)

    async def consent(vin: str) -> TestApp:
        issued = await vehicle_token(client, db, fleet, vin=vin, now_us=now)
        return TestApp(issued.access_token, fleet)

    return Callers(
        fleet=TestApp(await client_credentials_token(client, fleet), fleet),
        other=TestApp(await client_credentials_token(client, other), other),
        no_scope=await consent("SBX00000000000001"),
        sandbox=TestApp(await client_credentials_token(client, sandbox), sandbox),
        vehicle=await consent("SBX00000000000002"),
        sandbox_other=TestApp(await client_credentials_token(client, sandbox_other), sandbox_other),
    )
