"""The demo sandbox `autoport serve` creates on a fresh data directory: one account, one
application (its credentials printed once), three vehicles in different scenarios, and
approved fleet clearances of the three for the application, so the first command shows
a living system: the application's client_credentials token reads and streams them at
once.

The clearances go through the fleet feature (request, then the sandbox carmaker's
approval as one `transition`), so their changelog and `fleet_clearance_changed` events
are those of any clearance.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from autoport.apps.service import create_account, create_application
from autoport.brands.push import Ingest
from autoport.fleet import repository as fleet_repository
from autoport.fleet import service as fleet_service
from autoport.fleet.repository import VehicleKey
from autoport.fleet.states import Status, Trigger
from autoport.kit.auth import Caller, CallerKind
from autoport.kit.db import Database
from autoport.sandbox import service
from autoport.sandbox.physics import SANDBOX_COMMANDS, Powertrain, Scenario
from autoport.sandbox.service import BRAND, ENVIRONMENT, NewVehicle
from autoport.vehicles.vin import generate_vin

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
    account_id: str = ""
    application_id: str = ""
    client_id: str = ""
    client_secret: str | None = None

    def describe(self, sandbox_base_url: str) -> str:
        lines = [
            "",
            "  Demo sandbox created:",
            f"    application id: {self.application_id}",
            f"    client_id:      {self.client_id}",
            f"    client_secret:  {self.client_secret}   (shown once, keep it; "
            "`autoport demo` issues a new one)",
        ]
        for (name, _, scenario, _), vin in zip(DEMO_VEHICLES, self.vins, strict=True):
            lines.append(f"    vehicle {vin}  {scenario.value:<9} {name}")
        lines.append(f"    sandbox API:    {sandbox_base_url}")
        return "\n".join(lines) + "\n"


async def approve_fleet_clearances(
    db: Database,
    *,
    application_id: str,
    client_id: str,
    properties: list[str],
    vins: list[str],
    now_us: int,
) -> None:
    """Request the clearance of every demo vehicle as the application would, then let
    the sandbox carmaker approve it at once (the fleet worker would, a few seconds on)."""
    caller = Caller(
        environment=ENVIRONMENT,
        kind=CallerKind.application,
        application_id=application_id,
        client_id=client_id,
        scopes=frozenset({fleet_service.SCOPE}),
        application_properties=frozenset(properties),
        application_brands=frozenset({BRAND}),
    )
    async with db.transaction() as conn:
        answers = await fleet_service.add_vehicles(
            conn,
            caller=caller,
            vehicles=[{"vin": vin, "brand": BRAND, "tags": {"demo": "true"}} for vin in vins],
            now_us=now_us,
            limit=len(vins),
        )
    refused = [answer for answer in answers if answer["status"] != str(Status.pending)]
    if refused:
        raise RuntimeError(f"demo fleet clearance refused: {refused}")
    async with db.transaction() as conn:
        for vin in vins:
            vehicle = await fleet_repository.get(
                conn, VehicleKey(ENVIRONMENT, application_id, vin), for_update=True
            )
            if vehicle is None or not await fleet_service.transition(
                conn, vehicle, Status.approved, Trigger.carmaker, now_us=now_us + 1
            ):
                raise RuntimeError(f"demo fleet clearance of {vin} could not be approved")


async def seed_demo(db: Database, *, ingest: Ingest, now_us: int) -> DemoSandbox:
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
    async with db.transaction() as conn:
        account = await create_account(
            conn, environment=ENVIRONMENT, name="Demo account", now_us=now_us
        )
        application, secret = await create_application(
            conn,
            environment=ENVIRONMENT,
            account_id=account.id,
            name="Demo application",
            redirect_uris=[DEMO_REDIRECT_URI],
            properties=sorted(properties),
            brands=[BRAND],
            client_type="confidential",
            now_us=now_us,
            # Every command the simulated car obeys: `make run` users can try them at once.
            commands=SANDBOX_COMMANDS,
        )
    demo.account_id = account.id
    demo.application_id = application.id
    demo.client_id = application.client_id
    demo.client_secret = secret
    await approve_fleet_clearances(
        db,
        application_id=demo.application_id,
        client_id=demo.client_id,
        properties=sorted(properties),
        vins=demo.vins,
        now_us=now_us,
    )
    return demo
