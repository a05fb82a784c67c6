"""An installation upgraded from before 0020 with history in its old table: migrated to
0019, filled through the old table's own insert, then migrated to the head (0020 makes
the new tables, 0023 leaves the old one because it holds rows)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from autoport.history import service as history
from autoport.kit.clock import to_iso
from autoport.kit.db import Database, create_database
from autoport.kit.migrate import upgrade
from tests.conftest import POSTGRES_URL, service_missing
from tests.history import legacy

ENV = "production"
START = 1_767_225_600_000_000
PROPERTIES = (
    ("charging", "battery_level"),
    ("diagnostics", "odometer"),
    ("charging", "status"),
    ("doors", "locks"),
)


@dataclass(frozen=True)
class Place:
    """Where an old-layout database lives: a data directory, and on PostgreSQL the
    server and a schema of its own."""

    data_dir: Path
    url: str
    schema: str | None

    def database(self, pool_size: int = 4) -> Database:
        return create_database(self.url, schema=self.schema, pool_size=pool_size)

    @property
    def env(self) -> dict[str, str]:
        """The environment of an `autoport` process on it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOPORT_")}
        env["AUTOPORT_DATA_DIR"] = str(self.data_dir)
        if self.schema is not None:
            env["AUTOPORT_DATABASE_URL"] = self.url
            env["AUTOPORT_DATABASE_SCHEMA"] = self.schema
        return env


def vin(number: int) -> str:
    return f"WBAOLD{number:011d}"


def value(prop: str, at: int, rng: random.Random) -> Any:
    own = to_iso(at)
    if rng.random() < 0.03:
        return {"failure": {"reason": "unknown", "description": "no answer"}, "timestamp": own}
    if prop == "battery_level":
        return {"data": round(rng.uniform(0.1, 0.9), 3), "timestamp": own}
    if prop == "odometer":
        return {"data": {"unit": "kilometers", "value": round(at / 1e9, 2)}, "timestamp": own}
    if prop == "status":
        return {"data": rng.choice(["charging", "not_charging"]), "timestamp": own}
    return [
        {
            "data": {"location": side, "lock_state": rng.choice(["locked", "unlocked"])},
            "timestamp": own,
        }
        for side in ("front_left", "front_right")
    ]


def old_rows(vehicles: int, seconds: int, seed: int = 7) -> list[dict[str, Any]]:
    """Deliveries of `vehicles` cars over `seconds` seconds (one point per property a
    second), with re-delivered points (no-ops) and another value at a timestamp already
    stored now and then (ties, in their stored order)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for second in range(seconds):
        for number in range(vehicles):
            received = START + second * 1_000_000 + 2_000 + number
            for capability, prop in PROPERTIES:
                at = START + second * 1_000_000 + rng.randint(0, 999) * 1_000
                taken: list[int] = [at]
                if rng.random() < 0.03 and second:  # another value at an earlier timestamp
                    taken.append(int(rows[rng.randrange(len(rows))]["timestamp"]))
                for stamp in taken:
                    text = orjson.dumps(value(prop, stamp, rng)).decode()
                    rows.append(
                        {
                            "environment": ENV,
                            "vin": vin(number),
                            "capability": capability,
                            "property": prop,
                            "timestamp": stamp,
                            "digest": hashlib.blake2b(text.encode(), digest_size=8).hexdigest(),
                            "value": text,
                            "received_at": received,
                        }
                    )
            if rng.random() < 0.05:  # a re-delivery: the unique key makes it a no-op
                rows.append(dict(rows[rng.randrange(len(rows))]))
    return rows


async def fill(place: Place, rows: list[dict[str, Any]]) -> None:
    db = place.database()
    await db.connect()
    try:
        for start in range(0, len(rows), 2000):
            async with db.transaction() as conn:
                await legacy.insert(conn, rows[start : start + 2000])
    finally:
        await db.close()


@contextlib.asynccontextmanager
async def old_layout(backend: str, where: Path, rows: list[dict[str, Any]]) -> AsyncIterator[Place]:
    """A database at 0019 holding `rows` in its old table, migrated to the head."""
    data_dir = where / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    if backend == "sqlite":
        place = Place(data_dir, f"sqlite:///{data_dir / 'autoport.db'}", None)
    else:
        if not POSTGRES_URL:
            service_missing("PostgreSQL leg: AUTOPORT_TEST_POSTGRES_URL is not set")
        place = Place(data_dir, POSTGRES_URL, f"autoport_test_old_{uuid.uuid4().hex[:10]}")
    try:
        await upgrade(place.url, schema=place.schema, revision="0019")
        await fill(place, rows)
        await upgrade(place.url, schema=place.schema)
        yield place
    finally:
        if place.schema is not None:
            import asyncpg

            conn = await asyncpg.connect(POSTGRES_URL)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{place.schema}" CASCADE')
            finally:
                await conn.close()


async def everything(db: Database, vins: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    """Every point of each vehicle as its owner's export reads it."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    for number in vins:
        found[number] = [
            (p.capability, p.property, p.timestamp, p.digest, p.value, p.received_at)
            async for page in history.vehicle_history(
                db.reader, environment=ENV, vin=number, page_rows=500
            )
            for p in page
        ]
    return found


async def newest_first(db: Database, number: str, capability: str, prop: str) -> list[str]:
    """Every value of one property, newest first, through pages of 1,000 (the API's)."""
    values: list[str] = []
    cursor: tuple[int, str | None] | None = None
    while True:
        points, cursor = await history.page(
            db,
            environment=ENV,
            vin=number,
            capability=capability,
            prop=prop,
            since=None,
            until=None,
            cursor=cursor,
            limit=1000,
        )
        values += [p.value for p in points]
        if cursor is None:
            return values


def first_copies(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows the old table holds: each point's first copy, in stored order."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for row in rows:
        key = tuple(row[name] for name in ("environment", "vin", "capability", "property"))
        key += (row["timestamp"], row["digest"])
        if key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


def expected_export(rows: list[dict[str, Any]], number: str) -> list[tuple[Any, ...]]:
    mine = [r for r in first_copies(rows) if r["vin"] == number]
    mine.sort(key=lambda r: (r["capability"], r["property"], r["timestamp"], r["digest"]))
    return [
        (r["capability"], r["property"], r["timestamp"], r["digest"], r["value"], r["received_at"])
        for r in mine
    ]


def expected_newest_first(
    rows: list[dict[str, Any]], number: str, capability: str, prop: str
) -> list[str]:
    mine = [
        (r["timestamp"], position, r["value"])
        for position, r in enumerate(first_copies(rows))
        if (r["vin"], r["capability"], r["property"]) == (number, capability, prop)
    ]
    return [text for *_, text in sorted(mine, reverse=True)]
