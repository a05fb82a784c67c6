"""What the history holds, counted in every place a point can be (for tests)."""

from __future__ import annotations

from autoport.kit.db import Database

_BY_VIN = """
SELECT vin, sum(n) AS n FROM (
    SELECT s.vin AS vin, count(*) AS n FROM history_hot h
    JOIN history_series s ON s.id = h.series_id GROUP BY s.vin
    UNION ALL
    SELECT s.vin AS vin, sum(c.count) AS n FROM history_chunks c
    JOIN history_series s ON s.id = c.series_id GROUP BY s.vin
    UNION ALL
    SELECT vin, count(*) AS n FROM vehicle_data_history GROUP BY vin
) counted GROUP BY vin ORDER BY vin
"""


async def points_by_vin(db: Database) -> dict[str, int]:
    return {str(row["vin"]): int(row["n"]) for row in await db.fetch_all(_BY_VIN)}


async def points(db: Database) -> int:
    return sum((await points_by_vin(db)).values())
