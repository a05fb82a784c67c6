"""SQL of the read side. Every read is scoped by environment and VIN; the service has
checked the caller's right to the VIN before calling."""

from __future__ import annotations

from autoport.kit.db import Connection, Database, Row

_VEHICLE = "SELECT brand, document FROM vehicles WHERE environment = :environment AND vin = :vin"


async def get_vehicle(db: Database, *, environment: str, vin: str) -> Row | None:
    return await db.fetch_one(_VEHICLE, {"environment": environment, "vin": vin})


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
