"""The demo sandbox `autoport serve` creates on a fresh data directory: one account, one
application (its credentials printed once), three vehicles in different scenarios, so
the first command shows a living system.

The account and application come from the oauth feature's
`autoport.apps.service.create_account/create_application` (contracts.md), passed in as
callables; without them the vehicles are still created and the report says so.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autoport.kit.db import Database
from autoport.kit.vin import generate_vin
from autoport.sandbox import service
from autoport.sandbox.physics import Powertrain, Scenario
from autoport.sandbox.service import ENVIRONMENT, Ingest, NewVehicle

CreateAccount = Callable[..., Awaitable[Any]]
CreateApplication = Callable[..., Awaitable[tuple[Any, str]]]

DEMO_REDIRECT_URI = "http://localhost:3000/callback"
DEMO_VEHICLES: tuple[tuple[str, Powertrain, Scenario, int], ...] = (
    ("Demo EV, driving through Berlin", Powertrain.electric, Scenario.driving, 101),
    ("Demo plug-in hybrid, charging", Powertrain.plug_in_hybrid, Scenario.charging, 202),
    ("Demo combustion car, parked", Powertrain.combustion, Scenario.parked, 303),
)


def demo_vin(seed: int) -> str:
    """Fixed VINs, so the README's examples work on every fresh install."""
    return generate_vin(random.Random(f"autoport-demo/{seed}"))


@dataclass
class DemoSandbox:
    vins: list[str] = field(default_factory=list)
    account_id: str | None = None
    application_id: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    note: str | None = None

    def describe(self, sandbox_base_url: str) -> str:
        lines = ["", "  Demo sandbox created:"]
        if self.client_id is not None:
            lines += [
                f"    application id: {self.application_id}",
                f"    client_id:      {self.client_id}",
                f"    client_secret:  {self.client_secret}   (shown once, keep it)",
            ]
        else:
            lines.append(f"    no application: {self.note}")
        for (name, _, scenario, _), vin in zip(DEMO_VEHICLES, self.vins, strict=True):
            lines.append(f"    vehicle {vin}  {scenario.value:<9} {name}")
        lines.append(f"    sandbox API:    {sandbox_base_url}")
        return "\n".join(lines) + "\n"


def _field(obj: Any, name: str) -> Any:
    """Read `name` from whatever the apps service returns (a row, mapping or object)."""
    if isinstance(obj, str) and name == "id":
        return obj
    if isinstance(obj, Mapping):
        return obj[name]
    try:
        return obj[name]
    except (TypeError, KeyError, IndexError):
        return getattr(obj, name)


async def seed_demo(
    db: Database,
    *,
    ingest: Ingest,
    now_us: int,
    create_account: CreateAccount | None,
    create_application: CreateApplication | None,
) -> DemoSandbox:
    demo = DemoSandbox()
    properties: set[str] = set()
    for name, powertrain, scenario, seed in DEMO_VEHICLES:
        vehicle = await service.create_vehicle(
            db,
            ingest=ingest,
            spec=NewVehicle(
                vin=demo_vin(seed),
                name=name,
                powertrain=powertrain,
                profile="full",
                scenario=scenario,
                seed=seed,
            ),
            now_us=now_us,
        )
        demo.vins.append(vehicle.vin)
        properties.update(vehicle.properties)
    if create_account is None or create_application is None:
        demo.note = "the applications feature (autoport.apps.service) is not installed"
        return demo
    async with db.transaction() as conn:
        account = await create_account(
            conn, environment=ENVIRONMENT, name="Demo account", now_us=now_us
        )
        demo.account_id = str(_field(account, "id"))
        application, secret = await create_application(
            conn,
            environment=ENVIRONMENT,
            account_id=demo.account_id,
            name="Demo application",
            redirect_uris=[DEMO_REDIRECT_URI],
            properties=sorted(properties),
            brands=["sandbox"],
            client_type="confidential",
            now_us=now_us,
        )
    demo.application_id = str(_field(application, "id"))
    demo.client_id = str(_field(application, "client_id"))
    demo.client_secret = secret
    return demo
