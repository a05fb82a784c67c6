"""Readers answer exactly as the row-per-point storage did, before, during and after the
move of an upgraded installation's old table.

Every delivery (a car's properties, failures, an array property, points stored at the
same timestamp, late points, re-delivered points) is written to a reference table, the
old storage as it was (its insert and its queries kept here, nowhere else), and to the
history: in the first steps into the old table `vehicle_data_history` (an installation
before 0020), then, after the upgrade, through autoport.history. Meanwhile, at random
moments, seals (into chunks, late points merged into sealed ranges, duplicates of
sealed points) and batches of the mover (old rows into chunks, autoport.history.migration)
run. At checkpoints every page of every property (several page sizes and windows,
following the cursors to the end, with a seal and a move between two pages), the
owner's whole export, and the console's charts (series, track, and the live poll of the
points stored since its previous answer) are compared with the reference, value for
value. At the end the old table is gone and the answers are still the same.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from autoport.history import migration, repository
from autoport.history import service as history
from autoport.kit.clock import to_iso
from autoport.kit.db import Database
from autoport.sandbox import charts
from tests.history import legacy

ENV = "sandbox"  # the console's charts read the sandbox environment
VIN = "WBA00000000000002"
REFERENCE = "reference_history"
START = 1_767_225_600_000_000
TARGET = 40  # small chunks: many boundaries, splits and merges in a short test

# --- the old storage, as it was ---------------------------------------------------------

_OLD_PAGE = f"""
SELECT id, timestamp, value FROM {REFERENCE}
WHERE environment = :environment AND vin = :vin AND capability = :capability
  AND property = :property AND timestamp >= :since AND timestamp < :until
  AND (timestamp < :cursor_ts OR (timestamp = :cursor_ts AND id < :cursor_id))
ORDER BY timestamp DESC, id DESC
LIMIT :limit
"""  # noqa: S608
_OLD_AFTER_ID = f"""
SELECT id, timestamp, value FROM {REFERENCE}
WHERE environment = :environment AND vin = :vin AND capability = :capability
  AND property = :property AND id > :after_id
ORDER BY id
LIMIT :limit
"""  # noqa: S608
_OLD_EXPORT = f"""
SELECT capability, property, timestamp, digest, value, received_at
FROM {REFERENCE} WHERE environment = :environment AND vin = :vin
ORDER BY capability, property, timestamp, digest
"""  # noqa: S608


async def _old_rows(
    db: Database,
    key: str,
    since: int | None,
    until: int | None,
    cursor: tuple[int, int],
    limit: int,
) -> list[Any]:
    capability, _, prop = key.partition(".")
    return await db.fetch_all(
        _OLD_PAGE,
        {
            "environment": ENV,
            "vin": VIN,
            "capability": capability,
            "property": prop,
            "since": history.FAR_PAST if since is None else since,
            "until": history.FAR_FUTURE if until is None else until,
            "cursor_ts": cursor[0],
            "cursor_id": cursor[1],
            "limit": limit,
        },
    )


async def old_pages(
    db: Database, key: str, since: int | None, until: int | None, limit: int
) -> list[list[str]]:
    cursor = (history.FAR_FUTURE, history.FAR_FUTURE)
    pages = []
    while True:
        rows = await _old_rows(db, key, since, until, cursor, limit + 1)
        pages.append([str(row["value"]) for row in rows[:limit]])
        if len(rows) <= limit:
            return pages
        cursor = (int(rows[limit - 1]["timestamp"]), int(rows[limit - 1]["id"]))


async def old_export(db: Database) -> list[tuple[Any, ...]]:
    rows = await db.fetch_all(_OLD_EXPORT, {"environment": ENV, "vin": VIN})
    return [tuple(row[i] for i in range(6)) for row in rows]


def _data(value: str) -> Any:
    wrapper = orjson.loads(value)
    return wrapper.get("data") if isinstance(wrapper, dict) else None


async def old_series(
    db: Database, after_id: int | None, limit: int
) -> tuple[dict[str, list[tuple[float, float]]], int]:
    """The console's chart series as the old storage drew them (charts.series before
    0020): the newest `limit` points, or those stored after row `after_id`."""
    answer: dict[str, list[tuple[float, float]]] = {}
    last_id = after_id or 0
    for name, key in charts.SERIES.items():
        capability, _, prop = key.partition(".")
        if after_id is None:
            cursor = (history.FAR_FUTURE, history.FAR_FUTURE)
            rows = list(reversed(await _old_rows(db, key, None, None, cursor, limit)))
        else:
            rows = await db.fetch_all(
                _OLD_AFTER_ID,
                {
                    "environment": ENV,
                    "vin": VIN,
                    "capability": capability,
                    "property": prop,
                    "after_id": after_id,
                    "limit": limit,
                },
            )
        points = []
        for row in rows:
            last_id = max(last_id, int(row["id"]))
            value = charts._number(_data(str(row["value"])))
            if value is None:
                continue
            if name in ("battery", "fuel"):
                value = round(value * 100, 2)
            points.append((int(row["timestamp"]) / 1_000_000, value))
        answer[name] = points
    return answer, last_id


async def old_track(db: Database, limit: int) -> charts.Track | None:
    cursor = (history.FAR_FUTURE, history.FAR_FUTURE)
    rows = reversed(await _old_rows(db, charts.POSITION, None, None, cursor, limit))
    positions = []
    for row in rows:
        data = _data(str(row["value"]))
        if isinstance(data, dict):
            positions.append((float(data["latitude"]), float(data["longitude"])))
    return charts.track_of(positions)


# --- the new storage's answers ------------------------------------------------------------


async def new_pages(
    db: Database,
    key: str,
    since: int | None,
    until: int | None,
    limit: int,
    between: Any = None,
) -> list[list[str]]:
    capability, _, prop = key.partition(".")
    cursor: tuple[int, str | None] | None = None
    pages = []
    while True:
        points, cursor = await history.page(
            db,
            environment=ENV,
            vin=VIN,
            capability=capability,
            prop=prop,
            since=since,
            until=until,
            cursor=cursor,
            limit=limit,
        )
        pages.append([point.value for point in points])
        if cursor is None:
            return pages
        if between is not None:
            await between()


async def new_export(db: Database) -> list[tuple[Any, ...]]:
    found = []
    async for page in history.vehicle_history(db.reader, environment=ENV, vin=VIN, page_rows=7):
        found += [
            (p.capability, p.property, p.timestamp, p.digest, p.value, p.received_at) for p in page
        ]
    return found


# --- the points -------------------------------------------------------------------------


def _value(key: str, at: int, rng: random.Random, step: int) -> Any:
    own = to_iso(at)
    if rng.random() < 0.05:
        return {"failure": {"reason": "unknown", "description": "no answer"}, "timestamp": own}
    if key == "charging.battery_level":
        return {"data": round(0.9 - step * 0.0007, 4), "timestamp": own}
    if key == "vehicle_location.coordinates":
        return {
            "data": {
                "latitude": round(48.1 + rng.uniform(-0.01, 0.01), 6),
                "longitude": round(11.5 + rng.uniform(-0.01, 0.01), 6),
            },
            "timestamp": own,
        }
    if key == "diagnostics.speed":
        return {
            "data": {"unit": "kilometers_per_hour", "value": rng.randint(0, 130)},
            "timestamp": own,
        }
    if key == "diagnostics.odometer":
        return {"data": {"unit": "kilometers", "value": 1200 + step * 0.013}, "timestamp": own}
    if key == "charging.status":
        return {"data": rng.choice(["charging", "not_charging"]), "timestamp": own}
    # doors.locks: an array property, each wrapper with its own timestamp.
    return [
        {
            "data": {"location": side, "lock_state": rng.choice(["locked", "unlocked"])},
            "timestamp": to_iso(at - rng.randint(0, 5_000_000)),
        }
        for side in ("front_left", "front_right")
    ]


KEYS = (
    "charging.battery_level",
    "vehicle_location.coordinates",
    "diagnostics.speed",
    "diagnostics.odometer",
    "charging.status",
    "doors.locks",
)


@dataclass
class History:
    """Writes each delivery to the reference and to the history (the old table before
    the upgrade), as ingestion does: one received_at per delivery."""

    db: Database
    upgraded: bool = False
    sent: list[tuple[str, int, str]] = field(default_factory=list)

    async def deliver(self, points: list[tuple[str, int, Any]], received_at: int) -> None:
        rows = []
        for key, at, value in points:
            text = value if isinstance(value, str) else orjson.dumps(value).decode()
            digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
            capability, _, prop = key.partition(".")
            rows.append((capability, prop, at, digest, text))
            self.sent.append((key, at, text))
        old_rows = [
            {
                "environment": ENV,
                "vin": VIN,
                "capability": c,
                "property": p,
                "timestamp": t,
                "digest": d,
                "value": v,
                "received_at": received_at,
            }
            for c, p, t, d, v in rows
        ]
        async with self.db.transaction() as conn:
            await legacy.insert(conn, old_rows, REFERENCE)
            if self.upgraded:
                await history.append(
                    conn, environment=ENV, vin=VIN, received_at=received_at, points=rows
                )
            else:
                await legacy.insert(conn, old_rows)


async def seal_all(db: Database, before: int) -> int:
    sealed = 0
    for key in KEYS:
        capability, _, prop = key.partition(".")
        sid = history.series_id(ENV, VIN, capability, prop)
        sealed += await history.seal_series(db, sid, before=before, target=TARGET)
    return sealed


@dataclass
class Charts:
    """The console's live poll, on both sides: each asks for the points stored since its
    own previous answer."""

    old_after: int | None = None
    new_after: int | None = None

    async def poll(self, db: Database) -> None:
        old, self.old_after = await old_series(db, self.old_after, charts.MAX_POINTS)
        new = await charts.series(db, VIN, after_id=self.new_after)
        self.new_after = new.last_id
        assert new.points == old


async def compare(db: Database, rng: random.Random, live: Charts) -> None:
    for key in KEYS:
        for limit in (1, 3, 50, 1000):
            assert await new_pages(db, key, None, None, limit) == await old_pages(
                db, key, None, None, limit
            ), (key, limit)
        for _ in range(3):
            since = START + rng.randint(-10, 400) * 1_000_000
            until = since + rng.randint(0, 300) * 1_000_000
            limit = rng.choice((2, 9, 40))
            assert await new_pages(db, key, since, until, limit) == await old_pages(
                db, key, since, until, limit
            ), (key, since, until, limit)
    assert await new_export(db) == await old_export(db)
    for limit in (1, 7, charts.MAX_POINTS):
        assert (await charts.series(db, VIN, limit=limit)).points == (
            await old_series(db, None, limit)
        )[0], limit
        assert await charts.track(db, VIN, limit=limit) == await old_track(db, limit)
    # The live poll answers what was stored since its previous answer (its first answer
    # holds every point: fewer than MAX_POINTS per series here).
    await live.poll(db)


@pytest.mark.timeout(600)  # hundreds of pages compared, on a shared machine
@pytest.mark.parametrize(("seed", "before_upgrade"), [(1, 0), (2, 120)])
async def test_new_storage_answers_as_the_old_one(
    database: Database, seed: int, before_upgrade: int
) -> None:
    rng = random.Random(seed)
    await legacy.create_table(database, REFERENCE)
    if before_upgrade:
        await legacy.create_table(database)
    try:
        await _run(database, rng, before_upgrade)
    finally:
        await legacy.drop_table(database, REFERENCE)
        await legacy.drop_table(database)


async def _run(database: Database, rng: random.Random, before_upgrade: int) -> None:
    stored = History(database)
    live = Charts()
    mover = migration.Mover(database, target=TARGET, now_us=lambda: now, batch=9, drop_after_us=0)
    now = START
    polled_at = START  # what the live poll has seen was received before this
    for step in range(360):
        if step == before_upgrade:
            if before_upgrade:
                await compare(database, rng, Charts())  # only the old table so far
                await legacy.continue_hot_ids(database)
            stored.upgraded = True
            assert await mover.claim()
            await live.poll(database)
            polled_at = now + 1
        now += 1_000_000
        at = now - rng.randint(0, 300_000)
        points = [(key, at, _value(key, at, rng, step)) for key in rng.sample(KEYS, 3)]
        roll = rng.random()
        if roll < 0.08 and stored.sent:  # a re-delivered point (maybe sealed or moved)
            key, old_at, text = rng.choice(stored.sent)
            points.append((key, old_at, text))
        elif roll < 0.16:  # a late point, maybe into a sealed range
            late = at - rng.randint(1, 200) * 1_000_000
            points.append(
                ("charging.battery_level", late, _value("charging.battery_level", late, rng, step))
            )
        elif roll < 0.20:  # another value at a timestamp already stored
            key, old_at, _ = rng.choice(stored.sent or [("charging.status", at, "")])
            points.append((key, old_at, _value(key, old_at, rng, step + 1)))
        await stored.deliver(points, received_at=now + rng.randint(0, 50_000))
        if stored.upgraded and rng.random() < 0.06:
            # Sealing leaves what the live poll has not seen yet (it seals points an
            # hour old; the console polls every few seconds).
            before = min(now - rng.randint(0, 60) * 1_000_000, polled_at)
            await seal_all(database, before=before)
        if stored.upgraded and rng.random() < 0.3:
            mover.batch = rng.randint(1, 12)  # boundaries everywhere, ties among them
            await mover.step()
        if step in (200, 359):
            await compare(database, rng, live)
            polled_at = now + 1

    # A seal and a batch of the move between two pages of one paging: the cursor
    # crosses from hot (and the old table) into chunks.
    await stored.deliver(
        [
            (
                "charging.battery_level",
                now + s * 1_000_000,
                {"data": 0.5, "timestamp": to_iso(now + s * 1_000_000)},
            )
            for s in range(1, 30)
        ],
        received_at=now + 31_000_000,
    )
    await live.poll(database)

    async def seal_and_move_meanwhile() -> None:
        await seal_all(database, before=history.FAR_FUTURE)
        await mover.step()

    assert await new_pages(
        database, "charging.battery_level", None, None, 7, between=seal_and_move_meanwhile
    ) == await old_pages(database, "charging.battery_level", None, None, 7)
    # Everything moved (the old table dropped) and sealed: still the same answers.
    while not mover.done:
        await mover.step()
    assert not await repository.legacy_table_exists(database.reader)
    await seal_all(database, before=history.FAR_FUTURE)
    assert await database.fetch_value("SELECT count(*) FROM history_hot") == 0
    await compare(database, rng, live)
