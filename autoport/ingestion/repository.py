"""SQL of ingestion: the vehicle row (latest values) and the providers. The history is
autoport.history's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

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


# Many vehicles of one request at once. PostgreSQL locks the rows in VIN order, so two
# requests naming the same vehicles in different orders queue instead of deadlocking.
_SELECT_VEHICLES_PG = """
SELECT vin, brand, document, stamps FROM vehicles
WHERE environment = :environment AND vin = ANY(CAST(:vins AS text[]))
ORDER BY vin FOR UPDATE
"""
_SELECT_VEHICLES_SQLITE = """
SELECT vin, brand, document, stamps FROM vehicles
WHERE environment = :environment AND vin IN (SELECT value FROM json_each(:vins))
"""
# Rows for the vehicles not stored yet, written over with their data before the commit;
# RETURNING names the ones this transaction created (another may have created the rest
# meanwhile: PostgreSQL).
_CREATE_VEHICLES_PG = """
INSERT INTO vehicles (environment, vin, brand, document, stamps, created_at, updated_at)
SELECT :environment, v, :brand, '{}', '{}', :now, :now FROM unnest(CAST(:vins AS text[])) AS v
ON CONFLICT (environment, vin) DO NOTHING
RETURNING vin
"""
_CREATE_VEHICLES_SQLITE = """
INSERT INTO vehicles (environment, vin, brand, document, stamps, created_at, updated_at)
SELECT :environment, value, :brand, '{}', '{}', :now, :now FROM json_each(:vins) WHERE true
ON CONFLICT (environment, vin) DO NOTHING
RETURNING vin
"""


def _vins(conn: Connection, vins: list[str]) -> Any:
    return vins if conn.dialect == "postgresql" else orjson.dumps(vins).decode()


async def lock_vehicles(conn: Connection, *, environment: str, vins: list[str]) -> list[Row]:
    """The stored rows of `vins` (the absent ones left out), locked until the commit."""
    sql = _SELECT_VEHICLES_PG if conn.dialect == "postgresql" else _SELECT_VEHICLES_SQLITE
    return await conn.fetch_all(sql, {"environment": environment, "vins": _vins(conn, vins)})


async def create_empty_vehicles(
    conn: Connection, *, environment: str, vins: list[str], brand: str, now_us: int
) -> set[str]:
    """Rows for `vins`, empty documents of `brand`, where none is stored; returns the VINs
    created (the others were created by another transaction since they were looked up)."""
    sql = _CREATE_VEHICLES_PG if conn.dialect == "postgresql" else _CREATE_VEHICLES_SQLITE
    rows = await conn.fetch_all(
        sql,
        {"environment": environment, "vins": _vins(conn, vins), "brand": brand, "now": now_us},
    )
    return {str(row[0]) for row in rows}


async def update_vehicles(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """`update_vehicle` for many rows, in one call (asyncpg pipelines them)."""
    await conn.execute_many(_UPDATE_VEHICLE, rows)


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


# ---------------------------------------------------------------- ingest providers

_PROVIDER_COLUMNS = "id, environment, name, created_at, revoked_at, brands, auto_approve_clearances"


async def create_provider(conn: Connection, values: Mapping[str, Any]) -> Row:
    row = await conn.fetch_one(
        "INSERT INTO ingest_providers (id, environment, name, secret_hash, created_at, brands, "  # noqa: S608 - a fixed column list
        "auto_approve_clearances) VALUES (:id, :environment, :name, :hash, :now, :brands, "
        f":auto) RETURNING {_PROVIDER_COLUMNS}",
        values,
    )
    assert row is not None
    return row


async def get_active_provider(conn: Connection, *, provider_id: str) -> Row | None:
    return await conn.fetch_one(
        f"SELECT {_PROVIDER_COLUMNS} FROM ingest_providers "  # noqa: S608 - a fixed column list
        "WHERE id = :id AND revoked_at IS NULL",
        {"id": provider_id},
    )


async def update_provider(
    conn: Connection, *, provider_id: str, brands: str, auto_approve_clearances: bool
) -> Row | None:
    """Set an active provider's brands (JSON) and clearance setting; None when there is
    no such active provider."""
    return await conn.fetch_one(
        "UPDATE ingest_providers SET brands = :brands, auto_approve_clearances = :auto "  # noqa: S608 - a fixed column list
        f"WHERE id = :id AND revoked_at IS NULL RETURNING {_PROVIDER_COLUMNS}",
        {"id": provider_id, "brands": brands, "auto": auto_approve_clearances},
    )


async def list_providers(conn: Connection, *, environment: str | None) -> list[Row]:
    if environment is None:
        return await conn.fetch_all(
            f"SELECT {_PROVIDER_COLUMNS} FROM ingest_providers ORDER BY created_at, id"  # noqa: S608
        )
    return await conn.fetch_all(
        f"SELECT {_PROVIDER_COLUMNS} FROM ingest_providers "  # noqa: S608
        "WHERE environment = :environment ORDER BY created_at, id",
        {"environment": environment},
    )


async def revoke_provider(conn: Connection, *, provider_id: str, now_us: int) -> Row | None:
    """None when there is no such provider or it was already revoked."""
    return await conn.fetch_one(
        "UPDATE ingest_providers SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL "  # noqa: S608 - a fixed column list
        f"RETURNING {_PROVIDER_COLUMNS}",
        {"id": provider_id, "now": now_us},
    )


async def get_active_provider_by_secret_hash(conn: Connection, *, secret_hash: str) -> Row | None:
    return await conn.fetch_one(
        f"SELECT {_PROVIDER_COLUMNS}, secret_hash "  # noqa: S608 - a fixed column list
        "FROM ingest_providers WHERE secret_hash = :hash AND revoked_at IS NULL",
        {"hash": secret_hash},
    )


async def rehash_provider_secret(conn: Connection, *, old: str, new: str) -> None:
    await conn.execute(
        "UPDATE ingest_providers SET secret_hash = :new WHERE secret_hash = :old",
        {"new": new, "old": old},
    )
