"""Benchmark: disk use per vehicle per day at 1 Hz, and ingestion while history is pruned.

1. Disk use: one vehicle reporting a typical property set (location, heading, speed,
   odometer, battery level, range, charging state, outside temperature) once a second,
   fast-forwarded: each second of the simulated day is one call of the ingestion service
   (validation, merge, history, outbox), as POST /v1/ingest makes it. The bytes the
   database grew by (SQLite: the file after a checkpoint; PostgreSQL: the tables and
   their indexes) are divided by the simulated days.
2. Ingestion during a prune: points per second of one ingesting loop (the same calls)
   for a few seconds without pruning, then while `prune_history` deletes a large
   backlog of rows past the retention in batches, in the same process (as the server's
   pruner runs beside its request handlers). PostgreSQL: the pruner on its own pool
   connections.

    python -m bench.retention                    # SQLite and, if reachable, PostgreSQL
    python -m bench.retention --quick            # a few seconds, a smoke test
    python -m bench.retention --hours 24         # a whole simulated day (default 6 h)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from autoport.config import Settings
from autoport.history.service import append
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import MICROS, FrozenClock
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade
from autoport.kit.state import AppState

DAY = 86_400
START_US = 1_767_225_600 * MICROS  # 2026-01-01T00:00:00Z


def reading(second: int) -> dict[str, Any]:
    """What a driving car reports in second `second`: realistic, changing values."""
    angle = second / 600
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(START_US // MICROS + second))
    at = f"{stamp}.000000Z"

    def point(data: Any) -> dict[str, Any]:
        return {"data": data, "timestamp": at}

    return {
        "vehicle_location": {
            "coordinates": point(
                {
                    "latitude": round(48.137 + 0.05 * math.sin(angle), 6),
                    "longitude": round(11.575 + 0.05 * math.cos(angle), 6),
                }
            ),
            "heading": point({"unit": "degrees", "value": round(math.degrees(angle) % 360, 1)}),
        },
        "diagnostics": {
            "speed": point(
                {"unit": "kilometers_per_hour", "value": round(50 + 30 * math.sin(angle * 7), 1)}
            ),
            "odometer": point({"unit": "kilometers", "value": round(12_000 + second * 0.0139, 3)}),
        },
        "climate": {
            "outside_temperature": point(
                {"unit": "celsius", "value": round(12 + 3 * math.sin(angle / 10), 1)}
            ),
        },
        "charging": {
            "battery_level": point(round(0.9 - (second % 36_000) / 80_000, 4)),
            "estimated_range": point(
                {"unit": "kilometers", "value": round(400 - (second % 36_000) / 200, 1)}
            ),
            "status": point("discharging"),
        },
    }


async def database_bytes(db: Database, path: Path | None, schema: str | None) -> int:
    if db.dialect == "sqlite":
        assert path is not None
        import sqlite3

        # Pages in use (the WAL folded in), as a fresh copy of the file would have.
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)
    return int(
        await db.fetch_value(
            "SELECT coalesce(sum(pg_total_relation_size(quote_ident(schemaname) || '.' || "
            "quote_ident(tablename))), 0) FROM pg_tables WHERE schemaname = :schema",
            {"schema": schema},
        )
    )


async def disk_use(url: str, schema: str | None, path: Path | None, hours: float) -> dict[str, Any]:
    await upgrade(url, schema=schema)
    db = create_database(url, schema=schema)
    await db.connect()
    try:
        before = await database_bytes(db, path, schema)
        seconds = int(hours * 3600)
        started = time.perf_counter()
        points = 0
        for second in range(seconds):
            report = await ingest_vehicle_data(
                db,
                environment=Environment.production,
                vin="WBADXSK0000000001",
                brand="bmw",
                data=reading(second),
                now_us=START_US + second * MICROS,
            )
            assert not report.rejected, report.rejected
            points += report.changed_count
        took = time.perf_counter() - started
        after = await database_bytes(db, path, schema)
        rows = int(
            await db.fetch_value(
                "SELECT (SELECT count(*) FROM history_hot) "
                "+ (SELECT coalesce(sum(count), 0) FROM history_chunks)"
            )
        )
    finally:
        await db.close()
    per_day = (after - before) * DAY / seconds
    return {
        "simulated_seconds": seconds,
        "history_rows": rows,
        "points_per_second_of_driving": points / seconds,
        "bytes": after - before,
        "bytes_per_vehicle_day": per_day,
        "ingest_calls_per_second": seconds / took,
    }


async def _ingest_rate(db: Database, seconds: float, offset: int) -> float:
    """Calls per second of one ingesting loop (8 points each) for `seconds`."""
    count = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        await ingest_vehicle_data(
            db,
            environment=Environment.production,
            vin="WBALXVE0000000001",
            brand="bmw",
            data=reading(offset + count),
            now_us=START_US + 400 * DAY * MICROS + count,
        )
        count += 1
        # A request handler yields to the event loop between requests (network I/O);
        # SQLite calls do not, so without this the pruner task would never run.
        await asyncio.sleep(0)
    return count / (time.perf_counter() - started)


async def during_prune(
    url: str, schema: str | None, data_dir: Path, backlog: int, seconds: float
) -> dict[str, Any]:
    from autoport.history.retention import prune as prune_history

    await upgrade(url, schema=schema)
    db = create_database(url, schema=schema)
    await db.connect()
    try:
        # A backlog past the retention, written bare (1,000 rows per transaction).
        for start in range(0, backlog, 1000):
            rows = [
                {
                    "environment": "production",
                    "vin": f"WBAXLD{(start + i) % 500:011d}",
                    "capability": "charging",
                    "property": "battery_level",
                    "timestamp": start + i,
                    "digest": "0",
                    "value": '{"data":0.5}',
                    "received_at": START_US + start + i,
                }
                for i in range(min(1000, backlog - start))
            ]
            for vin in {row["vin"] for row in rows}:
                mine: list[dict[str, Any]] = [r for r in rows if r["vin"] == vin]
                async with db.transaction() as conn:
                    await append(
                        conn,
                        environment=str(mine[0]["environment"]),
                        vin=str(vin),
                        received_at=int(mine[0]["received_at"]),
                        points=[
                            (
                                str(r["capability"]),
                                str(r["property"]),
                                int(r["timestamp"]),
                                "0" * 16,
                                str(r["value"]),
                            )
                            for r in mine
                        ],
                    )
        quiet = await _ingest_rate(db, seconds, 0)
        settings = Settings(
            data_dir=data_dir, database_url=url, database_schema=schema, sandbox_demo=False
        )
        clock = FrozenClock(START_US + 200 * DAY * MICROS)
        state = AppState(settings=settings, database=db, clock=clock)
        settings = settings.model_copy(update={"vehicle_data_history_retention_days": 100})
        state.settings = settings
        prune_started = time.perf_counter()
        pruner = asyncio.create_task(prune_history(state))
        rates: list[float] = []
        while not pruner.done():
            rates.append(await _ingest_rate(db, 1.0, 100_000 + len(rates) * 10_000))
        deleted = await pruner
        prune_took = time.perf_counter() - prune_started
    finally:
        await db.close()
    busy = sum(rates) / len(rates) if rates else float("nan")
    return {
        "backlog_rows": backlog,
        "deleted": deleted,
        "prune_seconds": prune_took,
        "deleted_per_second": deleted / prune_took,
        "ingest_calls_per_second_quiet": quiet,
        "ingest_calls_per_second_during_prune": busy,
        "slowest_second_during_prune": min(rates) if rates else float("nan"),
        "batch_size": settings.retention_prune_batch_size,
    }


def _report(name: str, disk: dict[str, Any], prune: dict[str, Any]) -> None:
    print(f"== {name}")
    per_row = disk["bytes"] / disk["history_rows"]
    print(
        f"disk: {disk['simulated_seconds']} s simulated at 1 Hz, "
        f"{disk['points_per_second_of_driving']:.0f} points/s, "
        f"{disk['history_rows']} history rows, {disk['bytes'] / 1e6:.1f} MB -> "
        f"{disk['bytes_per_vehicle_day'] / 1e6:.1f} MB per vehicle per day "
        f"({per_row:.0f} B per row); ingest {disk['ingest_calls_per_second']:.0f} calls/s"
    )
    print(
        f"prune: {prune['deleted']} of {prune['backlog_rows']} rows in "
        f"{prune['prune_seconds']:.1f} s ({prune['deleted_per_second']:.0f} rows/s, batches of "
        f"{prune['batch_size']}); ingestion {prune['ingest_calls_per_second_quiet']:.0f} calls/s "
        f"without, {prune['ingest_calls_per_second_during_prune']:.0f} calls/s during "
        f"(slowest second {prune['slowest_second_during_prune']:.0f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--backlog", type=int, default=300_000)
    args = parser.parse_args()
    hours = 0.05 if args.quick else args.hours
    backlog = 5_000 if args.quick else args.backlog
    seconds = 1.0 if args.quick else 5.0
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        path = base / "disk.db"
        disk = asyncio.run(disk_use(f"sqlite:///{path}", None, path, hours))
        prune = asyncio.run(
            during_prune(f"sqlite:///{base / 'prune.db'}", None, base, backlog, seconds)
        )
        _report("SQLite", disk, prune)
        url = os.environ.get("AUTOPORT_TEST_POSTGRES_URL")
        if url:
            schemas = [f"bench_ret_{uuid.uuid4().hex[:8]}" for _ in range(2)]
            try:
                disk = asyncio.run(disk_use(url, schemas[0], None, hours))
                prune = asyncio.run(during_prune(url, schemas[1], base, backlog, seconds))
                _report("PostgreSQL", disk, prune)
            finally:
                asyncio.run(_drop(url, schemas))


async def _drop(url: str, schemas: list[str]) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        for schema in schemas:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


if __name__ == "__main__":
    main()
