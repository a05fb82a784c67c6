"""Fleet clearance throughput: registering vehicles and the worker's transitions.

    python -m bench.fleet [--quick] [--postgres URL]

Subjects, each beside a floor measured in the same run on the same database:
- add: `service.add_vehicles` (validation, insert, changelog, two outbox rows per
  vehicle) vs. the floor, a bare executemany INSERT of the same rows;
- worker: `process_due` driving pending -> approved with the sandbox connector (claim,
  ask, then every answer of a claim applied in one transaction: changelog, status, two
  outbox rows per vehicle) vs. the floor, the naive worker: one conditional UPDATE per
  vehicle in a transaction of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
import uuid
from pathlib import Path

import orjson

from autoport.brands.registry import BrandRegistry
from autoport.config import Settings
from autoport.fleet.service import add_vehicles
from autoport.fleet.tasks import WorkerConfig, process_due
from autoport.kit.auth import Caller, CallerKind
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from autoport.vehicles.vin import generate_vin

APP = "B" * 24


def _caller() -> Caller:
    # The sandbox environment: its emulated carmaker decides at once (delay 0), so the
    # worker's own cost is measured. (Production's push-fed brands wait for a decision.)
    return Caller(
        environment=Environment.sandbox,
        kind=CallerKind.application,
        application_id=APP,
        client_id="bench",
        scopes=frozenset({"fleet:clearance"}),
        application_properties=frozenset(),
        application_brands=frozenset({"sandbox"}),
    )


async def _prepare(db: Database) -> None:
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM outbox")
        await conn.execute("DELETE FROM fleet_vehicles")
        await conn.execute("DELETE FROM applications")
        await conn.execute("DELETE FROM accounts")
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES ('bench', 'sandbox', 'bench', 0)"
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, "
            "client_type, redirect_uris, properties, brands, created_at) VALUES (:id, "
            "'sandbox', 'bench', 'bench', 'bench', 'confidential', '[]', '[]', "
            "'[\"sandbox\"]', 0)",
            {"id": APP},
        )


async def _run(db: Database, n: int, batch: int) -> dict[str, float]:
    clock = FrozenClock()
    rng = random.Random(1)
    vins = sorted({generate_vin(rng) for _ in range(n)})
    figures: dict[str, float] = {}

    # Floor for add: a bare batch INSERT of the same rows.
    await _prepare(db)
    rows = [
        {
            "app": APP,
            "vin": v,
            "now": clock.now_us(),
            "changelog": orjson.dumps([{"status": "pending"}]).decode(),
        }
        for v in vins
    ]
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        async with db.transaction() as conn:
            await conn.execute_many(
                "INSERT INTO fleet_vehicles (environment, application_id, vin, brand, status, "
                "tags, changelog, inserted_at, updated_at, next_check_at) VALUES ('sandbox', "
                ":app, :vin, 'sandbox', 'pending', '{}', :changelog, :now, :now, :now)",
                rows[i : i + batch],
            )
    figures["add_floor_per_s"] = len(vins) / (time.perf_counter() - start)

    # Floor for the worker: one conditional UPDATE per vehicle, one transaction each.
    start = time.perf_counter()
    for v in vins:
        async with db.transaction() as conn:
            await conn.execute(
                "UPDATE fleet_vehicles SET status = 'approved', next_check_at = NULL "
                "WHERE environment = 'sandbox' AND application_id = :app AND vin = :vin "
                "AND status = 'pending'",
                {"app": APP, "vin": v},
            )
    figures["worker_floor_per_s"] = len(vins) / (time.perf_counter() - start)

    # Subject: add_vehicles.
    await _prepare(db)
    caller = _caller()
    start = time.perf_counter()
    for i in range(0, len(vins), batch):
        async with db.transaction() as conn:
            await add_vehicles(
                conn,
                caller=caller,
                vehicles=[{"vin": v, "brand": "sandbox"} for v in vins[i : i + batch]],
                now_us=clock.now_us(),
                limit=batch,
            )
    figures["add_per_s"] = len(vins) / (time.perf_counter() - start)

    # Subject: the worker, pending -> approved.
    settings = Settings(sandbox_connector_clearance_delay_seconds=0.0)
    registry = BrandRegistry.from_settings(settings, clock=clock)
    config = WorkerConfig(batch_size=batch)
    start = time.perf_counter()
    done = 0
    while done < len(vins):
        step = await process_due(db, registry, clock=clock, config=config)
        if step == 0:
            break
        done += step
    figures["worker_per_s"] = done / (time.perf_counter() - start)
    assert done == len(vins), f"worker approved {done} of {len(vins)}"
    return figures


async def _bench(url: str, schema: str | None, n: int, batch: int) -> dict[str, float]:
    db = create_database(url, schema=schema)
    await db.connect()
    try:
        return await _run(db, n, batch)
    finally:
        await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke mode: a few vehicles")
    parser.add_argument("--postgres", help="also run on this PostgreSQL server (own schema)")
    args = parser.parse_args()
    n, batch = (200, 50) if args.quick else (5000, 100)
    targets: list[tuple[str, str, str | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        upgrade_sync(sqlite_url)
        targets.append(("sqlite", sqlite_url, None))
        if args.postgres:
            schema = f"bench_fleet_{uuid.uuid4().hex[:8]}"
            upgrade_sync(args.postgres, schema=schema)
            targets.append(("postgresql", args.postgres, schema))
        try:
            for name, url, target_schema in targets:
                figures = asyncio.run(_bench(url, target_schema, n, batch))
                add, add_floor = figures["add_per_s"], figures["add_floor_per_s"]
                work, work_floor = figures["worker_per_s"], figures["worker_floor_per_s"]
                print(
                    f"{name:<10} vehicles={n} batch={batch}  "
                    f"add {add:,.0f}/s (floor {add_floor:,.0f}/s)  "
                    f"worker {work:,.0f} transitions/s (floor {work_floor:,.0f}/s)"
                )
        finally:
            for _name, url, target_schema in targets:
                if target_schema:
                    asyncio.run(_drop(url, target_schema))


async def _drop(url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


if __name__ == "__main__":
    main()
