"""Readers answer exactly as the row-per-point storage did.

The same points (a driving car's properties, failures, an array property, points
stored at the same timestamp, late points, re-delivered points) are written to the old
storage (its insert and its queries kept here, nowhere else) under one VIN and to the
new one under another, with seals in between at random moments: into chunks, late points
merged into sealed ranges, duplicates of sealed points. Then every page of every
property, for several page sizes and windows, following the cursors to the end (with a
seal between two pages), and the owner's whole export are compared, value for value.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import orjson
import pytest

from autoport.history import service as history
from autoport.kit.clock import to_iso
from autoport.kit.db import Database

ENV = "production"
OLD_VIN, NEW_VIN = "WBA00000000000001", "WBA00000000000002"
START = 1_767_225_600_000_000

# --- the old storage, as it was ---------------------------------------------------------

_OLD_INSERT = """
INSERT INTO vehicle_data_history
    (environment, vin, capability, property, timestamp, digest, value, received_at)
VALUES (:environment, :vin, :capability, :property, :timestamp, :digest, :value, :received_at)
ON CONFLICT (environment, vin, capability, property, timestamp, digest) DO NOTHING
"""
_OLD_PAGE = """
SELECT id, timestamp, value FROM vehicle_data_history
WHERE environment = :environment AND vin = :vin AND capability = :capability
  AND property = :property AND timestamp >= :since AND timestamp < :until
  AND (timestamp < :cursor_ts OR (timestamp = :cursor_ts AND id < :cursor_id))
ORDER BY timestamp DESC, id DESC
LIMIT :limit
"""
_OLD_EXPORT = """
SELECT capability, property, timestamp, digest, value, received_at
FROM vehicle_data_history WHERE environment = :environment AND vin = :vin
ORDER BY capability, property, timestamp, digest
"""


async def old_pages(
    db: Database, key: str, since: int | None, until: int | None, limit: int
) -> list[list[str]]:
    capability, _, prop = key.partition(".")
    cursor = (history.FAR_FUTURE, history.FAR_FUTURE)
    pages = []
    while True:
        rows = await db.fetch_all(
            _OLD_PAGE,
            {
                "environment": ENV,
                "vin": OLD_VIN,
                "capability": capability,
                "property": prop,
                "since": history.FAR_PAST if since is None else since,
                "until": history.FAR_FUTURE if until is None else until,
                "cursor_ts": cursor[0],
                "cursor_id": cursor[1],
                "limit": limit + 1,
            },
        )
        pages.append([str(row["value"]) for row in rows[:limit]])
        if len(rows) <= limit:
            return pages
        cursor = (int(rows[limit - 1]["timestamp"]), int(rows[limit - 1]["id"]))


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
            vin=NEW_VIN,
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


async def old_export(db: Database) -> list[tuple[Any, ...]]:
    rows = await db.fetch_all(_OLD_EXPORT, {"environment": ENV, "vin": OLD_VIN})
    return [tuple(row[i] for i in range(6)) for row in rows]


async def new_export(db: Database) -> list[tuple[Any, ...]]:
    found = []
    async for page in history.vehicle_history(db.reader, environment=ENV, vin=NEW_VIN, page_rows=7):
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
    "charging.status",
    "doors.locks",
)


class Writer:
    """Writes each delivery to both storages, as ingestion does (one received_at per
    delivery)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.sent: list[tuple[str, int, str]] = []

    async def deliver(self, points: list[tuple[str, int, Any]], received_at: int) -> None:
        rows = []
        for key, at, value in points:
            text = value if isinstance(value, str) else orjson.dumps(value).decode()
            digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
            capability, _, prop = key.partition(".")
            rows.append((capability, prop, at, digest, text))
            self.sent.append((key, at, text))
        async with self.db.transaction() as conn:
            await conn.execute_many(
                _OLD_INSERT,
                [
                    {
                        "environment": ENV,
                        "vin": OLD_VIN,
                        "capability": c,
                        "property": p,
                        "timestamp": t,
                        "digest": d,
                        "value": v,
                        "received_at": received_at,
                    }
                    for c, p, t, d, v in rows
                ],
            )
            await history.append(
                conn, environment=ENV, vin=NEW_VIN, received_at=received_at, points=rows
            )


async def seal_all(db: Database, before: int, target: int) -> int:
    sealed = 0
    for key in KEYS:
        capability, _, prop = key.partition(".")
        sid = history.series_id(ENV, NEW_VIN, capability, prop)
        sealed += await history.seal_series(db, sid, before=before, target=target)
    return sealed


async def compare(db: Database, rng: random.Random, now: int, target: int) -> None:
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


@pytest.mark.parametrize("seed", [1, 2])
async def test_new_storage_answers_as_the_old_one(database: Database, seed: int) -> None:
    rng = random.Random(seed)
    writer = Writer(database)
    now = START
    target = 40  # small chunks: many boundaries, splits and merges in a short test
    for step in range(360):
        now += 1_000_000
        at = now - rng.randint(0, 300_000)
        points = [(key, at, _value(key, at, rng, step)) for key in rng.sample(KEYS, 3)]
        roll = rng.random()
        if roll < 0.08 and writer.sent:  # a re-delivered point (maybe sealed by now)
            key, old_at, text = rng.choice(writer.sent)
            points.append((key, old_at, text))
        elif roll < 0.16:  # a late point, maybe into a sealed range
            late = at - rng.randint(1, 200) * 1_000_000
            points.append(
                ("charging.battery_level", late, _value("charging.battery_level", late, rng, step))
            )
        elif roll < 0.20:  # another value at a timestamp already stored
            key, old_at, _ = rng.choice(writer.sent or [("charging.status", at, "")])
            points.append((key, old_at, _value(key, old_at, rng, step + 1)))
        await writer.deliver(points, received_at=now + rng.randint(0, 50_000))
        if rng.random() < 0.06:
            await seal_all(database, before=now - rng.randint(0, 60) * 1_000_000, target=target)
        if step in (120, 359):
            await compare(database, rng, now, target)

    # A seal between two pages of one paging: the cursor crosses from hot into chunks.
    await writer.deliver(
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

    async def seal_meanwhile() -> None:
        await seal_all(database, before=history.FAR_FUTURE, target=target)

    assert await new_pages(
        database, "charging.battery_level", None, None, 7, between=seal_meanwhile
    ) == await old_pages(database, "charging.battery_level", None, None, 7)
    # Everything sealed: still the same answers, and nothing left in hot.
    await seal_all(database, before=history.FAR_FUTURE, target=target)
    assert await database.fetch_value("SELECT count(*) FROM history_hot") == 0
    await compare(database, rng, now, target)
