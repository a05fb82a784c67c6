"""The sandbox as a carmaker: its on-demand data source and per-vehicle behaviour.

`SandboxDataSource` implements autoport.ingestion.sources.DataSource for brand
`sandbox`: an offline/asleep vehicle raises VehicleOffline (pull → 408), a slow one
sleeps its latency first (the pull bounds the wait, so it answers 504), otherwise it
returns the vehicle's current simulated values with the injected failures.

`SandboxBehaviour` is what the fleet branch's sandbox connector asks per vehicle
(offline, slow, failing, eligible, connectivity); `behaviour()` reads it from the
emulator's state. An unknown VIN gives None: the connector's configured default applies.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from autoport.ingestion.sources import FetchResult, VehicleOffline
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.sandbox import repository
from autoport.sandbox.repository import VehicleRow
from autoport.sandbox.service import current_data


@dataclass(frozen=True, slots=True)
class SandboxBehaviour:
    offline: bool = False
    latency_seconds: float = 0.0
    # {"capability.property": failure reason}
    failures: dict[str, str] = field(default_factory=dict)
    eligible: bool = True
    connectivity_status: str = "activated"

    @classmethod
    def of(cls, vehicle: VehicleRow) -> SandboxBehaviour:
        return cls(
            offline=vehicle.offline,
            latency_seconds=vehicle.latency_seconds,
            failures={key: failure["reason"] for key, failure in vehicle.failures.items()},
            eligible=vehicle.eligible,
            connectivity_status=vehicle.connectivity_status,
        )


async def behaviour(db: Database, environment: Environment, vin: str) -> SandboxBehaviour | None:
    """The emulator's settings for one vehicle; None when the VIN is no sandbox vehicle."""
    vehicle = await repository.get(db.reader, environment, vin)
    return None if vehicle is None else SandboxBehaviour.of(vehicle)


class BehaviourLookup:
    """`behaviour` bound to a database: `await lookup(environment, vin)`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def __call__(self, environment: Environment, vin: str) -> SandboxBehaviour | None:
        return await behaviour(self.db, environment, vin)


class SandboxDataSource:
    """autoport.ingestion.sources.DataSource for brand `sandbox`."""

    def __init__(self, db: Database, clock: Clock | None = None) -> None:
        self.db = db
        self.clock = clock or Clock()

    async def fetch(
        self,
        *,
        environment: Environment,
        vin: str,
        properties: frozenset[str],
    ) -> FetchResult | None:
        vehicle = await repository.get(self.db.reader, environment, vin)
        if vehicle is None:
            return None  # not simulated here: the stored values are served
        if vehicle.offline:
            raise VehicleOffline(f"the sandbox vehicle {vin} is offline (asleep)")
        if vehicle.latency_seconds > 0:
            # The pull wraps fetch in asyncio.timeout; a latency above it is its 504.
            await asyncio.sleep(vehicle.latency_seconds)
        wanted = properties or None
        return FetchResult(
            data=current_data(vehicle, properties=wanted, now_us=self.clock.now_us())
        )
