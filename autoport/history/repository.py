"""SQL of the history: series, hot points, chunks, and the old row-per-point table
(`vehicle_data_history`) while its rows are moved (autoport.history.migration)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from autoport.kit.db import Connection, Row

# --- writes of ingestion -----------------------------------------------------------------

_ADD_SERIES = """
INSERT INTO history_series (id, environment, vin, capability, property)
VALUES (:id, :environment, :vin, :capability, :property)
ON CONFLICT (environment, vin, capability, property) DO NOTHING
"""
_ADD_HOT = """
INSERT INTO history_hot (series_id, timestamp, digest, received_at, value)
VALUES (:series_id, :timestamp, :digest, :received_at, :value)
ON CONFLICT (series_id, timestamp, digest) DO NOTHING
"""
# PostgreSQL: one statement (one round trip) for the series and the points of a
# delivery. A series id whose names differ (a 63-bit hash collision) fails the primary
# key instead of mixing two series.
_ADD_PG = """
WITH series AS (
    INSERT INTO history_series (id, environment, vin, capability, property)
    SELECT DISTINCT s.id, :environment, :vin, s.capability, s.property
    FROM unnest(CAST(:series_ids AS bigint[]), CAST(:capabilities AS text[]),
                CAST(:properties AS text[])) AS s(id, capability, property)
    ON CONFLICT (environment, vin, capability, property) DO NOTHING
)
INSERT INTO history_hot (series_id, timestamp, digest, received_at, value)
SELECT p.series_id, p.timestamp, p.digest, :received_at, p.value
FROM unnest(CAST(:series_ids AS bigint[]), CAST(:timestamps AS bigint[]),
            CAST(:digests AS bigint[]), CAST(:values AS text[]))
     AS p(series_id, timestamp, digest, value)
ON CONFLICT (series_id, timestamp, digest) DO NOTHING
"""


async def add_points(
    conn: Connection,
    *,
    environment: str,
    vin: str,
    received_at: int,
    series: Sequence[tuple[int, str, str]],
    points: Sequence[tuple[int, int, int, str]],
) -> None:
    """`series`: (id, capability, property); `points`: (series id, timestamp, digest,
    value)."""
    if conn.dialect == "postgresql":
        names = {sid: (capability, prop) for sid, capability, prop in series}
        await conn.execute(
            _ADD_PG,
            {
                "environment": environment,
                "vin": vin,
                "received_at": received_at,
                "series_ids": [p[0] for p in points],
                "capabilities": [names[p[0]][0] for p in points],
                "properties": [names[p[0]][1] for p in points],
                "timestamps": [p[1] for p in points],
                "digests": [p[2] for p in points],
                "values": [p[3] for p in points],
            },
        )
        return
    await conn.execute_many(
        _ADD_SERIES,
        [
            {"id": sid, "environment": environment, "vin": vin, "capability": c, "property": p}
            for sid, c, p in series
        ],
    )
    await conn.execute_many(
        _ADD_HOT,
        [
            {
                "series_id": sid,
                "timestamp": timestamp,
                "digest": digest,
                "received_at": received_at,
                "value": value,
            }
            for sid, timestamp, digest, value in points
        ],
    )


# --- reads ---------------------------------------------------------------------------------

# Newest first within [low, high]; ties by id, newest first.
_HOT_DESC = """
SELECT id, timestamp, digest, received_at, value FROM history_hot
WHERE series_id = :series_id AND timestamp >= :low AND timestamp <= :high
ORDER BY timestamp DESC, id DESC LIMIT :limit
"""
_HOT_AT = """
SELECT id, timestamp, digest, received_at, value FROM history_hot
WHERE series_id = :series_id AND timestamp = :timestamp ORDER BY id DESC
"""
_HOT_AFTER_ID = """
SELECT id, timestamp, value FROM history_hot
WHERE series_id = :series_id AND id > :after_id ORDER BY id LIMIT :limit
"""
_HOT_RANGE = """
SELECT id, timestamp, digest, received_at, value FROM history_hot
WHERE series_id = :series_id AND timestamp > :after AND timestamp <= :upto
ORDER BY timestamp, id
"""
_HOT_ASC = """
SELECT id, timestamp, digest, received_at, value FROM history_hot
WHERE series_id = :series_id AND timestamp > :after ORDER BY timestamp, id LIMIT :limit
"""
_LAST_HOT_ID = "SELECT max(id) FROM history_hot"

_LEGACY_WHERE = (
    "environment = :environment AND vin = :vin AND capability = :capability "
    "AND property = :property"
)
_LEGACY_DESC = f"""
SELECT id, timestamp, digest, received_at, value FROM vehicle_data_history
WHERE {_LEGACY_WHERE} AND timestamp >= :low AND timestamp <= :high
ORDER BY timestamp DESC, id DESC LIMIT :limit
"""  # noqa: S608 - constant text
_LEGACY_AT = f"""
SELECT id, timestamp, digest, received_at, value FROM vehicle_data_history
WHERE {_LEGACY_WHERE} AND timestamp = :timestamp ORDER BY id DESC
"""  # noqa: S608
_LEGACY_AFTER_ID = f"""
SELECT id, timestamp, value FROM vehicle_data_history
WHERE {_LEGACY_WHERE} AND id > :after_id ORDER BY id LIMIT :limit
"""  # noqa: S608
# Ascending by (timestamp, digest), the unique index's order: the export's keyset.
_LEGACY_RANGE = f"""
SELECT id, timestamp, digest, received_at, value FROM vehicle_data_history
WHERE {_LEGACY_WHERE} AND timestamp <= :upto
  AND (timestamp > :after_ts OR (timestamp = :after_ts AND digest > :after_digest))
ORDER BY timestamp, digest LIMIT :limit
"""  # noqa: S608
_LEGACY_ANY = "SELECT 1 FROM vehicle_data_history LIMIT 1"
_LEGACY_PROPERTIES = """
SELECT DISTINCT capability, property FROM vehicle_data_history
WHERE environment = :environment AND vin = :vin
"""

_CHUNKS_DESC = """
SELECT id, first_ts, last_ts, count, received_max FROM history_chunks
WHERE series_id = :series_id AND last_ts >= :low AND first_ts <= :high AND last_ts < :before
ORDER BY last_ts DESC LIMIT :limit
"""
_CHUNKS_ASC = """
SELECT id, first_ts, last_ts, count, received_max FROM history_chunks
WHERE series_id = :series_id AND last_ts > :after
ORDER BY last_ts LIMIT :limit
"""
_CHUNKS_OVERLAPPING = """
SELECT id, first_ts, last_ts, count, received_max FROM history_chunks
WHERE series_id = :series_id AND last_ts >= :low AND first_ts <= :high ORDER BY last_ts
"""
_CHUNK_BEFORE = """
SELECT id, first_ts, last_ts, count, received_max FROM history_chunks
WHERE series_id = :series_id AND last_ts < :before ORDER BY last_ts DESC LIMIT 1
"""
_CHUNK_DATA = """
SELECT data FROM history_chunks
WHERE series_id = :series_id AND last_ts = :last_ts AND id = :id
"""
_SERIES_OF_VEHICLE = """
SELECT id, capability, property FROM history_series
WHERE environment = :environment AND vin = :vin
"""


def _legacy_params(names: tuple[str, str, str, str]) -> dict[str, Any]:
    environment, vin, capability, prop = names
    return {"environment": environment, "vin": vin, "capability": capability, "property": prop}


async def list_hot_desc(
    conn: Connection, *, series_id: int, low: int, high: int, limit: int
) -> list[Row]:
    params = {"series_id": series_id, "low": low, "high": high, "limit": limit}
    return await conn.fetch_all(_HOT_DESC, params)


async def list_hot_at(conn: Connection, *, series_id: int, timestamp: int) -> list[Row]:
    return await conn.fetch_all(_HOT_AT, {"series_id": series_id, "timestamp": timestamp})


async def list_hot_after_id(
    conn: Connection, *, series_id: int, after_id: int, limit: int
) -> list[Row]:
    params = {"series_id": series_id, "after_id": after_id, "limit": limit}
    return await conn.fetch_all(_HOT_AFTER_ID, params)


async def list_hot_range(conn: Connection, *, series_id: int, after: int, upto: int) -> list[Row]:
    params = {"series_id": series_id, "after": after, "upto": upto}
    return await conn.fetch_all(_HOT_RANGE, params)


async def list_hot_asc(conn: Connection, *, series_id: int, after: int, limit: int) -> list[Row]:
    params = {"series_id": series_id, "after": after, "limit": limit}
    return await conn.fetch_all(_HOT_ASC, params)


async def last_hot_id(conn: Connection) -> int:
    return int(await conn.fetch_value(_LAST_HOT_ID) or 0)


async def legacy_exists(conn: Connection) -> bool:
    return await conn.fetch_one(_LEGACY_ANY) is not None


async def list_legacy_desc(
    conn: Connection, *, names: tuple[str, str, str, str], low: int, high: int, limit: int
) -> list[Row]:
    params = _legacy_params(names) | {"low": low, "high": high, "limit": limit}
    return await conn.fetch_all(_LEGACY_DESC, params)


async def list_legacy_at(
    conn: Connection, *, names: tuple[str, str, str, str], timestamp: int
) -> list[Row]:
    return await conn.fetch_all(_LEGACY_AT, _legacy_params(names) | {"timestamp": timestamp})


async def list_legacy_after_id(
    conn: Connection, *, names: tuple[str, str, str, str], after_id: int, limit: int
) -> list[Row]:
    params = _legacy_params(names) | {"after_id": after_id, "limit": limit}
    return await conn.fetch_all(_LEGACY_AFTER_ID, params)


async def list_legacy_range(
    conn: Connection,
    *,
    names: tuple[str, str, str, str],
    after: tuple[int, str],
    upto: int,
    limit: int,
) -> list[Row]:
    params = _legacy_params(names) | {
        "after_ts": after[0],
        "after_digest": after[1],
        "upto": upto,
        "limit": limit,
    }
    return await conn.fetch_all(_LEGACY_RANGE, params)


async def list_legacy_properties(conn: Connection, *, environment: str, vin: str) -> list[Row]:
    return await conn.fetch_all(_LEGACY_PROPERTIES, {"environment": environment, "vin": vin})


async def list_series_of_vehicle(conn: Connection, *, environment: str, vin: str) -> list[Row]:
    return await conn.fetch_all(_SERIES_OF_VEHICLE, {"environment": environment, "vin": vin})


async def list_chunks_desc(
    conn: Connection, *, series_id: int, low: int, high: int, before: int, limit: int
) -> list[Row]:
    params = {"series_id": series_id, "low": low, "high": high, "before": before, "limit": limit}
    return await conn.fetch_all(_CHUNKS_DESC, params)


async def list_chunks_asc(conn: Connection, *, series_id: int, after: int, limit: int) -> list[Row]:
    params = {"series_id": series_id, "after": after, "limit": limit}
    return await conn.fetch_all(_CHUNKS_ASC, params)


async def list_chunks_overlapping(
    conn: Connection, *, series_id: int, low: int, high: int
) -> list[Row]:
    params = {"series_id": series_id, "low": low, "high": high}
    return await conn.fetch_all(_CHUNKS_OVERLAPPING, params)


async def get_chunk_before(conn: Connection, *, series_id: int, before: int) -> Row | None:
    return await conn.fetch_one(_CHUNK_BEFORE, {"series_id": series_id, "before": before})


async def get_chunk_data(
    conn: Connection, *, series_id: int, last_ts: int, id: int
) -> bytes | None:
    row = await conn.fetch_one(_CHUNK_DATA, {"series_id": series_id, "last_ts": last_ts, "id": id})
    return None if row is None else bytes(row["data"])


# --- sealing -------------------------------------------------------------------------------

_SEALABLE = """
SELECT DISTINCT series_id FROM history_hot WHERE received_at < :before LIMIT :limit
"""
# A claim with a lease: committed at once, so no lock is held while the chunks are
# encoded; SKIP LOCKED on PostgreSQL so that workers claiming at the same moment take
# different series instead of queueing.
_CLAIM_PG = """
UPDATE history_series SET sealing_until = :until
WHERE id IN (
    SELECT id FROM history_series WHERE id = ANY(CAST(:ids AS bigint[]))
    AND sealing_until < :now ORDER BY id FOR UPDATE SKIP LOCKED
)
RETURNING id
"""
_CLAIM_SQLITE = """
UPDATE history_series SET sealing_until = :until
WHERE id = :id AND sealing_until < :now RETURNING id
"""
_RELEASE = "UPDATE history_series SET sealing_until = 0 WHERE id = :id"
_HOT_OF_SERIES = """
SELECT id, timestamp, digest, received_at, value FROM history_hot
WHERE series_id = :series_id AND received_at < :before ORDER BY timestamp, id
"""
_DELETE_HOT_PG = "DELETE FROM history_hot WHERE id = ANY(CAST(:ids AS bigint[]))"
_DELETE_HOT_SQLITE = "DELETE FROM history_hot WHERE id IN (SELECT value FROM json_each(:ids))"
_DELETE_CHUNK = """
DELETE FROM history_chunks WHERE series_id = :series_id AND last_ts = :last_ts AND id = :id
"""
_ADD_CHUNK = """
INSERT INTO history_chunks (series_id, last_ts, received_max, first_ts, count, id, data)
VALUES (:series_id, :last_ts, :received_max, :first_ts, :count, :id, :data)
"""


async def list_sealable(conn: Connection, *, before: int, limit: int) -> list[int]:
    rows = await conn.fetch_all(_SEALABLE, {"before": before, "limit": limit})
    return [int(row["series_id"]) for row in rows]


async def claim_series(conn: Connection, *, ids: Sequence[int], now: int, until: int) -> list[int]:
    if conn.dialect == "postgresql":
        rows = await conn.fetch_all(_CLAIM_PG, {"ids": list(ids), "now": now, "until": until})
        return [int(row["id"]) for row in rows]
    claimed = []
    for sid in ids:
        if await conn.fetch_one(_CLAIM_SQLITE, {"id": sid, "now": now, "until": until}):
            claimed.append(sid)
    return claimed


async def release_series(conn: Connection, *, series_id: int) -> None:
    await conn.execute(_RELEASE, {"id": series_id})


async def list_hot_of_series(conn: Connection, *, series_id: int, before: int) -> list[Row]:
    return await conn.fetch_all(_HOT_OF_SERIES, {"series_id": series_id, "before": before})


async def delete_hot(conn: Connection, *, ids: Sequence[int]) -> int:
    if conn.dialect == "postgresql":
        return await conn.execute(_DELETE_HOT_PG, {"ids": list(ids)})
    return await conn.execute(_DELETE_HOT_SQLITE, {"ids": orjson.dumps(list(ids)).decode()})


async def delete_chunk(conn: Connection, *, series_id: int, last_ts: int, id: int) -> int:
    return await conn.execute(_DELETE_CHUNK, {"series_id": series_id, "last_ts": last_ts, "id": id})


async def add_chunk(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_ADD_CHUNK, values)


# --- retention -----------------------------------------------------------------------------

# A series' vehicle decides its brand: retention per brand joins the vehicle's row.
_OF_BRAND = """
EXISTS (SELECT 1 FROM history_series s JOIN vehicles v
        ON v.environment = s.environment AND v.vin = s.vin
        WHERE s.id = {table}.series_id AND v.brand = :brand)
"""
_OF_BRANDS = """
EXISTS (SELECT 1 FROM history_series s JOIN vehicles v
        ON v.environment = s.environment AND v.vin = s.vin
        WHERE s.id = {table}.series_id AND v.brand IN ({names}))
"""


def _brand_filter(
    table: str, brand: str | None, except_brands: Sequence[str]
) -> tuple[str, dict[str, Any]]:
    if brand is not None:
        return " AND " + _OF_BRAND.format(table=table), {"brand": brand}
    if not except_brands:
        return "", {}
    names = ", ".join(f":b{i}" for i in range(len(except_brands)))
    params = {f"b{i}": name for i, name in enumerate(except_brands)}
    return " AND NOT " + _OF_BRANDS.format(table=table, names=names), params


async def prune_chunks(
    conn: Connection,
    *,
    cutoff_us: int,
    batch: int,
    brand: str | None = None,
    except_brands: Sequence[str] = (),
) -> tuple[int, int]:
    """Delete up to `batch` whole chunks whose newest point arrived before `cutoff_us`;
    returns (chunks, points) deleted."""
    where, params = _brand_filter("history_chunks", brand, except_brands)
    sql = f"""
DELETE FROM history_chunks WHERE (series_id, last_ts, received_max) IN (
    SELECT series_id, last_ts, received_max FROM history_chunks
    WHERE received_max < :cutoff{where} LIMIT :batch
) RETURNING count
"""  # noqa: S608 - only numbered placeholders are interpolated
    rows = await conn.fetch_all(sql, {"cutoff": cutoff_us, "batch": batch, **params})
    return len(rows), sum(int(row["count"]) for row in rows)


async def prune_hot(
    conn: Connection,
    *,
    cutoff_us: int,
    batch: int,
    brand: str | None = None,
    except_brands: Sequence[str] = (),
) -> int:
    """Hot points past retention (only while sealing is behind)."""
    where, params = _brand_filter("history_hot", brand, except_brands)
    sql = f"""
DELETE FROM history_hot WHERE id IN (
    SELECT id FROM history_hot WHERE received_at < :cutoff{where} LIMIT :batch
)
"""  # noqa: S608
    return await conn.execute(sql, {"cutoff": cutoff_us, "batch": batch, **params})


async def prune_legacy(
    conn: Connection,
    *,
    cutoff_us: int,
    batch: int,
    brand: str | None = None,
    except_brands: Sequence[str] = (),
) -> int:
    """Rows of the old table past retention (until they are all moved)."""
    if brand is not None:
        where = (
            " AND EXISTS (SELECT 1 FROM vehicles v WHERE v.environment = h.environment "
            "AND v.vin = h.vin AND v.brand = :brand)"
        )
        params: dict[str, Any] = {"brand": brand}
    elif except_brands:
        names = ", ".join(f":b{i}" for i in range(len(except_brands)))
        where = (  # placeholders only
            " AND NOT EXISTS (SELECT 1 FROM vehicles v WHERE v.environment = h.environment "  # noqa: S608
            f"AND v.vin = h.vin AND v.brand IN ({names}))"
        )
        params = {f"b{i}": name for i, name in enumerate(except_brands)}
    else:
        where, params = "", {}
    sql = f"""
DELETE FROM vehicle_data_history WHERE id IN (
    SELECT h.id FROM vehicle_data_history h WHERE h.received_at < :cutoff{where} LIMIT :batch
)
"""  # noqa: S608
    return await conn.execute(sql, {"cutoff": cutoff_us, "batch": batch, **params})


# --- a vehicle's whole history -------------------------------------------------------------

_DELETE_HOT_OF_VEHICLE = """
DELETE FROM history_hot WHERE series_id IN (
    SELECT id FROM history_series WHERE environment = :environment AND vin = :vin
)
"""
_DELETE_CHUNKS_OF_VEHICLE = """
DELETE FROM history_chunks WHERE series_id IN (
    SELECT id FROM history_series WHERE environment = :environment AND vin = :vin
) RETURNING count
"""
_DELETE_SERIES_OF_VEHICLE = (
    "DELETE FROM history_series WHERE environment = :environment AND vin = :vin"
)
_DELETE_LEGACY_OF_VEHICLE = (
    "DELETE FROM vehicle_data_history WHERE environment = :environment AND vin = :vin"
)


async def delete_vehicle(conn: Connection, *, environment: str, vin: str) -> int:
    """Every stored point of the vehicle (hot, sealed, not yet migrated) and its series;
    how many points. Hot rows go first: a sealer moving them into a chunk meanwhile
    either finds them gone (its transaction fails, nothing written) or commits before
    this one's chunk statement, which then sees and deletes its chunk."""
    params = {"environment": environment, "vin": vin}
    deleted = await conn.execute(_DELETE_HOT_OF_VEHICLE, params)
    deleted += sum(
        int(row["count"]) for row in await conn.fetch_all(_DELETE_CHUNKS_OF_VEHICLE, params)
    )
    deleted += await conn.execute(_DELETE_LEGACY_OF_VEHICLE, params)
    await conn.execute(_DELETE_SERIES_OF_VEHICLE, params)
    return deleted
