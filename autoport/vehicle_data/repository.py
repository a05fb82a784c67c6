"""SQL of the read side. Every read is scoped by environment and VIN; the service has
checked the caller's right to the VIN before calling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autoport.kit.db import Connection, Database, Row

_VEHICLE = "SELECT brand, document FROM vehicles WHERE environment = :environment AND vin = :vin"

# Newest first; (timestamp, id) is the cursor. Absent bounds are passed as extremes so
# that one SQL string (one prepared statement) serves every combination.
_HISTORY = """
SELECT id, timestamp, value FROM vehicle_data_history
WHERE environment = :environment AND vin = :vin AND capability = :capability
  AND property = :property AND timestamp >= :since AND timestamp < :until
  AND (timestamp < :cursor_ts OR (timestamp = :cursor_ts AND id < :cursor_id))
ORDER BY timestamp DESC, id DESC
LIMIT :limit
"""

_PRUNE = """
DELETE FROM vehicle_data_history WHERE id IN (
    SELECT id FROM vehicle_data_history WHERE received_at < :cutoff LIMIT :batch
)
"""

FAR_PAST = -(2**62)
FAR_FUTURE = 2**62


async def get_vehicle(db: Database, *, environment: str, vin: str) -> Row | None:
    return await db.fetch_one(_VEHICLE, {"environment": environment, "vin": vin})


async def list_history(
    db: Database,
    *,
    environment: str,
    vin: str,
    capability: str,
    prop: str,
    since: int | None,
    until: int | None,
    cursor: tuple[int, int] | None,
    limit: int,
) -> list[Row]:
    params: dict[str, Any] = {
        "environment": environment,
        "vin": vin,
        "capability": capability,
        "property": prop,
        "since": FAR_PAST if since is None else since,
        "until": FAR_FUTURE if until is None else until,
        "cursor_ts": FAR_FUTURE if cursor is None else cursor[0],
        "cursor_id": FAR_FUTURE if cursor is None else cursor[1],
        "limit": limit,
    }
    return await db.fetch_all(_HISTORY, params)


_HISTORY_AFTER_ID = """
SELECT id, timestamp, value FROM vehicle_data_history
WHERE environment = :environment AND vin = :vin AND capability = :capability
  AND property = :property AND id > :after_id
ORDER BY id
LIMIT :limit
"""


async def list_history_after_id(
    db: Database,
    *,
    environment: str,
    vin: str,
    capability: str,
    prop: str,
    after_id: int,
    limit: int,
) -> list[Row]:
    """The points stored after row `after_id`, in the order they were stored (a live
    view's cursor: a point arriving with an older or equal timestamp is not missed)."""
    params = {
        "environment": environment,
        "vin": vin,
        "capability": capability,
        "property": prop,
        "after_id": after_id,
        "limit": limit,
    }
    return await db.fetch_all(_HISTORY_AFTER_ID, params)


async def prune_history(conn: Connection, *, cutoff_us: int, batch: int) -> int:
    return await conn.execute(_PRUNE, {"cutoff": cutoff_us, "batch": batch})


# Per-brand retention: the vehicle's brand decides (history rows carry none). Both
# statements walk the received_at index for the oldest rows first.
_PRUNE_BRAND = """
DELETE FROM vehicle_data_history WHERE id IN (
    SELECT h.id FROM vehicle_data_history h
    JOIN vehicles v ON v.environment = h.environment AND v.vin = h.vin
    WHERE v.brand = :brand AND h.received_at < :cutoff LIMIT :batch
)
"""


async def prune_history_of_brand(
    conn: Connection, *, brand: str, cutoff_us: int, batch: int
) -> int:
    return await conn.execute(_PRUNE_BRAND, {"brand": brand, "cutoff": cutoff_us, "batch": batch})


async def prune_history_except(
    conn: Connection, *, brands: Sequence[str], cutoff_us: int, batch: int
) -> int:
    """The default retention: every row but those of `brands` (which have their own)."""
    if not brands:
        return await prune_history(conn, cutoff_us=cutoff_us, batch=batch)
    names = ", ".join(f":b{i}" for i in range(len(brands)))
    sql = f"""
DELETE FROM vehicle_data_history WHERE id IN (
    SELECT h.id FROM vehicle_data_history h WHERE h.received_at < :cutoff AND NOT EXISTS (
        SELECT 1 FROM vehicles v WHERE v.environment = h.environment AND v.vin = h.vin
        AND v.brand IN ({names})
    ) LIMIT :batch
)
"""  # noqa: S608 - only numbered placeholders are interpolated
    params: dict[str, Any] = {"cutoff": cutoff_us, "batch": batch}
    params |= {f"b{i}": brand for i, brand in enumerate(brands)}
    return await conn.execute(sql, params)


# --- the freshness window (autoport.vehicle_data.freshness) -------------------------

# Claims the fetch when the last one is older than the window and no other process holds
# the lease; one statement, so two processes never both claim it.
_CLAIM_FETCH = """
INSERT INTO vehicle_fetches
    (environment, vin, properties, fetched_at, lease_until, status, detail, title)
VALUES (:environment, :vin, :properties, 0, :lease_until, 0, '', NULL)
ON CONFLICT (environment, vin, properties) DO UPDATE SET lease_until = :lease_until
WHERE vehicle_fetches.fetched_at < :stale_before AND vehicle_fetches.lease_until < :now
RETURNING lease_until
"""
_FETCH_OUTCOME = (
    "SELECT fetched_at, status, detail, title FROM vehicle_fetches "
    "WHERE environment = :environment AND vin = :vin AND properties = :properties"
)
_RECORD_FETCH = """
UPDATE vehicle_fetches SET fetched_at = :fetched_at, lease_until = 0, status = :status,
    detail = :detail, title = :title
WHERE environment = :environment AND vin = :vin AND properties = :properties
"""
_RELEASE_FETCH = (
    "UPDATE vehicle_fetches SET lease_until = 0 "
    "WHERE environment = :environment AND vin = :vin AND properties = :properties"
)
_FORGET_FETCHES = "DELETE FROM vehicle_fetches WHERE environment = :environment AND vin = :vin"


async def claim_fetch(
    db: Database,
    *,
    environment: str,
    vin: str,
    properties: str,
    now_us: int,
    stale_before_us: int,
    lease_until_us: int,
) -> bool:
    async with db.transaction() as conn:
        row = await conn.fetch_one(
            _CLAIM_FETCH,
            {
                "environment": environment,
                "vin": vin,
                "properties": properties,
                "now": now_us,
                "stale_before": stale_before_us,
                "lease_until": lease_until_us,
            },
        )
    return row is not None


async def get_fetch_outcome(
    db: Database, *, environment: str, vin: str, properties: str
) -> Row | None:
    return await db.reader.fetch_one(
        _FETCH_OUTCOME, {"environment": environment, "vin": vin, "properties": properties}
    )


async def record_fetch(
    db: Database,
    *,
    environment: str,
    vin: str,
    properties: str,
    fetched_at_us: int,
    status: int,
    detail: str,
    title: str | None,
) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            _RECORD_FETCH,
            {
                "environment": environment,
                "vin": vin,
                "properties": properties,
                "fetched_at": fetched_at_us,
                "status": status,
                "detail": detail,
                "title": title,
            },
        )


async def release_fetch(db: Database, *, environment: str, vin: str, properties: str) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            _RELEASE_FETCH, {"environment": environment, "vin": vin, "properties": properties}
        )


async def delete_fetches(conn: Connection, *, environment: str, vin: str) -> None:
    """The next pull of `vin` asks its data source again, in every process."""
    await conn.execute(_FORGET_FETCHES, {"environment": environment, "vin": vin})
