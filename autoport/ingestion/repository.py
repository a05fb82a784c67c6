"""SQL of ingestion: the vehicle row (latest values) and the providers. The history is
autoport.history's."""

from __future__ import annotations

from collections.abc import Mapping
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


async def get_vehicle_for_update(conn: Connection, *, environment: str, vin: str) -> Row | None:
    sql = _LOCK_VEHICLE_PG if conn.dialect == "postgresql" else _SELECT_VEHICLE
    return await conn.fetch_one(sql, {"environment": environment, "vin": vin})


async def get_vehicle(conn: Connection, *, environment: str, vin: str) -> Row | None:
    """The stored row, read without a lock (to see whether a delivery changes anything)."""
    return await conn.fetch_one(_SELECT_VEHICLE, {"environment": environment, "vin": vin})


async def create_vehicle(conn: Connection, values: Mapping[str, Any]) -> bool:
    return await conn.execute(_INSERT_VEHICLE, values) == 1


async def update_vehicle(conn: Connection, values: Mapping[str, Any]) -> None:
    await conn.execute(_UPDATE_VEHICLE, values)
