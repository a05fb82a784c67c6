"""Benchmark: data points per second into the store, in batches of 100 points.

- in-process: `ingest_vehicle_data` (validation, newest-wins merge, history, outbox, one
  transaction per batch), on SQLite and PostgreSQL; beside it the baseline of the same
  number of rows written bare into the history table (no validation, no merge).
- HTTP: `POST /v1/ingest` to one uvicorn process pinned to core 0, load from wrk (16
  connections) on core 1; points counted in the database afterwards.

    python -m bench.ingest                 # SQLite and, if reachable, PostgreSQL
    python -m bench.ingest --quick         # a few seconds, a smoke test
    AUTOPORT_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test python -m bench.ingest
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, cast

BATCH = 100
TARGET_IN_PROCESS = 30_000
TARGET_HTTP = 10_000
CLIENTS = 16


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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
local template = [[%(template)s]]
local headers = {["Authorization"] = "Bearer %(secret)s", ["Content-Type"] = "application/json"}
request = function()
  local vehicle = counter %% %(vehicles)d
  local second = math.floor(counter / %(vehicles)d)
  counter = counter + 1
  local vin = string.format("WBAHTTP%%010d", vehicle)
  local stamp = string.format("2024-05-01T%%02d:%%02d:%%02dZ",
    math.floor(second / 3600) %% 24, math.floor(second / 60) %% 60, second %% 60)
  local body = template:gsub("VIN_HERE", vin):gsub("STAMP_HERE", stamp)
  return wrk.format("POST", "/v1/ingest", headers, body)
end
"""


def _wrk_script(path: Path, secret: str) -> None:
    """A wrk script that posts batches of 100 points, each newer than its vehicle's last
    (one wrk thread, so the counter is one sequence)."""
    import orjson

    (_, data), *_ = batches(1, vehicles=1)
    for group in data.values():
        for wrapper in group.values():
            wrapper["timestamp"] = "STAMP_HERE"
    template = orjson.dumps({"vin": "VIN_HERE", "brand": "bmw", **data}).decode()
    path.write_text(_LUA % {"template": template, "secret": secret, "vehicles": 400})


# Points stored in the history (hot rows and sealed chunks).
HISTORY_POINTS = (
    "SELECT (SELECT count(*) FROM history_hot) "
    "+ (SELECT coalesce(sum(count), 0) FROM history_chunks)"
)


async def _history_rows(url: str, schema: str | None) -> int:
    from autoport.kit.db import create_database

    db = create_database(url, schema=schema)
    await db.connect()
    try:
        return int(await db.fetch_value(HISTORY_POINTS))
    finally:
        await db.close()


def over_http(data_dir: Path, url: str, schema: str | None, seconds: float) -> float:
    secret = asyncio.run(_provider_secret(data_dir, url, schema))
    port = _free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(data_dir),
        "AUTOPORT_DATABASE_URL": url,
        "AUTOPORT_ACCESS_LOG": "false",
        "AUTOPORT_LOG_LEVEL": "warning",
        # The demo sandbox would add background traffic and print credentials.
        "AUTOPORT_SANDBOX_DEMO": "false",
        "PYTHONPATH": os.getcwd(),
    }
    if schema:
        env["AUTOPORT_DATABASE_SCHEMA"] = schema
    server = subprocess.Popen(
        [
            "taskset",
            "-c",
            "0",
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "autoport.app:create_app",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        script = data_dir / "ingest.lua"
        _wrk_script(script, secret)
        run = subprocess.run(
            [
                "taskset", "-c", "1", "wrk", "-t1", f"-c{CLIENTS}", f"-d{seconds:g}s",
                "-s", str(script), f"http://127.0.0.1:{port}/v1/ingest",
            ],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        if "Non-2xx" in run.stdout:
            raise RuntimeError(f"some ingest requests failed:\n{run.stdout}")
        # Points really stored, counted in the database, over the load's duration.
        return asyncio.run(_history_rows(url, schema)) / seconds
    finally:
        server.terminate()
        server.wait(timeout=10)


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
    args = parser.parse_args()
    count = 30 if args.quick else 400
    seconds = 2.0 if args.quick else 8.0
    print(f"ingestion, batches of {BATCH} points")
    backends: list[tuple[str, str | None, str]] = []
    with tempfile.TemporaryDirectory(prefix="autoport-bench-") as tmp:
        backends.append((f"sqlite:///{tmp}/inproc.db", None, "sqlite"))
        if args.postgres:
            found = asyncio.run(_postgres(args.postgres))
            if found:
                backends.append((found[0], found[1], "postgresql"))
        try:
            for url, schema, name in backends:
                subject, baseline = asyncio.run(in_process(url, schema, count))
                print(
                    f"  in-process {name:<10} {subject:>9.0f} points/s   "
                    f"(bare history insert {baseline:>9.0f} rows/s)   "
                    f"target >= {TARGET_IN_PROCESS}"
                )
            for url, schema, name in backends:
                http_url = url.replace("inproc.db", "http.db")
                http_schema = None if schema is None else schema + "_http"
                data_dir = Path(tmp) / f"http-{name}"
                rate = over_http(data_dir, http_url, http_schema, seconds)
                print(
                    f"  HTTP       {name:<10} {rate:>9.0f} points/s   "
                    f"(wrk, {CLIENTS} connections, target >= {TARGET_HTTP})"
                )
        finally:
            for url, schema, _ in backends:
                if schema:
                    asyncio.run(_drop(url, schema))
                    asyncio.run(_drop(url, schema + "_http"))


if __name__ == "__main__":
    main()
