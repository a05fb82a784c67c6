"""SQL of the history: series, hot points, chunks, the old row-per-point table
(`vehicle_data_history`) until its rows are moved (autoport.history.migration), and the
history's own state (the move's progress and lease)."""

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
    value). One vehicle's case of `add_points_of_many` (its series named once each)."""
    await add_points_of_many(
        conn,
        environment=environment,
        received_at=received_at,
        series=[(sid, vin, c, p) for sid, c, p in dict.fromkeys(series)],
        points=points,
    )


# PostgreSQL: the series and the points of many vehicles (an ingestion request) in one
# statement (one round trip). A series id whose names differ (a 63-bit hash collision)
# fails the primary key instead of mixing two series.
_ADD_MANY_PG = """
WITH series AS (
    INSERT INTO history_series (id, environment, vin, capability, property)
    SELECT s.id, :environment, s.vin, s.capability, s.property
    FROM unnest(CAST(:series_ids AS bigint[]), CAST(:vins AS text[]),
                CAST(:capabilities AS text[]), CAST(:properties AS text[]))
         AS s(id, vin, capability, property)
    ON CONFLICT (environment, vin, capability, property) DO NOTHING
)
INSERT INTO history_hot (series_id, timestamp, digest, received_at, value)
SELECT p.series_id, p.timestamp, p.digest, :received_at, p.value
FROM unnest(CAST(:point_series AS bigint[]), CAST(:timestamps AS bigint[]),
            CAST(:digests AS bigint[]), CAST(:values AS text[]))
     AS p(series_id, timestamp, digest, value)
ON CONFLICT (series_id, timestamp, digest) DO NOTHING
"""


async def add_points_of_many(
    conn: Connection,
    *,
    environment: str,
    received_at: int,
    series: Sequence[tuple[int, str, str, str]],
    points: Sequence[tuple[int, int, int, str]],
) -> None:
    """`add_points` for many vehicles: `series` (id, vin, capability, property), each
    once; `points` (series id, timestamp, digest, value)."""
    if conn.dialect == "postgresql":
        await conn.execute(
            _ADD_MANY_PG,
            {
                "environment": environment,
                "received_at": received_at,
                "series_ids": [s[0] for s in series],
                "vins": [s[1] for s in series],
                "capabilities": [s[2] for s in series],
                "properties": [s[3] for s in series],
                "point_series": [p[0] for p in points],
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
            for sid, vin, c, p in series
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


async def add_series(
    conn: Connection, *, id: int, environment: str, vin: str, capability: str, prop: str
) -> None:
    await conn.execute(
        _ADD_SERIES,
        {
            "id": id,
            "environment": environment,
            "vin": vin,
            "capability": capability,
            "property": prop,
        },
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
ORDER BY timestamp, id LIMIT :limit
"""
_HOT_ASC = """
SELECT id, timestamp, digest, received_at, value FROM history_hot
WHERE series_id = :series_id AND timestamp > :after ORDER BY timestamp, id LIMIT :limit
"""
_LAST_HOT_ID = "SELECT max(id) FROM history_hot"

# Newest first, with their data (one round trip: a page reads the chunks it lists). The
# chunk holding `high` (the first ending at or after it, if it starts by then) apart from
# those ending before it: one range of the primary key each, where a filter on first_ts
# would walk every newer chunk of the series (on PostgreSQL in every day partition) to a
# cursor deep in the history.
_CHUNKS_DESC = """
SELECT * FROM (
    SELECT id, first_ts, last_ts, count, received_max, data FROM history_chunks
    WHERE series_id = :series_id AND last_ts >= :high AND last_ts >= :low
      AND last_ts < :before
    ORDER BY last_ts LIMIT 1
) AS holding WHERE first_ts <= :high
UNION ALL
SELECT * FROM (
    SELECT id, first_ts, last_ts, count, received_max, data FROM history_chunks
    WHERE series_id = :series_id AND last_ts >= :low AND last_ts < :high AND last_ts < :before
    ORDER BY last_ts DESC LIMIT :limit
) AS older
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
# The chunks and their data in one statement: what it lists is there (the export).
_CHUNKS_WITH_DATA = """
SELECT data FROM history_chunks
WHERE series_id = :series_id AND last_ts >= :low AND first_ts <= :high ORDER BY last_ts
"""
# The whole primary key: on PostgreSQL received_max names the one partition to read.
_CHUNK_DATA = """
SELECT data FROM history_chunks
WHERE series_id = :series_id AND last_ts = :last_ts AND received_max = :received_max
  AND id = :id
"""
_SERIES_OF_VEHICLE = """
SELECT id, capability, property FROM history_series
WHERE environment = :environment AND vin = :vin
"""


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


async def list_hot_range(
    conn: Connection, *, series_id: int, after: int, upto: int, limit: int
) -> list[Row]:
    """Hot points in (after, upto], by (timestamp, id), up to `limit`."""
    params = {"series_id": series_id, "after": after, "upto": upto, "limit": limit}
    return await conn.fetch_all(_HOT_RANGE, params)


async def list_hot_asc(conn: Connection, *, series_id: int, after: int, limit: int) -> list[Row]:
    params = {"series_id": series_id, "after": after, "limit": limit}
    return await conn.fetch_all(_HOT_ASC, params)


async def last_hot_id(conn: Connection) -> int:
    return int(await conn.fetch_value(_LAST_HOT_ID) or 0)


async def list_series_of_vehicle(conn: Connection, *, environment: str, vin: str) -> list[Row]:
    return await conn.fetch_all(_SERIES_OF_VEHICLE, {"environment": environment, "vin": vin})


async def list_chunks_desc(
    conn: Connection, *, series_id: int, low: int, high: int, before: int, limit: int
) -> list[Row]:
    """Chunks overlapping [low, high] and ending before `before`, newest first, with
    their data: the newest `limit` of those ending before `high`, and the one holding
    `high`."""
    params = {"series_id": series_id, "low": low, "high": high, "before": before, "limit": limit}
    rows = await conn.fetch_all(_CHUNKS_DESC, params)
    return sorted(rows, key=lambda row: int(row["last_ts"]), reverse=True)


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


async def list_chunk_data(conn: Connection, *, series_id: int, low: int, high: int) -> list[bytes]:
    """The data of the chunks overlapping [low, high], in order."""
    params = {"series_id": series_id, "low": low, "high": high}
    return [bytes(row["data"]) for row in await conn.fetch_all(_CHUNKS_WITH_DATA, params)]


async def get_chunk_data(
    conn: Connection, *, series_id: int, last_ts: int, received_max: int, id: int
) -> bytes | None:
    params = {"series_id": series_id, "last_ts": last_ts, "received_max": received_max, "id": id}
    row = await conn.fetch_one(_CHUNK_DATA, params)
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


async def add_chunks(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    await conn.execute_many(_ADD_CHUNK, rows)


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
    # SQLite: by rowid, which the index on received_max holds (no lookup of the primary
    # key per chunk).
    key = "rowid" if conn.dialect == "sqlite" else "series_id, last_ts, received_max"
    sql = f"""
DELETE FROM history_chunks WHERE ({key}) IN (
    SELECT {key} FROM history_chunks WHERE received_max < :cutoff{where} LIMIT :batch
) RETURNING count
"""  # noqa: S608 - only numbered placeholders are interpolated
    values = {"cutoff": cutoff_us, "batch": batch, **params}
    if conn.dialect != "sqlite":
        rows = await conn.fetch_all(sql, values)
        return len(rows), sum(int(row["count"]) for row in rows)
    # SQLite built with SECURE_DELETE (Debian's, so this machine's Python) zeroes every
    # page a deleted chunk frees, its overflow pages included: half the CPU of a
    # retention batch and most of its writes. FAST zeroes what is written anyway, so an
    # expired chunk's bytes may stay in free pages until they are reused. Only here: the
    # deletion of a vehicle's history keeps the build's setting.
    before = await conn.fetch_value("PRAGMA secure_delete")
    await conn.execute("PRAGMA secure_delete = FAST")
    try:
        rows = await conn.fetch_all(sql, values)
    finally:
        await conn.execute(f"PRAGMA secure_delete = {int(before)}")
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


# --- the old row-per-point table, until its rows are moved (autoport.history.migration) ---
#
# `vehicle_data_history` (before 0020): one row per point, named by (environment, vin,
# capability, property, timestamp, digest) under a unique index, `digest` as hex text.
# The mover drops it once it has moved its last row, so every read here takes its
# absence for "no rows" (a reader may run into the drop at any moment).

LEGACY = "vehicle_data_history"

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
_LEGACY_RANGE = f"""
SELECT id, timestamp, digest, received_at, value FROM vehicle_data_history
WHERE {_LEGACY_WHERE} AND timestamp > :after AND timestamp <= :upto
ORDER BY timestamp, id LIMIT :limit
"""  # noqa: S608
_LEGACY_ANY = "SELECT 1 FROM vehicle_data_history LIMIT 1"
_LEGACY_MAX_ID = "SELECT max(id) FROM vehicle_data_history"
_LEGACY_PROPERTIES = """
SELECT DISTINCT capability, property FROM vehicle_data_history
WHERE environment = :environment AND vin = :vin
"""
_LEGACY_ROW = "SELECT timestamp, digest FROM vehicle_data_history WHERE id = :id"
_LEGACY_COUNT = "SELECT count(*) FROM vehicle_data_history"
_LEGACY_COLUMNS = (
    "id, environment, vin, capability, property, timestamp, digest, value, received_at"
)
# The mover's batches, in the unique index's order from a key on (a keyset: rows behind
# it are gone, and on PostgreSQL their dead index entries are not walked again).
_LEGACY_FIRST = f"""
SELECT {_LEGACY_COLUMNS} FROM vehicle_data_history
ORDER BY environment, vin, capability, property, timestamp, digest LIMIT :limit
"""  # noqa: S608
_LEGACY_NEXT = f"""
SELECT {_LEGACY_COLUMNS} FROM vehicle_data_history
WHERE (environment, vin, capability, property, timestamp, digest)
    > (:environment, :vin, :capability, :property, :timestamp, :digest)
ORDER BY environment, vin, capability, property, timestamp, digest LIMIT :limit
"""  # noqa: S608
# The rest of one timestamp's rows after a batch's last (a timestamp is never split).
_LEGACY_TIE = f"""
SELECT {_LEGACY_COLUMNS} FROM vehicle_data_history
WHERE {_LEGACY_WHERE} AND timestamp = :timestamp AND digest > :digest
"""  # noqa: S608
_DELETE_LEGACY_PG = "DELETE FROM vehicle_data_history WHERE id = ANY(CAST(:ids AS bigint[]))"
_DELETE_LEGACY_SQLITE = (
    "DELETE FROM vehicle_data_history WHERE id IN (SELECT value FROM json_each(:ids))"
)
_LEGACY_TABLE_PG = "SELECT to_regclass('vehicle_data_history') IS NOT NULL"
_LEGACY_TABLE_SQLITE = (
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'vehicle_data_history'"
)


def legacy_missing(error: BaseException) -> bool:
    """`error` says the old table does not exist (any more)."""
    text = str(error)
    return LEGACY in text and ("no such table" in text or "does not exist" in text)


async def _legacy(conn: Connection, sql: str, params: dict[str, Any] | None = None) -> list[Row]:
    try:
        return await conn.fetch_all(sql, params)
    except Exception as error:
        if legacy_missing(error):
            return []
        raise


def _legacy_params(names: tuple[str, str, str, str]) -> dict[str, Any]:
    environment, vin, capability, prop = names
    return {"environment": environment, "vin": vin, "capability": capability, "property": prop}


async def legacy_table_exists(conn: Connection) -> bool:
    sql = _LEGACY_TABLE_PG if conn.dialect == "postgresql" else _LEGACY_TABLE_SQLITE
    return bool(await conn.fetch_value(sql))


async def legacy_exists(conn: Connection) -> bool:
    """The old table exists and holds a row."""
    return bool(await _legacy(conn, _LEGACY_ANY))


async def count_legacy(conn: Connection) -> int:
    rows = await _legacy(conn, _LEGACY_COUNT)
    return int(rows[0][0]) if rows else 0


async def last_legacy_id(conn: Connection) -> int:
    rows = await _legacy(conn, _LEGACY_MAX_ID)
    return int(rows[0][0] or 0) if rows else 0


async def get_legacy_row(conn: Connection, *, id: int) -> Row | None:
    rows = await _legacy(conn, _LEGACY_ROW, {"id": id})
    return rows[0] if rows else None


async def list_legacy_desc(
    conn: Connection, *, names: tuple[str, str, str, str], low: int, high: int, limit: int
) -> list[Row]:
    params = _legacy_params(names) | {"low": low, "high": high, "limit": limit}
    return await _legacy(conn, _LEGACY_DESC, params)


async def list_legacy_at(
    conn: Connection, *, names: tuple[str, str, str, str], timestamp: int
) -> list[Row]:
    return await _legacy(conn, _LEGACY_AT, _legacy_params(names) | {"timestamp": timestamp})


async def list_legacy_after_id(
    conn: Connection, *, names: tuple[str, str, str, str], after_id: int, limit: int
) -> list[Row]:
    params = _legacy_params(names) | {"after_id": after_id, "limit": limit}
    return await _legacy(conn, _LEGACY_AFTER_ID, params)


async def list_legacy_range(
    conn: Connection, *, names: tuple[str, str, str, str], after: int, upto: int, limit: int
) -> list[Row]:
    """Rows in (after, upto], by (timestamp, id), up to `limit`."""
    params = _legacy_params(names) | {"after": after, "upto": upto, "limit": limit}
    return await _legacy(conn, _LEGACY_RANGE, params)


async def list_legacy_properties(conn: Connection, *, environment: str, vin: str) -> list[Row]:
    return await _legacy(conn, _LEGACY_PROPERTIES, {"environment": environment, "vin": vin})


async def list_legacy_batch(
    conn: Connection, *, after: tuple[str, str, str, str, int, str] | None, limit: int
) -> list[Row]:
    """Up to `limit` rows after the key `after` (environment, vin, capability, property,
    timestamp, digest), in the unique index's order."""
    if after is None:
        return await _legacy(conn, _LEGACY_FIRST, {"limit": limit})
    environment, vin, capability, prop, timestamp, digest = after
    params = _legacy_params((environment, vin, capability, prop)) | {
        "timestamp": timestamp,
        "digest": digest,
        "limit": limit,
    }
    return await _legacy(conn, _LEGACY_NEXT, params)


async def list_legacy_tie(
    conn: Connection, *, key: tuple[str, str, str, str, int, str]
) -> list[Row]:
    environment, vin, capability, prop, timestamp, digest = key
    params = _legacy_params((environment, vin, capability, prop)) | {
        "timestamp": timestamp,
        "digest": digest,
    }
    return await _legacy(conn, _LEGACY_TIE, params)


async def delete_legacy(conn: Connection, *, ids: Sequence[int]) -> int:
    if conn.dialect == "postgresql":
        return await conn.execute(_DELETE_LEGACY_PG, {"ids": list(ids)})
    return await conn.execute(_DELETE_LEGACY_SQLITE, {"ids": orjson.dumps(list(ids)).decode()})


async def drop_legacy_if_empty(conn: Connection) -> bool:
    """In the caller's transaction: drop the old table if it holds no row (on
    PostgreSQL waiting 200 ms at most for its lock: readers never queue behind the
    drop for longer). True when it is gone."""
    if not await legacy_table_exists(conn):
        return True
    if conn.dialect == "postgresql":
        await conn.execute("SET LOCAL lock_timeout = '200ms'")
        await conn.execute("LOCK TABLE vehicle_data_history IN ACCESS EXCLUSIVE MODE")
    if await conn.fetch_one(_LEGACY_ANY) is not None:
        return False
    await conn.execute("DROP TABLE vehicle_data_history")
    return True


async def prune_legacy(
    conn: Connection,
    *,
    cutoff_us: int,
    batch: int,
    brand: str | None = None,
    except_brands: Sequence[str] = (),
) -> int:
    """Rows of the old table past retention (while it is there)."""
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
    if await legacy_table_exists(conn):  # until the move of the old table ends
        old = await conn.execute(_DELETE_LEGACY_OF_VEHICLE, params)
        await add_to_state(conn, name="legacy_moved", amount=old)
        deleted += old
    await conn.execute(_DELETE_SERIES_OF_VEHICLE, params)
    return deleted


# --- the history's own state: the move's progress and the mover's lease ------------------

_STATE = "SELECT name, value FROM history_state WHERE name LIKE 'legacy%'"
_SET_STATE = """
INSERT INTO history_state (name, value) VALUES (:name, :value)
ON CONFLICT (name) DO UPDATE SET value = excluded.value
"""
_START_STATE = """
INSERT INTO history_state (name, value) VALUES (:name, :value) ON CONFLICT (name) DO NOTHING
"""
_ADD_TO_STATE = """
UPDATE history_state SET value = CAST(CAST(value AS BIGINT) + :amount AS TEXT)
WHERE name = :name
"""
# The mover's lease: its value is the instant (µs) it runs out; another mover takes it
# only after that, and each batch renews it in its own transaction (a mover that lost
# it writes nothing more).
_CLAIM_LEASE = """
INSERT INTO history_state (name, value) VALUES ('legacy_lease', :until)
ON CONFLICT (name) DO UPDATE SET value = excluded.value
WHERE CAST(history_state.value AS BIGINT) < :now
RETURNING name
"""
_RENEW_LEASE = """
UPDATE history_state SET value = :until WHERE name = 'legacy_lease' AND value = :held
"""
_RELEASE_LEASE = "DELETE FROM history_state WHERE name = 'legacy_lease' AND value = :held"


async def get_state(conn: Connection) -> dict[str, str]:
    """The move's facts (`legacy_*`)."""
    return {str(row["name"]): str(row["value"]) for row in await conn.fetch_all(_STATE)}


async def set_state(conn: Connection, *, name: str, value: str) -> None:
    await conn.execute(_SET_STATE, {"name": name, "value": value})


async def start_state(conn: Connection, values: dict[str, str]) -> None:
    """Set the facts not set yet."""
    for name, value in values.items():
        await conn.execute(_START_STATE, {"name": name, "value": value})


async def delete_state(conn: Connection, *, name: str) -> None:
    await conn.execute("DELETE FROM history_state WHERE name = :name", {"name": name})


async def add_to_state(conn: Connection, *, name: str, amount: int) -> None:
    await conn.execute(_ADD_TO_STATE, {"name": name, "amount": amount})


async def claim_lease(conn: Connection, *, now: int, until: int) -> bool:
    return await conn.fetch_one(_CLAIM_LEASE, {"now": now, "until": str(until)}) is not None


async def renew_lease(conn: Connection, *, held: int, until: int) -> bool:
    return await conn.execute(_RENEW_LEASE, {"held": str(held), "until": str(until)}) == 1


async def release_lease(conn: Connection, *, held: int) -> None:
    await conn.execute(_RELEASE_LEASE, {"held": str(held)})
