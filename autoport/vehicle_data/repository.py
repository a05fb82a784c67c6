"""SQL of the read side. Every read is scoped by environment and VIN; the service has
checked the caller's right to the VIN before calling."""

from __future__ import annotations

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


async def vehicle(db: Database, *, environment: str, vin: str) -> Row | None:
    return await db.fetch_one(_VEHICLE, {"environment": environment, "vin": vin})


async def history(
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


async def prune_history(conn: Connection, *, cutoff_us: int, batch: int) -> int:
    return await conn.execute(_PRUNE, {"cutoff": cutoff_us, "batch": batch})
