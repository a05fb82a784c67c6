"""The data-point history: written by ingestion, read by the history API, the owner's
export and the console's charts, sealed into chunks by the history worker.

Where a point is (docs/vehicle-data.md, History storage):

- `history_hot`: points received less than `history_seal_after_seconds` ago (and late
  or re-delivered points until the next seal), one row each;
- `history_chunks`: everything older, column-wise and compressed per series and time
  range (autoport.history.codec);
- `vehicle_data_history`: the old row-per-point table, until the worker has moved its
  rows (autoport.history.migration).

Readers merge the three. A point is identified by (series, timestamp, value digest): a
re-delivered point is a no-op in hot, dropped when it is sealed next to its first copy,
and never shown twice meanwhile. Points stored at the same timestamp keep the order they
were stored in: the old table's first, then the chunks' (in chunk order), then hot's
(by id); sealing and moving keep that order.

Readers read the old table, then hot, then the chunks: a seal or a move committing in
between makes a point appear twice (dropped as a duplicate), never disappear.
"""

from __future__ import annotations

import bisect
import hashlib
import operator
import secrets
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from autoport.history import codec, partitions, repository
from autoport.kit.db import Connection, Database, Row

FAR_PAST = -(2**62)
FAR_FUTURE = 2**62

# A series' names: (environment, vin, capability, property).
Names = tuple[str, str, str, str]

# Sources, in the order their points at one timestamp were stored.
OLD, CHUNK, HOT = 0, 1, 2


def series_id(environment: str, vin: str, capability: str, prop: str) -> int:
    """A series' id: 63 bits of blake2b of its names, so a writer needs no lookup. Two
    series with the same id (a chance of 1 in 10^6 at ten million series) fail the
    ingestion of the newer one (primary key) rather than mix their points."""
    names = "\0".join((environment, vin, capability, prop)).encode()
    return int.from_bytes(hashlib.blake2b(names, digest_size=8).digest(), "big") >> 1


def digest_int(hex_digest: str) -> int:
    """Ingestion's digest (blake2b-64 of the value, hex) as the signed BIGINT stored."""
    return int.from_bytes(bytes.fromhex(hex_digest), "big", signed=True)


def digest_hex(digest: int) -> str:
    return (digest & (2**64 - 1)).to_bytes(8, "big").hex()


def digest_of(value: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(value.encode(), digest_size=8).digest(), "big", signed=True
    )


@dataclass(slots=True)
class Point:
    timestamp: int
    value: str  # the JSON text as accepted
    received_at: int
    source: int  # OLD, CHUNK or HOT
    order: int  # within its source: a row id, or the position in its chunk
    digest: int | None = None  # computed when needed for chunk points

    def key(self) -> int:
        if self.digest is None:
            self.digest = digest_of(self.value)
        return self.digest

    @property
    def row_id(self) -> int | None:
        """The live charts' position of a point stored in a row (old table or hot)."""
        return None if self.source == CHUNK else self.order


def _from_row(row: Row, source: int) -> Point:
    digest = row["digest"]
    value = str(row["value"])
    return Point(
        int(row["timestamp"]),
        value,
        int(row["received_at"]),
        source,
        int(row["id"]),
        digest_int(digest) if isinstance(digest, str) else int(digest),
    )


# --- writing -------------------------------------------------------------------------------


async def append(
    conn: Connection,
    *,
    environment: str,
    vin: str,
    received_at: int,
    points: Sequence[tuple[str, str, int, str, str]],
) -> None:
    """Store accepted points of one vehicle: (capability, property, timestamp, digest
    hex, value). A point already stored (same series, timestamp and value) is a no-op."""
    if not points:
        return
    series: dict[int, tuple[int, str, str]] = {}
    rows = []
    for capability, prop, timestamp, digest, value in points:
        sid = series_id(environment, vin, capability, prop)
        series.setdefault(sid, (sid, capability, prop))
        rows.append((sid, timestamp, digest_int(digest), value))
    await repository.add_points(
        conn,
        environment=environment,
        vin=vin,
        received_at=received_at,
        series=list(series.values()),
        points=rows,
    )


async def append_many(
    conn: Connection,
    *,
    environment: str,
    received_at: int,
    deliveries: Sequence[tuple[str, Sequence[tuple[str, str, int, str, str]]]],
) -> None:
    """`append` for many vehicles at once, (vin, points) each: one statement on
    PostgreSQL for an ingestion request of many vehicles, where `append` is one each."""
    series: dict[int, tuple[int, str, str, str]] = {}
    rows = []
    for vin, points in deliveries:
        for capability, prop, timestamp, digest, value in points:
            sid = series_id(environment, vin, capability, prop)
            series.setdefault(sid, (sid, vin, capability, prop))
            rows.append((sid, timestamp, digest_int(digest), value))
    if rows:
        await repository.add_points_of_many(
            conn,
            environment=environment,
            received_at=received_at,
            series=list(series.values()),
            points=rows,
        )


# --- decoded chunks, kept in process ---------------------------------------------------------


class _Chunks:
    """Decoded chunks by their id (random, new for every rewrite: an entry is never
    stale), least recently used out past `points` points in all."""

    def __init__(self, points: int = 400_000) -> None:
        self.limit = points
        self.size = 0
        self.entries: OrderedDict[int, codec.Decoded] = OrderedDict()

    def get(self, chunk_id: int) -> codec.Decoded | None:
        found = self.entries.get(chunk_id)
        if found is not None:
            self.entries.move_to_end(chunk_id)
        return found

    def put(self, chunk_id: int, decoded: codec.Decoded) -> None:
        # As tuples: the collector stops tracking a tuple of ints and strings, so a full
        # collection no longer walks the 1.2 million items of a full cache (lists: +20-130
        # ms a collection, the page's p99).
        decoded = codec.Decoded(
            tuple(decoded.timestamps), tuple(decoded.received), tuple(decoded.values)
        )
        self.entries[chunk_id] = decoded
        self.size += len(decoded.timestamps)
        while self.size > self.limit and len(self.entries) > 1:
            _, old = self.entries.popitem(last=False)
            self.size -= len(old.timestamps)


DECODED = _Chunks()


class ChunkGone(Exception):
    """A chunk was rewritten between reading its row and its data: read again."""


async def _decoded(
    conn: Connection, series: int, meta: Row, *, keep: bool = True, listed: bool = False
) -> codec.Decoded:
    """A chunk's points; kept in process when `keep` (not for an export, which reads
    each chunk once and would push out what pages read again). `listed`: `meta` holds
    the chunk's data (else it is read)."""
    chunk_id = int(meta["id"])
    found = DECODED.get(chunk_id)
    if found is not None:
        return found
    data = meta["data"] if listed else None
    if data is None:
        data = await repository.get_chunk_data(
            conn,
            series_id=series,
            last_ts=int(meta["last_ts"]),
            received_max=int(meta["received_max"]),
            id=chunk_id,
        )
    if data is None:
        raise ChunkGone
    decoded = codec.decode(bytes(data))
    if keep:
        DECODED.put(chunk_id, decoded)
    return decoded


def _chunk_points(decoded: codec.Decoded) -> list[Point]:
    return [
        Point(timestamp, value, received, CHUNK, position)
        for position, (timestamp, received, value) in enumerate(
            zip(decoded.timestamps, decoded.received, decoded.values, strict=True)
        )
    ]


# --- is the old table empty? -----------------------------------------------------------------

# Per Database: once seen empty it stays empty (nothing writes it any more).
_OLD_EMPTY: weakref.WeakKeyDictionary[Database, bool] = weakref.WeakKeyDictionary()


def old_table_gone(db: Database) -> bool:
    """This process has seen the old table empty or gone (it stays so)."""
    return bool(_OLD_EMPTY.get(db))


def forget_old_table(db: Database) -> None:
    _OLD_EMPTY[db] = True


def old_point(row: Row) -> Point:
    """A row of the old table as a point (its order: the row id)."""
    return _from_row(row, OLD)


async def _old_rows_left(db: Database) -> bool:
    if _OLD_EMPTY.get(db):
        return False
    if await repository.legacy_exists(db.reader):
        return True
    _OLD_EMPTY[db] = True
    return False


# --- pages, newest first ---------------------------------------------------------------------


_STORED = operator.attrgetter("timestamp", "source", "order")


def _newest_first(points: list[Point], boundary: int) -> list[Point]:
    """Points at or after `boundary`, newest first, each timestamp's in reverse stored
    order, without duplicates (the first stored copy stays). Only a timestamp whose
    points come from more than one source can hold a duplicate."""
    kept = [point for point in points if point.timestamp >= boundary]
    kept.sort(key=_STORED, reverse=True)  # mostly in order already: a linear pass
    out: list[Point] = []
    start, count = 0, len(kept)
    while start < count:
        end = start + 1
        timestamp = kept[start].timestamp
        while end < count and kept[end].timestamp == timestamp:
            end += 1
        if end - start > 1 and kept[start].source != kept[end - 1].source:
            seen: set[int] = set()
            stored: list[Point] = []
            for point in reversed(kept[start:end]):
                if point.key() not in seen:
                    seen.add(point.key())
                    stored.append(point)
            out.extend(reversed(stored))
        else:
            out.extend(kept[start:end])
        start = end
    return out


def _chunk_newest(decoded: codec.Decoded, low: int, high: int, need: int) -> list[Point]:
    """The chunk's points in [low, high], newest first: the newest `need` of them and
    the rest of the oldest timestamp taken (a timestamp's points stay together)."""
    stamps = decoded.timestamps
    start = bisect.bisect_left(stamps, low)
    end = bisect.bisect_right(stamps, high)
    if end - start > need:
        start = bisect.bisect_left(stamps, stamps[end - need], start, end)
    values, received = decoded.values, decoded.received
    return [
        Point(stamps[i], values[i], received[i], CHUNK, i) for i in range(end - 1, start - 1, -1)
    ]


async def _newest(
    db: Database, series: int, names: Names, low: int, high: int, fetch: int
) -> tuple[list[Point], bool]:
    """At least `fetch` points (when there are) of [low, high], newest first, each
    timestamp's points complete; and whether that is all of them."""
    reader = db.reader
    found: list[Point] = []
    cut = FAR_PAST  # below the newest source cut short, points may be missing
    complete = True

    async def rows_of(rows: list[Row], source: int, at: Any) -> None:
        nonlocal cut, complete
        found.extend(_from_row(row, source) for row in rows)
        if len(rows) >= fetch:
            last = int(rows[-1]["timestamp"])
            # The rest of the last timestamp's points, so that group is whole.
            lowest = min(int(row["id"]) for row in rows if int(row["timestamp"]) == last)
            found.extend(
                _from_row(row, source) for row in await at(last) if int(row["id"]) < lowest
            )
            cut, complete = max(cut, last), False

    if await _old_rows_left(db):
        await rows_of(
            await repository.list_legacy_desc(reader, names=names, low=low, high=high, limit=fetch),
            OLD,
            lambda ts: repository.list_legacy_at(reader, names=names, timestamp=ts),
        )
    await rows_of(
        await repository.list_hot_desc(reader, series_id=series, low=low, high=high, limit=fetch),
        HOT,
        lambda ts: repository.list_hot_at(reader, series_id=series, timestamp=ts),
    )
    taken = 0
    before = FAR_FUTURE
    # Chunks are listed with their data: as many as the points still wanted need, going
    # by the chunks read so far (two at first: a page of a full chunk's size spans two).
    want, listed, seen = 2, 0, 0
    while taken < fetch:
        metas = await repository.list_chunks_desc(
            reader, series_id=series, low=low, high=high, before=before, limit=want
        )
        for meta in metas:
            listed += 1
            seen += int(meta["count"])
            decoded = await _decoded(reader, series, meta, listed=True)
            inside = _chunk_newest(decoded, low, high, fetch - taken)
            found.extend(inside)
            taken += len(inside)
            before = int(meta["last_ts"])
            if taken >= fetch:
                # A timestamp's points are never split between chunks: whole down to the
                # oldest point taken from the last chunk read.
                cut, complete = max(cut, inside[-1].timestamp), False
                break
        if sum(1 for meta in metas if int(meta["last_ts"]) < high) < want:
            break  # no older chunk left
        want = min(32, -(-(fetch - taken) * listed // max(seen, 1)) + 1)
    return _newest_first(found, cut), complete


async def page(
    db: Database,
    *,
    environment: str,
    vin: str,
    capability: str,
    prop: str,
    since: int | None,
    until: int | None,
    cursor: tuple[int, str | None] | None,
    limit: int,
) -> tuple[list[Point], tuple[int, str] | None]:
    """Up to `limit` points of [since, until), newest first, after `cursor` (the
    (timestamp, digest) of the previous page's last point; digest None: everything at
    that timestamp was served); and the cursor of the next page, if there is one."""
    series = series_id(environment, vin, capability, prop)
    names = (environment, vin, capability, prop)
    low = FAR_PAST if since is None else since
    high = FAR_FUTURE if until is None else until - 1
    if cursor is not None:
        high = min(high, cursor[0])
    # With a cursor, its own point (at least) is read again and passed over.
    fetch = limit + 1 + (cursor is not None)
    while True:
        try:
            found, complete = await _newest(db, series, names, low, high, fetch)
        except ChunkGone:
            continue
        points = _after(found, cursor)
        if len(points) > limit or complete:
            break
        fetch *= 4
    if len(points) <= limit:
        return points, None
    last = points[limit - 1]
    return points[:limit], (last.timestamp, digest_hex(last.key()))


def _after(points: list[Point], cursor: tuple[int, str | None] | None) -> list[Point]:
    """The points after the cursor's one (newest-first order)."""
    if cursor is None:
        return points
    timestamp, digest = cursor
    start = 0
    while start < len(points) and points[start].timestamp == timestamp:
        start += 1
    if digest is not None:
        for index in range(start):
            if digest_hex(points[index].key()) == digest:
                return points[index + 1 :]
    return points[start:]


# --- the live charts' reads --------------------------------------------------------------------


async def position(db: Database) -> int:
    """The newest stored row's position (hot ids continue the old table's)."""
    newest = await repository.last_hot_id(db.reader)
    if not newest and await _old_rows_left(db):
        newest = await repository.last_legacy_id(db.reader)
    return newest


async def stored_after(
    db: Database,
    *,
    environment: str,
    vin: str,
    capability: str,
    prop: str,
    after_id: int,
    limit: int,
) -> list[tuple[int, int, str]]:
    """(position, timestamp, value) of the points stored after `after_id`, in the order
    they were stored. A re-delivered point is not new: a hot row whose point is in the
    old table or a chunk already (where its first copy is) is left out."""
    names = (environment, vin, capability, prop)
    series = series_id(*names)
    old: list[Row] = []
    if await _old_rows_left(db):
        old = await repository.list_legacy_after_id(
            db.reader, names=names, after_id=after_id, limit=limit
        )
    hot = await repository.list_hot_after_id(
        db.reader, series_id=series, after_id=after_id, limit=limit
    )
    if hot:
        stored = await _stored_before(db, series, names, [int(r["timestamp"]) for r in hot])
        hot = [r for r in hot if (int(r["timestamp"]), digest_of(str(r["value"]))) not in stored]
    found = sorted((int(r["id"]), int(r["timestamp"]), str(r["value"])) for r in old + hot)
    return found[:limit]


async def _stored_before(
    db: Database, series: int, names: tuple[str, str, str, str], stamps: list[int]
) -> set[tuple[int, int]]:
    """(timestamp, digest) of the points at `stamps` in the chunks and the old table."""
    low, high, wanted = min(stamps), max(stamps), set(stamps)
    while True:
        try:
            found = set()
            for meta in await repository.list_chunks_overlapping(
                db.reader, series_id=series, low=low, high=high
            ):
                decoded = await _decoded(db.reader, series, meta)
                found |= {
                    (timestamp, digest_of(value))
                    for timestamp, value in zip(decoded.timestamps, decoded.values, strict=True)
                    if timestamp in wanted
                }
            break
        except ChunkGone:
            continue
    if await _old_rows_left(db):
        for row in await repository.list_legacy_range(
            db.reader, names=names, after=low - 1, upto=high, limit=2**62
        ):
            found.add((int(row["timestamp"]), digest_int(str(row["digest"]))))
    return found


async def resume_old_cursor(db: Database, *, timestamp: int, row_id: int) -> tuple[int, str | None]:
    """The (timestamp, digest) cursor of a cursor handed out before 0020, (timestamp,
    row id; signed, so the row was the series' own): exact while that row is in the old
    table. Once it has been moved, the digest is None: the page goes on below the
    timestamp, and a point stored at that very microsecond and not served yet is passed
    over (docs/vehicle-data.md, Cursors)."""
    row = await repository.get_legacy_row(db.reader, id=row_id)
    if row is None or int(row["timestamp"]) != timestamp:
        return timestamp, None
    return timestamp, str(row["digest"])


# --- the whole history of a vehicle, for its owner's export ---------------------------------


@dataclass(slots=True)
class Stored:
    capability: str
    property: str
    timestamp: int
    digest: str
    value: str
    received_at: int


def _ascending(points: list[Point]) -> list[Point]:
    """By (timestamp, digest), each (timestamp, digest) once: the first stored copy."""
    points.sort(key=lambda p: (p.timestamp, digest_hex(p.key()), p.source, p.order))
    kept: list[Point] = []
    for point in points:
        if kept and kept[-1].timestamp == point.timestamp and kept[-1].digest == point.digest:
            continue
        kept.append(point)
    return kept


async def _window(
    conn: Connection, series: int, names: Names, old: bool, after: int, upto: int, rows: int
) -> tuple[int, list[Point]]:
    """The series' points in (after, end], by (timestamp, digest), for an `end` up to
    `upto` that keeps the window to about `rows` rows of the old table and of hot (each
    timestamp's rows whole). The old table first, then hot, then the chunks with their
    data (one statement): a move or a seal committing in between shows a point twice
    (dropped here), never hides one."""
    end = upto
    points: list[Point] = []
    if old:
        found = await repository.list_legacy_range(
            conn, names=names, after=after, upto=end, limit=rows
        )
        if len(found) == rows:
            end = int(found[-1]["timestamp"])
            seen = {int(row["id"]) for row in found}
            found += [
                row
                for row in await repository.list_legacy_at(conn, names=names, timestamp=end)
                if int(row["id"]) not in seen
            ]
        points += [_from_row(row, OLD) for row in found]
    found = await repository.list_hot_range(
        conn, series_id=series, after=after, upto=end, limit=rows
    )
    if len(found) == rows:
        end = int(found[-1]["timestamp"])
        seen = {int(row["id"]) for row in found}
        found += [
            row
            for row in await repository.list_hot_at(conn, series_id=series, timestamp=end)
            if int(row["id"]) not in seen
        ]
        points = [p for p in points if p.timestamp <= end]
    points += [_from_row(row, HOT) for row in found]
    for data in await repository.list_chunk_data(conn, series_id=series, low=after + 1, high=end):
        points += [p for p in _chunk_points(codec.decode(data)) if after < p.timestamp <= end]
    return end, _ascending(points)


async def _series_ascending(
    conn: Connection, series: int, names: Names, old: bool, page_rows: int
) -> AsyncIterator[list[Point]]:
    """Every point of one series by (timestamp, digest), in windows of timestamps of
    about a chunk or `page_rows` rows each."""
    after = FAR_PAST - 1
    ends: list[int] = []  # the next chunks' ends, listed ahead (the windows' bounds only)
    while after < FAR_FUTURE:
        ends = [end for end in ends if end > after]
        if not ends:
            ends = [
                int(meta["last_ts"])
                for meta in await repository.list_chunks_asc(
                    conn, series_id=series, after=after, limit=32
                )
            ] or [FAR_FUTURE]
        after, points = await _window(conn, series, names, old, after, ends[0], page_rows)
        yield points


async def vehicle_history(
    conn: Connection, *, environment: str, vin: str, page_rows: int
) -> AsyncIterator[list[Stored]]:
    """Every stored point of the vehicle, by (capability, property, timestamp, digest),
    in pages (one chunk's span, or about `page_rows` points). The old table's properties
    are listed before the series: a move committing in between names its series."""
    named: set[tuple[str, str]] = set()
    old = await repository.legacy_exists(conn)
    if old:
        named |= {
            (str(row["capability"]), str(row["property"]))
            for row in await repository.list_legacy_properties(
                conn, environment=environment, vin=vin
            )
        }
    named |= {
        (str(row["capability"]), str(row["property"]))
        for row in await repository.list_series_of_vehicle(conn, environment=environment, vin=vin)
    }
    for capability, prop in sorted(named):
        names = (environment, vin, capability, prop)
        async for points in _series_ascending(conn, series_id(*names), names, old, page_rows):
            if points:
                yield [
                    Stored(
                        capability,
                        prop,
                        p.timestamp,
                        digest_hex(p.key()),
                        p.value,
                        p.received_at,
                    )
                    for p in points
                ]


# --- sealing ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Plan:
    """A series' change: chunks to delete (their rows) and to add (their values)."""

    delete: list[Row]
    add: list[dict[str, Any]]


def _split(points: list[Point], target: int) -> list[list[Point]]:
    """Pieces of about `target` points, never parting one timestamp's points."""
    if len(points) <= target * 3 // 2:
        return [points]
    pieces: list[list[Point]] = []
    start = 0
    while start < len(points):
        end = min(start + target, len(points))
        if len(points) - end < target // 2:
            end = len(points)
        while end < len(points) and points[end].timestamp == points[end - 1].timestamp:
            end += 1
        pieces.append(points[start:end])
        start = end
    return pieces


def chunk_values(series: int, points: list[Point]) -> dict[str, Any]:
    """The row of a new chunk holding `points` (in chunk order)."""
    return {
        "series_id": series,
        "first_ts": points[0].timestamp,
        "last_ts": points[-1].timestamp,
        "received_max": max(p.received_at for p in points),
        "count": len(points),
        "id": secrets.randbits(63),
        "data": codec.encode(
            [p.timestamp for p in points],
            [p.received_at for p in points],
            [p.value for p in points],
        ),
    }


def _merged(existing: list[Point], new: list[Point], *, new_first: bool) -> list[Point]:
    """One chunk's points: both lists in stored order at each timestamp (the old
    table's points were stored before any chunk's, hot's after), duplicates dropped."""
    new_rank = 0 if new_first else 2
    for point in new:
        point.source = new_rank
    for point in existing:
        point.source = 1
    stamps = {p.timestamp for p in new}
    merged = sorted(existing + new, key=lambda p: (p.timestamp, p.source, p.order))
    kept: list[Point] = []
    seen: set[tuple[int, int]] = set()
    for point in merged:
        if point.timestamp in stamps:
            key = (point.timestamp, point.key())
            if key in seen:
                continue
            seen.add(key)
        kept.append(point)
    return kept


async def plan_merge(
    conn: Connection, series: int, new: list[Point], *, target: int, new_first: bool
) -> Plan:
    """How to bring `new` (sorted by timestamp, then stored order) into the series'
    chunks, keeping their ranges apart: a point goes to the chunk with the latest start
    at or before it; past a full chunk's end it starts new chunks; before every chunk,
    too. A small chunk takes the points after it (so a slow series' chunks grow), on
    PostgreSQL only those that arrived on the UTC day of its partition: grown with a
    later day's points, it would move to that day's partition and leave its old copy's
    space in a partition that takes no more rows, free space until the day is dropped."""
    low, high = new[0].timestamp, new[-1].timestamp
    metas = list(
        await repository.list_chunks_overlapping(conn, series_id=series, low=low, high=high)
    )
    before = await repository.get_chunk_before(conn, series_id=series, before=low)
    if before is not None:
        metas.insert(0, before)
    starts = [int(m["first_ts"]) for m in metas]
    partitioned = conn.dialect == "postgresql"
    assigned: dict[int, list[Point]] = {}
    loose: list[Point] = []
    for point in new:
        index = bisect.bisect_right(starts, point.timestamp) - 1
        if index < 0:
            loose.append(point)
            continue
        meta = metas[index]
        small = int(meta["count"]) < target // 2 and (
            not partitioned
            or partitions.day_of(point.received_at) == partitions.day_of(int(meta["received_max"]))
        )
        if point.timestamp > int(meta["last_ts"]) and not small:
            loose.append(point)
        else:
            assigned.setdefault(index, []).append(point)
    plan = Plan([], [])
    for index, points in assigned.items():
        meta = metas[index]
        existing = _chunk_points(await _decoded(conn, series, meta))
        merged = _merged(existing, points, new_first=new_first)
        plan.delete.append(meta)
        plan.add += [chunk_values(series, piece) for piece in _split(merged, target)]
    if loose:
        # Runs of loose points between chunks become chunks of their own.
        run: list[Point] = []
        for point in loose:
            index = bisect.bisect_right(starts, point.timestamp)
            if run and bisect.bisect_right(starts, run[-1].timestamp) != index:
                plan.add += [chunk_values(series, p) for p in _split(run, target)]
                run = []
            run.append(point)
        plan.add += [chunk_values(series, p) for p in _split(run, target)]
    return plan


class SealConflict(Exception):
    """Another worker changed the series meanwhile; it is sealed again next round."""


async def apply_plan(conn: Connection, series: int, plan: Plan) -> None:
    for meta in plan.delete:
        deleted = await repository.delete_chunk(
            conn, series_id=series, last_ts=int(meta["last_ts"]), id=int(meta["id"])
        )
        if deleted != 1:
            raise SealConflict
    for values in plan.add:
        await repository.add_chunk(conn, values)


async def seal_series(db: Database, series: int, *, before: int, target: int) -> int:
    """Move the series' hot points received before `before` into its chunks; returns
    how many. The encoding runs outside any transaction; the transaction checks that
    nothing it replaces has changed (else SealConflict, nothing written)."""
    rows = await repository.list_hot_of_series(db.reader, series_id=series, before=before)
    if not rows:
        return 0
    new = [_from_row(row, HOT) for row in rows]
    plan = await plan_merge(db.reader, series, new, target=target, new_first=False)
    await partitions.ensure(db, [values["received_max"] for values in plan.add])
    async with db.transaction() as conn:
        await apply_plan(conn, series, plan)
        if await repository.delete_hot(conn, ids=[p.order for p in new]) != len(new):
            raise SealConflict
    return len(new)


async def seal(
    db: Database,
    *,
    now_us: int,
    seal_after_us: int,
    grace_us: int,
    target: int,
    series_per_round: int = 32,
    lease_us: int = 300_000_000,
) -> int:
    """One round: the series with a hot point received more than `seal_after_us` ago
    (up to `series_per_round`), each sealed up to `grace_us` ago. Several workers may
    run it at once: each seals the series it claimed. Returns the points sealed."""
    candidates = await repository.list_sealable(
        db.reader, before=now_us - seal_after_us, limit=series_per_round
    )
    if not candidates:
        return 0
    async with db.transaction() as conn:
        claimed = await repository.claim_series(
            conn, ids=candidates, now=now_us, until=now_us + lease_us
        )
    sealed = 0
    for series in claimed:
        try:
            sealed += await seal_series(db, series, before=now_us - grace_us, target=target)
        except (SealConflict, ChunkGone):
            pass
        finally:
            async with db.transaction() as conn:
                await repository.release_series(conn, series_id=series)
    return sealed


async def delete_vehicle(conn: Connection, *, environment: str, vin: str) -> int:
    """Delete the vehicle's whole history (an operator's rebrand starts it anew, in the
    caller's transaction); how many points."""
    return await repository.delete_vehicle(conn, environment=environment, vin=vin)
