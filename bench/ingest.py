"""Benchmark: data points per second into the store, in batches of 100 points.

- in-process: `ingest_vehicle_data` (validation, newest-wins merge, history, outbox, one
  transaction per batch), on SQLite and PostgreSQL; beside it the baseline of the same
  number of rows written bare into the history table (no validation, no merge).
- HTTP: `POST /v1/ingest` to the real `autoport serve` with `make run`'s settings
  (bench._serve: logging on, background work and the demo sandbox on) pinned to core 0,
  load from wrk (8 connections, 20 vehicles x 5 properties per request, every point's
  timestamp unique) on core 1; every point acknowledged must be in the history
  afterwards (counted in the database).

    python -m bench.ingest                 # SQLite and, if reachable, PostgreSQL
    python -m bench.ingest --quick         # a few seconds, a smoke test
    AUTOPORT_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test python -m bench.ingest
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, cast

from bench import _serve
from bench._figures import keep
from bench._serve import Changed

BATCH = 100
TARGET_IN_PROCESS = 30_000
TARGET_HTTP = 30_000  # issue #33, with the default logging
CLIENTS = 8


def _properties() -> list[Any]:
    from autoport.catalog import CATALOG

    single = [p for p in CATALOG.properties() if not p.multiple]
    return single[:: max(1, len(single) // BATCH)][:BATCH]


def batches(count: int, vehicles: int) -> list[tuple[str, dict[str, Any]]]:
    """`count` batches of 100 points spread over `vehicles` VINs, each newer than the
    last of its vehicle, so every point changes the store."""
    from autoport.catalog.schemas import example_data

    props = _properties()
    examples = {p.key: example_data(p.type) for p in props}
    out = []
    for index in range(count):
        vin = f"WBABENCH{index % vehicles:09d}"
        second = index // vehicles
        stamp = f"2024-05-01T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        data: dict[str, dict[str, Any]] = {}
        for prop in props:
            data.setdefault(prop.capability, {})[prop.name] = {
                "data": examples[prop.key],
                "timestamp": stamp,
            }
        out.append((vin, data))
    return out


async def in_process(url: str, schema: str | None, count: int) -> tuple[float, float]:
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.clock import now_us
    from autoport.kit.db import create_database
    from autoport.kit.environments import Environment
    from autoport.kit.migrate import upgrade

    await upgrade(url, schema=schema)
    db = create_database(url, schema=schema)
    await db.connect()
    work = batches(count, vehicles=50)
    try:
        started = time.perf_counter()
        for vin, data in work:
            report = await ingest_vehicle_data(
                db,
                environment=Environment.production,
                vin=vin,
                brand="bmw",
                data=data,
                now_us=now_us(),
            )
            assert not report.rejected and report.changed_count == BATCH, report.rejected
        subject = count * BATCH / (time.perf_counter() - started)
        # Baseline: the same number of history rows written bare (no validation, no
        # merge, no vehicle row, no outbox), one transaction per batch.
        from autoport.history.service import append

        rows = [
            [
                {
                    "environment": "production",
                    "vin": f"BASELINE{i:09d}",
                    "capability": "charging",
                    "property": f"p{j}",
                    "timestamp": i,
                    "digest": "0",
                    "value": '{"data":1}',
                    "received_at": i,
                }
                for j in range(BATCH)
            ]
            for i in range(count)
        ]
        started = time.perf_counter()
        for batch in rows:
            async with db.transaction() as conn:
                first: dict[str, Any] = batch[0]
                await append(
                    conn,
                    environment=str(first["environment"]),
                    vin=str(first["vin"]),
                    received_at=int(first["received_at"]),
                    points=[
                        (
                            str(r["capability"]),
                            str(r["property"]),
                            int(r["timestamp"]),
                            "0" * 16,
                            str(r["value"]),
                        )
                        for r in cast(list[dict[str, Any]], batch)
                    ],
                )
        baseline = count * BATCH / (time.perf_counter() - started)
    finally:
        await db.close()
    return subject, baseline


async def _provider_secret(data_dir: Path, url: str, schema: str | None) -> str:
    from autoport.config import Settings, ensure_secrets
    from autoport.ingestion.providers import create_provider
    from autoport.kit.db import create_database
    from autoport.kit.environments import Environment
    from autoport.kit.migrate import upgrade

    settings, _ = ensure_secrets(Settings(data_dir=data_dir))
    assert settings.token_hmac_key is not None
    await upgrade(url, schema=schema)
    db = create_database(url, schema=schema)
    await db.connect()
    try:
        async with db.transaction() as conn:
            _, secret = await create_provider(
                conn,
                key=settings.token_hmac_key.get_secret_value().encode(),
                environment=Environment.production,
                name="bench",
                now_us=1,
            )
    finally:
        await db.close()
    return secret


_LUA = """
local counter = 0
local template = [=[%(template)s]=]
local headers = {["Authorization"] = "Bearer %(secret)s", ["Content-Type"] = "application/json"}
request = function()
  -- One request: the next %(per_request)d vehicles of the fleet, in turn, each with the
  -- same properties at one instant, a millisecond after the request before: every
  -- point is newer than its vehicle's last, and its timestamp unique.
  local first = (counter * %(per_request)d) %% %(vehicles)d
  local ms = counter
  counter = counter + 1
  local stamp = string.format("2024-05-01T%%02d:%%02d:%%02d.%%03dZ",
    math.floor(ms / 3600000) %% 24, math.floor(ms / 60000) %% 60,
    math.floor(ms / 1000) %% 60, ms %% 1000)
  local body = template:gsub("STAMP_HERE", stamp)
  for i = 0, %(per_request)d - 1 do
    local vin = string.format("WBAHTTP%%010d", (first + i) %% %(vehicles)d)
    body = body:gsub("VIN_" .. i .. "_", vin, 1)
  end
  return wrk.format("POST", "/v1/ingest", headers, body)
end
"""
# POST /v1/ingest as issue #33's target has it: 20 vehicles x 5 properties per request.
HTTP_VEHICLES = 20
HTTP_PROPERTIES = 5
HTTP_FLEET = 400


def _wrk_script(path: Path, secret: str) -> None:
    """A wrk script posting HTTP_VEHICLES vehicles x HTTP_PROPERTIES points per request,
    every point newer than its vehicle's last (one wrk thread: one counter)."""
    import orjson

    (_, data), *_ = batches(1, vehicles=1)
    kept: dict[str, dict[str, Any]] = {}
    for capability, group in data.items():
        for name, wrapper in group.items():
            if sum(len(g) for g in kept.values()) < HTTP_PROPERTIES:
                wrapper["timestamp"] = "STAMP_HERE"
                kept.setdefault(capability, {})[name] = wrapper
    vehicles = [{"vin": f"VIN_{i}_", "brand": "bmw", **kept} for i in range(HTTP_VEHICLES)]
    values = {
        "template": orjson.dumps(vehicles).decode(),
        "secret": secret,
        "vehicles": HTTP_FLEET,
        "per_request": HTTP_VEHICLES,
    }
    path.write_text(_LUA % values)


# The benchmark's points stored in the history (hot rows and sealed chunks); the demo
# sandbox's cars write there too.
HISTORY_POINTS = (
    "SELECT (SELECT count(*) FROM history_hot h JOIN history_series s ON s.id = h.series_id "
    "WHERE s.vin LIKE 'WBAHTTP%') + (SELECT coalesce(sum(c.count), 0) FROM history_chunks c "
    "JOIN history_series s ON s.id = c.series_id WHERE s.vin LIKE 'WBAHTTP%')"
)


async def _history_rows(url: str, schema: str | None) -> int:
    from autoport.kit.db import create_database

    db = create_database(url, schema=schema)
    await db.connect()
    try:
        return int(await db.fetch_value(HISTORY_POINTS))
    finally:
        await db.close()


def over_http(
    data_dir: Path, url: str, schema: str | None, seconds: float, changed: tuple[Changed, ...]
) -> tuple[float, int, int]:
    """POST /v1/ingest to the real `autoport serve`: (points stored per second, points
    acknowledged, points stored)."""
    secret = asyncio.run(_provider_secret(data_dir, url, schema))
    env = {"AUTOPORT_DATABASE_URL": url}
    if schema:
        env["AUTOPORT_DATABASE_SCHEMA"] = schema
    server = _serve.serve(data_dir, changed, env=env)
    try:
        script = data_dir / "ingest.lua"
        _wrk_script(script, secret)
        run = subprocess.run(
            [
                "taskset", "-c", _serve.CLIENT_CPUS, "wrk", "-t1", f"-c{CLIENTS}",
                f"-d{seconds:g}s", "-s", str(script), f"{server.base}/v1/ingest",
            ],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        if "Non-2xx" in run.stdout:
            raise RuntimeError(f"some ingest requests failed:\n{run.stdout}")
        found = re.search(r"(\d+) requests in", run.stdout)
        acknowledged = int(found.group(1)) * HTTP_VEHICLES * HTTP_PROPERTIES if found else 0
    finally:
        server.stop()
    # Points really stored, counted in the database, over the load's duration.
    stored = asyncio.run(_history_rows(url, schema))
    return stored / seconds, acknowledged, stored


async def _postgres(url: str) -> tuple[str, str] | None:
    import asyncpg

    try:
        conn = await asyncpg.connect(url, timeout=5)
    except Exception as error:
        print(f"  PostgreSQL skipped: {type(error).__name__}: {error}")
        return None
    await conn.close()
    return url, f"bench_{uuid.uuid4().hex[:10]}"


async def _drop(url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs, a smoke test")
    parser.add_argument("--postgres", default=os.environ.get("AUTOPORT_TEST_POSTGRES_URL", ""))
    _serve.add_arguments(parser)
    args = parser.parse_args()
    count = 30 if args.quick else 400
    seconds = 2.0 if args.quick else 8.0
    changed = _serve.changes(args)
    print(f"ingestion, batches of {BATCH} points")
    backends: list[tuple[str, str | None, str]] = []
    with tempfile.TemporaryDirectory(prefix="autoport-bench-") as tmp:
        backends.append((f"sqlite:///{tmp}/inproc.db", None, "sqlite"))
        if args.postgres:
            found = asyncio.run(_postgres(args.postgres))
            if found:
                backends.append((found[0], found[1], "postgresql"))
        try:
            figures: dict[str, float] = {}
            for url, schema, name in backends:
                subject, baseline = asyncio.run(in_process(url, schema, count))
                figures[f"{name}.in_process_points_per_s"] = subject
                print(
                    f"  in-process {name:<10} {subject:>9.0f} points/s   "
                    f"(bare history insert {baseline:>9.0f} rows/s)   "
                    f"target >= {TARGET_IN_PROCESS}"
                )
            _serve.announce(changed)
            _serve.pin()
            lost = 0
            for url, schema, name in backends:
                data_dir = Path(tmp) / f"http-{name}"
                data_dir.mkdir()
                http_url = f"sqlite:///{data_dir}/autoport.db" if schema is None else url
                http_schema = None if schema is None else schema + "_http"
                rate, acknowledged, stored = over_http(
                    data_dir, http_url, http_schema, seconds, changed
                )
                lost += max(0, acknowledged - stored)
                figures[f"{name}.http_points_per_s"] = rate
                figures[f"{name}.http_points_lost"] = max(0, acknowledged - stored)
                verdict = "met" if rate >= TARGET_HTTP and stored >= acknowledged else "NOT met"
                print(
                    f"  HTTP       {name:<10} {rate:>9.0f} points/s   (wrk, {CLIENTS} "
                    f"connections, {HTTP_VEHICLES} vehicles x {HTTP_PROPERTIES} properties a "
                    f"request; {acknowledged:,} acknowledged, {stored:,} stored"
                    f"{'' if stored >= acknowledged else ', POINTS LOST'}; target >= "
                    f"{TARGET_HTTP:,}: {verdict})"
                )
            print(f"load: {_serve.load_text()}")
            keep(figures)
            if lost:
                raise SystemExit(1)
        finally:
            for url, schema, _ in backends:
                if schema:
                    asyncio.run(_drop(url, schema))
                    asyncio.run(_drop(url, schema + "_http"))


if __name__ == "__main__":
    main()
