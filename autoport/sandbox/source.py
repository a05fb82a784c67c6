"""The sandbox brand's per-vehicle behaviour, read from the emulator's state.

The `sandbox` brand has one data source: the fleet feature's sandbox connector
(autoport.brands.sandbox), registered in the brand registry's `data_sources` (autoport.state). The
connector asks a `SandboxBehaviour` what each vehicle does; `BehaviourLookup` answers
from the sandbox vehicles' rows, so what the emulator sets (offline, latency, injected
failures, eligibility, connectivity, privacy mode) is the one truth a pull sees:
- privacy mode -> the connector raises PrivacyModeActive -> pull 403, nothing served;
- offline/asleep -> the connector raises VehicleOffline -> pull 408;
- latency -> the connector sleeps it; past `vehicle_data_fetch_timeout_seconds` -> 504;
- injected failures -> failure wrappers (the emulator's reason and description) in the
  fetched data, which the pull ingests, so they reach pull, history and streams alike.
A VIN that is no sandbox vehicle gets no overrides (the connector's settings apply) and
no fresh data (its stored values are served).
"""

from __future__ import annotations

from autoport.brands.base import CommandOutcome, CommandRequest, ConnectivityStatus
from autoport.brands.push import Ingest
from autoport.brands.sandbox import VehicleBehaviour
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.sandbox import repository
from autoport.sandbox.repository import VehicleRow
from autoport.sandbox.service import current_data, execute_command


def behaviour_of_row(vehicle: VehicleRow) -> VehicleBehaviour:
    return VehicleBehaviour(
        offline=vehicle.offline,
        privacy_mode=vehicle.privacy_mode,
        latency_seconds=vehicle.latency_seconds,
        failing_properties=frozenset(vehicle.failures),
        eligible=vehicle.eligible,
        connectivity_status=ConnectivityStatus(vehicle.connectivity_status),
    )


class BehaviourLookup:
    """autoport.brands.sandbox.SandboxBehaviour from the emulator's vehicles."""

    def __init__(self, db: Database, clock: Clock, ingest: Ingest) -> None:
        self.db = db
        self.clock = clock
        self.ingest = ingest

    async def _vehicle(self, environment: Environment, vin: str) -> VehicleRow | None:
        return await repository.get(self.db.reader, environment, vin)

    async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
        vehicle = await self._vehicle(environment, vin)
        return VehicleBehaviour() if vehicle is None else behaviour_of_row(vehicle)

    async def current_data(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> dict[str, dict[str, object]] | None:
        vehicle = await self._vehicle(environment, vin)
        if vehicle is None:
            return None  # not emulated here: the stored values are served
        return current_data(vehicle, properties=properties or None, now_us=self.clock.now_us())

    async def execute_command(self, request: CommandRequest) -> CommandOutcome:
        """The emulated vehicle obeys; its new state goes through ingestion."""
        return await execute_command(
            self.db,
            ingest=self.ingest,
            request=request,
            now_us=self.clock.now_us(),
        )
