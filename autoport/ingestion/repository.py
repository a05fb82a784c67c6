"""SQL of ingestion: the vehicle row (latest values), the history, the providers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from autoport.kit.db import Connection, Row

_SELECT_VEHICLE = (
    "SELECT brand, document, stamps FROM vehicles WHERE environment = :environment AND vin = :vin"
)
# PostgreSQL: ingestions of one vehicle queue up on its row (SQLite has one writer).
_LOCK_VEHICLE_PG = _SELECT_VEHICLE + " FOR UPDATE"

_INSERT_VEHICLE = """
INSERT INTO vehicles (environment, vin, brand, document, stamps, created_at, updated_at)
VALUES (:environment, :vin, :brand, :document, :stamps, :now, :now)
ON CONFLICT (environment, vin) DO NOTHING
"""

_UPDATE_VEHICLE = """
UPDATE vehicles SET brand = :brand, document = :document, stamps = :stamps, updated_at = :now
WHERE environment = :environment AND vin = :vin
"""

_INSERT_HISTORY = """
INSERT INTO vehicle_data_history
    (environment, vin, capability, property, timestamp, digest, value, received_at)
VALUES (:environment, :vin, :capability, :property, :timestamp, :digest, :value, :received_at)
ON CONFLICT (environment, vin, capability, property, timestamp, digest) DO NOTHING
"""


async def lock_vehicle(conn: Connection, *, environment: str, vin: str) -> Row | None:
    sql = _LOCK_VEHICLE_PG if conn.dialect == "postgresql" else _SELECT_VEHICLE
    return await conn.fetch_one(sql, {"environment": environment, "vin": vin})


async def insert_vehicle(conn: Connection, values: Mapping[str, Any]) -> bool:
    return await conn.execute(_INSERT_VEHICLE, values) == 1


async def update_vehicle(conn: Connection, values: Mapping[str, Any]) -> None:
    await conn.execute(_UPDATE_VEHICLE, values)


async def append_history(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    await conn.execute_many(_INSERT_HISTORY, rows)
