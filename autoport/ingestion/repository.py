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


# PostgreSQL: one statement for the whole batch (arrays unnested server-side) instead of
# one round trip per row with executemany: several times faster.
_INSERT_HISTORY_PG = """
INSERT INTO vehicle_data_history
    (environment, vin, capability, property, timestamp, digest, value, received_at)
SELECT :environment, :vin, u.capability, u.property, u.timestamp, u.digest, u.value,
       :received_at
FROM unnest(CAST(:capabilities AS text[]), CAST(:properties AS text[]),
            CAST(:timestamps AS bigint[]), CAST(:digests AS text[]), CAST(:values AS text[]))
     AS u(capability, property, timestamp, digest, value)
ON CONFLICT (environment, vin, capability, property, timestamp, digest) DO NOTHING
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


async def append_history(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Rows of one vehicle (same environment, vin and received_at)."""
    if not rows:
        return
    if conn.dialect == "postgresql":
        first = rows[0]
        await conn.execute(
            _INSERT_HISTORY_PG,
            {
                "environment": first["environment"],
                "vin": first["vin"],
                "received_at": first["received_at"],
                "capabilities": [row["capability"] for row in rows],
                "properties": [row["property"] for row in rows],
                "timestamps": [row["timestamp"] for row in rows],
                "digests": [row["digest"] for row in rows],
                "values": [row["value"] for row in rows],
            },
        )
        return
    await conn.execute_many(_INSERT_HISTORY, rows)
