"""SQL of fleet clearance. Every statement is scoped by environment and application
(the key of a fleet vehicle is (environment, application_id, vin)), except the worker's
claim, which takes due vehicles of every application and hands their keys on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import and_, select, tuple_
from sqlalchemy.sql import ColumnElement, TextClause

from autoport.db.tables.fleet import fleet_vehicles
from autoport.fleet.states import Status
from autoport.kit.db import Connection, Database, Row
from autoport.kit.environments import Environment

# A WHERE condition of a vehicle list (autoport.fleet.filters builds them).
Condition = ColumnElement[bool] | TextClause


@dataclass(frozen=True, slots=True)
class VehicleKey:
    environment: Environment
    application_id: str
    vin: str

    def params(self) -> dict[str, str]:
        return {
            "environment": str(self.environment),
            "application_id": self.application_id,
            "vin": self.vin,
        }


@dataclass(frozen=True, slots=True)
class FleetVehicle:
    key: VehicleKey
    brand: str
    status: Status
    tags: dict[str, str]
    changelog: list[dict[str, Any]]
    reason: str | None
    inserted_at: int
    updated_at: int
    approved_at: int | None
    next_check_at: int | None

    @classmethod
    def from_row(cls, row: Row) -> FleetVehicle:
        return cls(
            key=VehicleKey(Environment(row["environment"]), row["application_id"], row["vin"]),
            brand=row["brand"],
            status=Status(row["status"]),
            tags=orjson.loads(row["tags"]),
            changelog=orjson.loads(row["changelog"]),
            reason=row["reason"],
            inserted_at=row["inserted_at"],
            updated_at=row["updated_at"],
            approved_at=row["approved_at"],
            next_check_at=row["next_check_at"],
        )


_COLUMNS = (
    "environment, application_id, vin, brand, status, tags, changelog, reason, "
    "inserted_at, updated_at, approved_at, next_check_at"
)
_KEY = "environment = :environment AND application_id = :application_id AND vin = :vin"

_INSERT = f"""
INSERT INTO fleet_vehicles ({_COLUMNS})
VALUES (:environment, :application_id, :vin, :brand, :status, :tags, :changelog, NULL,
        :now, :now, NULL, :now)
ON CONFLICT (environment, application_id, vin) DO NOTHING
"""  # noqa: S608 - only the fixed column list is interpolated


async def create_pending(
    conn: Connection,
    key: VehicleKey,
    *,
    brand: str,
    tags: dict[str, str],
    changelog: list[dict[str, Any]],
    now_us: int,
) -> bool:
    """A new pending vehicle, due for the worker at once; False when it already exists."""
    changed = await conn.execute(
        _INSERT,
        {
            **key.params(),
            "brand": brand,
            "status": str(Status.pending),
            "tags": orjson.dumps(tags).decode(),
            "changelog": orjson.dumps(changelog).decode(),
            "now": now_us,
        },
    )
    return changed == 1


async def get(
    conn: Connection, key: VehicleKey, *, for_update: bool = False
) -> FleetVehicle | None:
    # Inside a write transaction on PostgreSQL the row is locked until commit, so the
    # read-modify-write of the changelog cannot interleave; SQLite has one writer anyway.
    lock = " FOR UPDATE" if for_update and conn.dialect == "postgresql" else ""
    row = await conn.fetch_one(
        f"SELECT {_COLUMNS} FROM fleet_vehicles WHERE {_KEY}{lock}",  # noqa: S608 - fixed text
        key.params(),
    )
    return None if row is None else FleetVehicle.from_row(row)


async def update_status(
    conn: Connection,
    key: VehicleKey,
    *,
    expected: Status,
    new: Status,
    reason: str | None,
    changelog: list[dict[str, Any]],
    now_us: int,
    next_check_at: int | None,
    approved_at: int | None,
    brand: str | None = None,
    tags: dict[str, str] | None = None,
) -> bool:
    """Conditional on the status still being `expected`: the second of two racing writers
    changes nothing."""
    sets = [
        "status = :new",
        "reason = :reason",
        "changelog = :changelog",
        "updated_at = :now",
        "next_check_at = :next_check_at",
        "approved_at = :approved_at",
    ]
    params: dict[str, Any] = {
        **key.params(),
        "expected": str(expected),
        "new": str(new),
        "reason": reason,
        "changelog": orjson.dumps(changelog).decode(),
        "now": now_us,
        "next_check_at": next_check_at,
        "approved_at": approved_at,
    }
    if brand is not None:
        sets.append("brand = :brand")
        params["brand"] = brand
    if tags is not None:
        sets.append("tags = :tags")
        params["tags"] = orjson.dumps(tags).decode()
    sql = f"UPDATE fleet_vehicles SET {', '.join(sets)} WHERE {_KEY} AND status = :expected"  # noqa: S608
    return await conn.execute(sql, params) == 1


async def reschedule(
    conn: Connection, key: VehicleKey, *, expected: Status, at_us: int | None
) -> bool:
    """Ask the carmaker again at `at_us`, or (None) not until someone decides (only while
    the status is still `expected`)."""
    changed = await conn.execute(
        f"UPDATE fleet_vehicles SET next_check_at = :at WHERE {_KEY} AND status = :expected",  # noqa: S608
        {**key.params(), "expected": str(expected), "at": at_us},
    )
    return changed == 1


async def list_vehicles(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    conditions: Sequence[Condition] = (),
    after_vin: str | None = None,
    limit: int,
) -> list[FleetVehicle]:
    """Up to `limit` vehicles of the application by VIN, those after `after_vin` (keyset
    paging): the primary key (environment, application_id, vin) is the order, so a page
    costs an index range scan however large the fleet."""
    table = fleet_vehicles
    where = [
        table.c.environment == str(environment),
        table.c.application_id == application_id,
        *conditions,
    ]
    if after_vin is not None:
        where.append(table.c.vin > after_vin)
    statement = select(table).where(and_(*where)).order_by(table.c.vin).limit(limit)
    return [FleetVehicle.from_row(row) for row in await conn.fetch_all(statement)]


@dataclass(frozen=True, slots=True)
class Claimed:
    key: VehicleKey
    brand: str
    status: Status
    since_us: int


async def claim_due(db: Database, *, now_us: int, lease_until_us: int, limit: int) -> list[Claimed]:
    """Take up to `limit` vehicles the worker must look at, for every application.

    Claiming moves `next_check_at` to the end of the lease in the same statement, so no
    other worker sees them as due until then (a worker that dies loses nothing: its
    vehicles become due again when the lease ends). On PostgreSQL rows another worker is
    claiming are skipped (FOR UPDATE SKIP LOCKED); SQLite has a single writer.
    """
    lock = " FOR UPDATE SKIP LOCKED" if db.dialect == "postgresql" else ""
    sql = f"""
    UPDATE fleet_vehicles SET next_check_at = :lease_until
    WHERE (environment, application_id, vin) IN (
        SELECT environment, application_id, vin FROM fleet_vehicles
        WHERE next_check_at IS NOT NULL AND next_check_at <= :now
          AND status IN ('pending', 'revoking', 'canceling')
        ORDER BY next_check_at LIMIT :limit{lock}
    )
    RETURNING environment, application_id, vin, brand, status, updated_at
    """  # noqa: S608 - only the fixed lock clause is interpolated
    async with db.transaction() as conn:
        rows = await conn.fetch_all(
            sql, {"lease_until": lease_until_us, "now": now_us, "limit": limit}
        )
    return [
        Claimed(
            key=VehicleKey(Environment(row["environment"]), row["application_id"], row["vin"]),
            brand=row["brand"],
            status=Status(row["status"]),
            since_us=row["updated_at"],
        )
        for row in rows
    ]


async def list_pending(
    conn: Connection,
    *,
    environment: Environment,
    brands: Sequence[str] | None,
    after: tuple[int, str, str] | None,
    limit: int,
) -> list[FleetVehicle]:
    """Pending clearances awaiting a decision, of `brands` (None: every brand), oldest
    request first; `after` is the (updated_at, application_id, vin) of the last one seen."""
    table = fleet_vehicles
    conditions: list[ColumnElement[bool]] = [
        table.c.environment == str(environment),
        table.c.status == str(Status.pending),
    ]
    if brands is not None:
        conditions.append(table.c.brand.in_(list(brands)))
    if after is not None:
        conditions.append(
            tuple_(table.c.updated_at, table.c.application_id, table.c.vin) > tuple_(*after)
        )
    statement = (
        select(table)
        .where(and_(*conditions))
        .order_by(table.c.updated_at, table.c.application_id, table.c.vin)
        .limit(limit)
    )
    return [FleetVehicle.from_row(row) for row in await conn.fetch_all(statement)]


async def get_auto_approving_provider_name(
    conn: Connection | Database, *, environment: Environment, brand: str
) -> str | None:
    """The name of an active data provider of `brand` that approves its clearance
    requests unseen (`auto_approve_clearances`, autoport.ingestion.providers), or None.
    Read here, not through the ingestion package: ingestion's provider routes decide
    clearances through this package, so it must not depend on them."""
    rows = await conn.fetch_all(
        "SELECT name, brands FROM ingest_providers WHERE environment = :environment "
        "AND revoked_at IS NULL AND auto_approve_clearances ORDER BY created_at, id",
        {"environment": str(environment)},
    )
    for row in rows:
        if brand in orjson.loads(row["brands"]):
            return str(row["name"])
    return None
