"""What the history holds, counted in every place a point can be (for tests)."""

from __future__ import annotations

from autoport.history import repository
from autoport.kit.db import Database

_BY_VIN = """
SELECT vin, sum(n) AS n FROM (
    SELECT s.vin AS vin, count(*) AS n FROM history_hot h
    JOIN history_series s ON s.id = h.series_id GROUP BY s.vin
    UNION ALL
    SELECT s.vin AS vin, sum(c.count) AS n FROM history_chunks c
    JOIN history_series s ON s.id = c.series_id GROUP BY s.vin
    {old}
) counted GROUP BY vin ORDER BY vin
"""
_OLD = "UNION ALL SELECT vin, count(*) AS n FROM vehicle_data_history GROUP BY vin"


async def points_by_vin(db: Database) -> dict[str, int]:
    """Points per VIN: hot rows, chunks' counts, and the old table's rows while it is
    there (duplicates across them counted twice)."""
    old = _OLD if await repository.legacy_table_exists(db.reader) else ""
    rows = await db.fetch_all(_BY_VIN.format(old=old))
    return {str(row["vin"]): int(row["n"]) for row in rows}


async def points(db: Database) -> int:
    return sum((await points_by_vin(db)).values())
