"""SQL of the sandbox vehicles. Every query is scoped to one environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment
from autoport.sandbox.physics import VehicleState

COLUMNS = (
    "environment, vin, name, powertrain, profile, properties, scenario, seed, time_scale, "
    "step_seconds, running, started_at, step, state, overrides, failures, offline, "
    "latency_seconds, eligible, connectivity_status, privacy_mode, created_at, updated_at, "
    "account_id"
)


@dataclass(frozen=True, slots=True)
class VehicleRow:
    environment: Environment
    vin: str
    name: str | None
    powertrain: str
    profile: str
    properties: tuple[str, ...]
    scenario: str
    seed: int
    time_scale: float
    step_seconds: float
    running: bool
    started_at: int
    step: int
    state: VehicleState
    # {"cap.prop": {"data": ..., "timestamp_us": int}}
    overrides: dict[str, dict[str, Any]]
    # {"cap.prop": {"reason": ..., "description": ..., "timestamp_us": int}}
    failures: dict[str, dict[str, Any]]
    offline: bool
    latency_seconds: float
    eligible: bool
    connectivity_status: str
    # The owner switched data sharing off in the car: it sends and answers nothing.
    privacy_mode: bool
    created_at: int
    updated_at: int
    # The console account that made it (only its users see it there); None: the operator's.
    account_id: str | None = None

    @classmethod
    def from_row(cls, row: Row) -> VehicleRow:
        return cls(
            environment=Environment(row["environment"]),
            vin=row["vin"],
            name=row["name"],
            powertrain=row["powertrain"],
            profile=row["profile"],
            properties=tuple(orjson.loads(row["properties"])),
            scenario=row["scenario"],
            seed=int(row["seed"]),
            time_scale=float(row["time_scale"]),
            step_seconds=float(row["step_seconds"]),
            running=bool(row["running"]),
            started_at=int(row["started_at"]),
            step=int(row["step"]),
            state=VehicleState.from_json(orjson.loads(row["state"])),
            overrides=orjson.loads(row["overrides"]),
            failures=orjson.loads(row["failures"]),
            offline=bool(row["offline"]),
            latency_seconds=float(row["latency_seconds"]),
            eligible=bool(row["eligible"]),
            connectivity_status=row["connectivity_status"],
            privacy_mode=bool(row["privacy_mode"]),
            created_at=int(row["created_at"]),
            updated_at=int(row["updated_at"]),
            account_id=row["account_id"],
        )

    def step_time_us(self, step: int) -> int:
        """When step `step` is due on the wall clock."""
        return self.started_at + int(step * self.step_seconds / self.time_scale * 1_000_000)

    def due_step(self, now_us: int) -> int:
        elapsed = max(0, now_us - self.started_at) / 1_000_000
        return int(elapsed * self.time_scale / self.step_seconds)


def dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def row_params(vehicle: VehicleRow) -> dict[str, Any]:
    return {
        "environment": vehicle.environment.value,
        "vin": vehicle.vin,
        "name": vehicle.name,
        "powertrain": vehicle.powertrain,
        "profile": vehicle.profile,
        "properties": dumps(list(vehicle.properties)),
        "scenario": vehicle.scenario,
        "seed": vehicle.seed,
        "time_scale": vehicle.time_scale,
        "step_seconds": vehicle.step_seconds,
        "running": vehicle.running,
        "started_at": vehicle.started_at,
        "step": vehicle.step,
        # orjson writes the dataclass itself, the same bytes as dumps(state.to_json())
        # (tests/commands/test_sandbox_physics_commands.py) at 1/30 of the cost: every
        # simulator tick and command saves it.
        "state": dumps(vehicle.state),
        "overrides": dumps(vehicle.overrides),
        "failures": dumps(vehicle.failures),
        "offline": vehicle.offline,
        "latency_seconds": vehicle.latency_seconds,
        "eligible": vehicle.eligible,
        "connectivity_status": vehicle.connectivity_status,
        "privacy_mode": vehicle.privacy_mode,
        "created_at": vehicle.created_at,
        "updated_at": vehicle.updated_at,
        "account_id": vehicle.account_id,
    }


_INSERT = f"""
INSERT INTO sandbox_vehicles ({COLUMNS})
VALUES (:environment, :vin, :name, :powertrain, :profile, :properties, :scenario, :seed,
        :time_scale, :step_seconds, :running, :started_at, :step, :state, :overrides,
        :failures, :offline, :latency_seconds, :eligible, :connectivity_status,
        :privacy_mode, :created_at, :updated_at, :account_id)
ON CONFLICT (environment, vin) DO NOTHING
"""  # noqa: S608 - constant column list


async def create(conn: Connection, vehicle: VehicleRow) -> bool:
    """False when the VIN already exists in the environment."""
    return await conn.execute(_INSERT, row_params(vehicle)) == 1


async def get(conn: Connection, environment: Environment, vin: str) -> VehicleRow | None:
    row = await conn.fetch_one(
        f"SELECT {COLUMNS} FROM sandbox_vehicles WHERE environment = :environment AND vin = :vin",  # noqa: S608
        {"environment": environment.value, "vin": vin},
    )
    return None if row is None else VehicleRow.from_row(row)


async def get_for_update(conn: Connection, environment: Environment, vin: str) -> VehicleRow | None:
    """Inside a transaction: the row, locked against concurrent emulator writes (SQLite
    has a single writer already)."""
    lock = " FOR UPDATE" if conn.dialect == "postgresql" else ""
    row = await conn.fetch_one(
        f"SELECT {COLUMNS} FROM sandbox_vehicles "  # noqa: S608
        f"WHERE environment = :environment AND vin = :vin{lock}",
        {"environment": environment.value, "vin": vin},
    )
    return None if row is None else VehicleRow.from_row(row)


async def list_vehicles(conn: Connection, environment: Environment) -> list[VehicleRow]:
    rows = await conn.fetch_all(
        f"SELECT {COLUMNS} FROM sandbox_vehicles WHERE environment = :environment ORDER BY vin",  # noqa: S608
        {"environment": environment.value},
    )
    return [VehicleRow.from_row(row) for row in rows]


async def list_vehicles_of_account(
    conn: Connection, environment: Environment, account_id: str
) -> list[VehicleRow]:
    rows = await conn.fetch_all(
        f"SELECT {COLUMNS} FROM sandbox_vehicles "  # noqa: S608
        "WHERE environment = :environment AND account_id = :account_id ORDER BY vin",
        {"environment": environment.value, "account_id": account_id},
    )
    return [VehicleRow.from_row(row) for row in rows]


async def list_running(conn: Connection, limit: int) -> list[VehicleRow]:
    rows = await conn.fetch_all(
        f"SELECT {COLUMNS} FROM sandbox_vehicles WHERE running "  # noqa: S608
        "ORDER BY updated_at LIMIT :limit",
        {"limit": limit},
    )
    return [VehicleRow.from_row(row) for row in rows]


async def delete(conn: Connection, environment: Environment, vin: str) -> bool:
    count = await conn.execute(
        "DELETE FROM sandbox_vehicles WHERE environment = :environment AND vin = :vin",
        {"environment": environment.value, "vin": vin},
    )
    return count == 1


async def update(conn: Connection, vehicle: VehicleRow, *, seen_updated_at: int) -> bool:
    """Write back a changed vehicle, unless someone else changed it since it was read
    (`updated_at` is the version): False then, and nothing is written."""
    params = row_params(vehicle)
    params["seen"] = seen_updated_at
    count = await conn.execute(
        """
        UPDATE sandbox_vehicles SET
            name = :name, powertrain = :powertrain, profile = :profile,
            properties = :properties, scenario = :scenario, seed = :seed,
            time_scale = :time_scale, step_seconds = :step_seconds, running = :running,
            started_at = :started_at, step = :step, state = :state, overrides = :overrides,
            failures = :failures, offline = :offline, latency_seconds = :latency_seconds,
            eligible = :eligible, connectivity_status = :connectivity_status,
            privacy_mode = :privacy_mode, updated_at = :updated_at
        WHERE environment = :environment AND vin = :vin AND updated_at = :seen
        """,
        {k: v for k, v in params.items() if k not in ("created_at", "account_id")},
    )
    return count == 1


async def count(conn: Connection, environment: Environment) -> int:
    value = await conn.fetch_value(
        "SELECT COUNT(*) FROM sandbox_vehicles WHERE environment = :environment",
        {"environment": environment.value},
    )
    return int(value or 0)
