"""Benchmark: what the data-point history costs (autoport.history), on SQLite and
PostgreSQL.

1. **Bytes per point at rest.** A realistic mix from the simulator's physics
   (autoport/sandbox/physics.py, the sandbox's default equipment): a driving EV, a
   charging plug-in hybrid and a parked car reporting every second, and ten of each
   reporting every 30 s, each report holding the values that changed (what the sandbox
   sends), timestamps with sub-second jitter, arriving 0.2-2 s later. Each report goes
   through ingestion's own preparation (validation, normalized JSON, digest) into the
   history (`history.append`), and the worker's sealing runs every 10 simulated minutes
   as it would (`service.seal`, points an hour old). At checkpoints, everything is
   sealed and the history's tables are measured: SQLite with `dbstat` (pages of the
   tables and their indexes), PostgreSQL with `pg_total_relation_size` (heap, indexes
   and TOAST of every partition) after a VACUUM. The hot table's own allocation (an
   hour of points, reused) is shown apart.
2. **Ingestion over HTTP.** `POST /v1/ingest` of the real `autoport serve` with `make
   run`'s settings (bench/_serve.py: access log, demo sandbox, background workers),
   pinned to core 0; wrk on core 1 (16 connections) posts the 1-Hz reports of the three
   kinds (300 vehicles, each report newer than the last of its vehicle). Points/s are
   counted in the database. Beside it, in the same run, the storage before it
   (`--before`, default the commit before the history moved to chunks, 82f1b0b^),
   checked out into a temporary git worktree and served the same way.
3. **A history page** (1,000 points, newest first, and from a cursor at a random depth)
   of a vehicle holding 10 million points (eight properties at 1 Hz for the last 15
   days, the values of a simulated driving day repeated); wrk, one connection, against
   the real `autoport serve`. The first 5,000 points of each property are stored and
   sealed by the real path (`history.append`, `service.seal_series`); the rest are
   chunks encoded by the sealer's own function (`service.chunk_values`) and inserted
   directly, checked to be the bytes sealing makes of the same points: through the real
   path the 10 million points took about 20 minutes under load, so, 2-3 minutes.
4. **Retention of a day of a 1,000-car fleet** (the 30-s mix; one car of each kind's day
   sealed by the real path, its chunks copied to 1,000 cars) by a worker process
   (`history.retention.prune`) while wrk ingests into the server: how long it takes,
   and ingestion's points/s and latency during it against a quiet run just before.
5. **Moving an old table** (`autoport.history.migration`): rows of the row-per-point
   table (a database made at 0019, then migrated) moved into chunks: points/s.

    python -m bench history                  # SQLite and, if reachable, PostgreSQL
    python -m bench history --quick          # a smoke test: small, the server's parts
                                             # on SQLite only, no baseline checkout
    python -m bench history --only page,retention
                                             # those parts again, the others' figures
                                             # kept from the last run (each part
                                             # records its time and load average)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from autoport.history import codec, migration, partitions, repository
from autoport.history import service as history
from autoport.ingestion.service import prepare as prepare_points
from autoport.kit.clock import MICROS, to_iso
from autoport.kit.db import Database, create_database
from autoport.kit.migrate import upgrade
from autoport.sandbox.physics import Powertrain, Scenario, initial_state, step, step_rng
from autoport.sandbox.snapshot import (
    changed,
    equipped_properties,
    simulated_values,
    to_capabilities,
)
from bench.ingest import _postgres as postgres_reachable
from bench.retention import _drop as drop_schemas

RESULTS = Path("var/bench-results/history.json")
START_US = 1_767_225_600 * MICROS  # 2026-01-01T00:00:00Z
DAY_S = 86_400
PROFILE = "standard"  # the sandbox's default equipment
SEAL_AFTER_US = 3600 * MICROS
CHUNK_POINTS = 1000
BEFORE = "82f1b0b^"  # the last commit storing a row per point
TARGET_BYTES_PER_POINT = 8.0
TARGET_PAGE_P99_MS = 20.0
TARGET_RETENTION_SECONDS = 1.0
HTTP_VEHICLES = 300
HTTP_CONNECTIONS = 16
PARTS = ("bytes", "ingest", "page", "retention", "move")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


# --- the realistic mix ---------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    name: str
    scenario: Scenario
    powertrain: Powertrain


KINDS = (
    Kind("driving EV", Scenario.driving, Powertrain.electric),
    Kind("charging hybrid", Scenario.charging, Powertrain.plug_in_hybrid),
    Kind("parked car", Scenario.parked, Powertrain.combustion),
)


@dataclass
class Vehicle:
    """One simulated car: its physics, reporting what changed every `every` seconds."""

    vin: str
    kind: Kind
    every: int
    seed: int
    state: Any = None
    properties: list[str] = field(default_factory=list)
    last: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self.state = initial_state(self.kind.scenario, self.kind.powertrain, self.seed)
        self.properties = equipped_properties(self.kind.powertrain, PROFILE)
        self.rng = random.Random(self.seed)

    def values(self) -> dict[str, Any]:
        return simulated_values(self.state, self.properties, START_US)

    def report(self, second: int) -> tuple[int, int, dict[str, Any]] | None:
        """(timestamp, arrival, capabilities) of the report at `second`, None when
        nothing changed."""
        self.steps += 1
        self.state = step(self.state, float(self.every), step_rng(self.seed, self.steps))
        values = self.values()
        new = changed(self.last, values)
        self.last = values
        if not new:
            return None
        at = START_US + second * MICROS + self.rng.randint(0, 999_999)
        arrival = at + self.rng.randint(200_000, 2_000_000)
        return at, arrival, to_capabilities(new, to_iso(at))


def fleet(per_kind_30s: int) -> list[Vehicle]:
    vehicles = []
    for index, kind in enumerate(KINDS):
        vehicles.append(Vehicle(f"WBAHIST1HZ{index:07d}", kind, 1, seed=100 + index))
        for number in range(per_kind_30s):
            vin = f"WBAHIST30S{index:02d}{number:05d}"
            vehicles.append(Vehicle(vin, kind, 30, seed=1000 + 100 * index + number))
    return vehicles


def stored_points(vin: str, received: int, data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What ingestion stores of a report: its normalized points."""
    points, rejected = prepare_points(data, now_us=received)
    assert not rejected, rejected
    return [(p.capability, p.name, p.instant, p.digest, p.encoded.decode()) for p in points]


# --- measuring the history's tables ---------------------------------------------------------

_SQLITE_BYTES = """
SELECT coalesce(sum(d.pgsize), 0) FROM dbstat d JOIN sqlite_master m ON m.name = d.name
WHERE m.tbl_name IN ({tables})
"""


async def history_bytes(db: Database) -> dict[str, int]:
    """Bytes on disk of the history's tables: the series and chunks with their indexes
    (and TOAST), and the hot table apart."""
    if db.dialect == "sqlite":
        found = {}
        for part, tables in (
            ("chunks", "'history_series', 'history_chunks'"),
            ("hot", "'history_hot'"),
        ):
            found[part] = int(await db.fetch_value(_SQLITE_BYTES.format(tables=tables)))
        return found
    for table in ("history_series", "history_hot"):
        await db.reader.execute(f"VACUUM {table}")
    names = ["history_series"] + [
        partitions.name_of(day) for day in await partitions.list_days(db.reader)
    ]
    for name in names[1:]:
        await db.reader.execute(f"VACUUM {name}")
    rows = await db.fetch_all(
        "SELECT c.relname AS name, pg_total_relation_size(c.oid) AS total, "
        "pg_relation_size(c.oid) AS heap, pg_indexes_size(c.oid) AS indexes "
        "FROM pg_class c WHERE c.relnamespace = "
        "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
        "AND c.relname = ANY(CAST(:names AS text[]))",
        {"names": [*names, "history_hot"]},
    )
    found = {"chunks": 0, "hot": 0, "heap": 0, "indexes": 0, "toast": 0}
    for row in rows:
        total, heap, indexes = int(row["total"]), int(row["heap"]), int(row["indexes"])
        if row["name"] == "history_hot":
            found["hot"] = total
            continue
        found["chunks"] += total
        found["heap"] += heap
        found["indexes"] += indexes
        found["toast"] += total - heap - indexes
    return found


async def point_count(db: Database) -> int:
    return int(
        await db.fetch_value(
            "SELECT (SELECT count(*) FROM history_hot) "
            "+ (SELECT coalesce(sum(count), 0) FROM history_chunks)"
        )
    )


async def seal_everything(db: Database, now_us: int, *, before: int | None = None) -> int:
    """The worker's sealing at `now_us` (points an hour old), or everything received
    before `before`."""
    sealed = 0
    while True:
        done = await history.seal(
            db,
            now_us=now_us,
            seal_after_us=SEAL_AFTER_US if before is None else now_us - before,
            grace_us=60 * MICROS if before is None else now_us - before,
            target=CHUNK_POINTS,
            series_per_round=256,
        )
        sealed += done
        if not done:
            return sealed


# --- backends ------------------------------------------------------------------------------


@dataclass
class Store:
    """A database of its own for one part of the run: a SQLite file, or a schema."""

    name: str
    url: str
    schema: str | None
    data_dir: Path  # its server's (secrets; on SQLite the database too)
    db: Database | None = None

    async def open(self) -> Database:
        await upgrade(self.url, schema=self.schema)
        self.db = create_database(self.url, schema=self.schema, pool_size=4)
        await self.db.connect()
        return self.db

    async def close(self) -> None:
        if self.db is not None:
            await self.db.close()
            self.db = None

    @property
    def env(self) -> dict[str, str]:
        if self.schema is None:
            return {}
        return {"AUTOPORT_DATABASE_URL": self.url, "AUTOPORT_DATABASE_SCHEMA": self.schema}


def stores(base: Path, postgres: str | None, label: str) -> list[Store]:
    """A SQLite store and, with `postgres`, a PostgreSQL one, each in a data directory
    of its own under `base / label`."""
    sqlite_dir = base / label / "sqlite"
    sqlite_dir.mkdir(parents=True, exist_ok=True)
    found = [Store("SQLite", f"sqlite:///{sqlite_dir / 'autoport.db'}", None, sqlite_dir)]
    if postgres:
        pg_dir = base / label / "postgresql"
        pg_dir.mkdir(parents=True, exist_ok=True)
        schema = f"bench_hist_{label}_{uuid.uuid4().hex[:8]}"
        found.append(Store("PostgreSQL", postgres, schema, pg_dir))
    return found


# --- 1. bytes per point ----------------------------------------------------------------------


async def bytes_per_point(
    targets: list[Store], days: float, per_kind_30s: int, checkpoints: int
) -> dict[str, Any]:
    """Feeds the mix to every store at once (one physics run); returns per store the
    curve [(points, bytes at rest, hot bytes)] and the final figures."""
    dbs = [await store.open() for store in targets]
    vehicles = fleet(per_kind_30s)
    seconds = int(days * DAY_S)
    curve: dict[str, list[dict[str, float]]] = {store.name: [] for store in targets}
    offered = 0
    started = time.perf_counter()
    pending: list[tuple[str, int, list[tuple[Any, ...]]]] = []
    every_checkpoint = max(seconds // checkpoints, 600)
    try:
        for second in range(seconds + 1):
            for vehicle in vehicles:
                if second % vehicle.every:
                    continue
                report = vehicle.report(second)
                if report is not None:
                    _, arrival, data = report
                    points = stored_points(vehicle.vin, arrival, data)
                    pending.append((vehicle.vin, arrival, points))
                    offered += len(points)
            if second % 60 == 59 or second == seconds:
                for db in dbs:
                    async with db.transaction() as conn:
                        for vin, arrival, points in pending:
                            await history.append(
                                conn, environment="production", vin=vin, received_at=arrival,
                                points=points,
                            )  # fmt: skip
                pending = []
            now = START_US + second * MICROS
            if second % 600 == 599:
                for db in dbs:
                    await seal_everything(db, now)
            if second and (second % every_checkpoint == 0 or second == seconds):
                for store, db in zip(targets, dbs, strict=True):
                    await seal_everything(db, now, before=history.FAR_FUTURE)
                    sizes = await history_bytes(db)
                    count = await point_count(db)
                    curve[store.name].append(
                        {
                            "points": count,
                            "bytes": sizes["chunks"],
                            "hot_bytes": sizes["hot"],
                            "bytes_per_point": sizes["chunks"] / count,
                            **{k: v for k, v in sizes.items() if k not in ("chunks", "hot")},
                        }
                    )
                print(
                    f"  {second / DAY_S:5.2f} days simulated, {offered:,} points, "
                    + ", ".join(
                        f"{name}: {points[-1]['bytes_per_point']:.2f} B/point"
                        for name, points in curve.items()
                    )
                    + f" ({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
        result = {}
        for store, db in zip(targets, dbs, strict=True):
            last = curve[store.name][-1]
            chunks = await db.fetch_value("SELECT count(*) FROM history_chunks")
            series = await db.fetch_value("SELECT count(*) FROM history_series")
            result[store.name] = {
                **last,
                "chunks": int(chunks),
                "series": int(series),
                "curve": curve[store.name],
            }
        return {
            "vehicle_days": len(vehicles) * days,
            "vehicles": {
                "1 Hz": [v.kind.name for v in vehicles if v.every == 1],
                "30 s": len([v for v in vehicles if v.every == 30]),
            },
            "offered_points": offered,
            "stores": result,
        }
    finally:
        for store in targets:
            await store.close()


def report_bytes(figures: dict[str, Any]) -> None:
    print(
        f"bytes per point at rest: {figures['vehicle_days']:.1f} vehicle-days "
        f"(1 Hz: {', '.join(figures['vehicles']['1 Hz'])}; 30 s: "
        f"{figures['vehicles']['30 s']} cars of the three kinds), "
        f"{figures['offered_points']:,} points"
    )
    for name, found in figures["stores"].items():
        parts = ""
        if "heap" in found:
            parts = (
                f" (heap {found['heap'] / found['points']:.2f}, indexes "
                f"{found['indexes'] / found['points']:.2f}, TOAST "
                f"{found['toast'] / found['points']:.2f})"
            )
        verdict = "met" if found["bytes_per_point"] <= TARGET_BYTES_PER_POINT else "NOT MET"
        print(
            f"  {name:<10} {found['bytes_per_point']:6.2f} B/point{parts}: "
            f"{found['bytes'] / 1e6:.1f} MB for {found['points']:,} points in "
            f"{found['chunks']:,} chunks of {found['series']:,} series; target <= "
            f"{TARGET_BYTES_PER_POINT:g}: {verdict}. Hot table allocated: "
            f"{found['hot_bytes'] / 1e6:.1f} MB (about an hour of points, reused)"
        )


# --- the real server ----------------------------------------------------------------------


@contextlib.contextmanager
def serving(tree: Path, store: Store, changed: tuple[Any, ...] = ()) -> Iterator[str]:
    """`autoport serve` of the source tree `tree` (bench._serve: make run's settings but
    `changed`, core 0) on the store; its base URL."""
    from bench._serve import serve

    with contextlib.chdir(tree):  # the server's code is the tree's (PYTHONPATH: here)
        served = serve(store.data_dir, changed, env=store.env)
    try:
        yield served.base
    finally:
        served.stop()


_PERCENTILES = re.compile(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk(url: str, script: Path | None, seconds: float, connections: int) -> dict[str, float]:
    command = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s"]
    command += ["--latency", "--timeout", "10s"]
    if script is not None:
        command += ["-s", str(script)]
    run = subprocess.run([*command, url], check=True, capture_output=True, text=True)
    out = run.stdout
    figures = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}  # type: ignore[union-attr]
    for percentile, value, unit in _PERCENTILES.findall(out):
        figures[f"p{percentile}_ms"] = float(value) * _UNITS[unit]
    maximum = re.search(r"Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)", out)
    if maximum:
        figures["max_ms"] = float(maximum.group(1)) * _UNITS[maximum.group(2)]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    figures["non_2xx"] = float(bad.group(1)) if bad else 0.0
    if figures["non_2xx"]:
        raise RuntimeError(f"{url}: {figures['non_2xx']:.0f} requests failed\n{out}")
    return figures


# --- 2. ingestion over HTTP -------------------------------------------------------------------


def report_bodies(count_per_kind: int) -> list[str]:
    """Bodies of POST /v1/ingest: consecutive 1-Hz reports of each kind, each with the
    placeholders VIN_HERE and STAMP_HERE (one timestamp per report, as the sandbox)."""
    bodies = []
    for index, kind in enumerate(KINDS):
        vehicle = Vehicle(f"WBAHTTP{index:010d}", kind, 1, seed=7 + index)
        made = 0
        second = 0
        while made < count_per_kind:
            second += 1
            found = vehicle.report(second)
            if found is None:
                continue
            data = to_capabilities(_flat(found[2]), "STAMP_HERE")
            bodies.append(orjson.dumps({"vin": "VIN_HERE", "brand": "bmw", **data}).decode())
            made += 1
    return bodies


def _flat(capabilities: dict[str, Any]) -> dict[str, Any]:
    """{"cap.prop": data} of a report's capabilities (wrappers dropped)."""
    flat = {}
    for capability, members in capabilities.items():
        for name, wrapper in members.items():
            if isinstance(wrapper, list):
                flat[f"{capability}.{name}"] = [w["data"] for w in wrapper]
            else:
                flat[f"{capability}.{name}"] = wrapper["data"]
    return flat


_INGEST_LUA = """
local bodies = {%(bodies)s}
local headers = {["Authorization"] = "Bearer %(secret)s", ["Content-Type"] = "application/json"}
local counter = 0
request = function()
  local vehicle = counter %% %(vehicles)d
  local round = math.floor(counter / %(vehicles)d)
  counter = counter + 1
  local vin = string.format("WBAHTTP%%010d", vehicle)
  local at = %(start)d + round
  local stamp = os.date("!%%Y-%%m-%%dT%%H:%%M:%%S", at) .. string.format(".%%06dZ", vehicle)
  local body = bodies[(counter %% #bodies) + 1]:gsub("VIN_HERE", vin):gsub("STAMP_HERE", stamp)
  return wrk.format("POST", "/v1/ingest", headers, body)
end
"""


@dataclass
class IngestLoad:
    """wrk scripts posting the reports; each run's reports start 10,000 s after the
    previous run's (a month ago), so no run repeats another's points."""

    directory: Path
    bodies: list[str]
    secret: str
    runs: int = 0

    def script(self) -> Path:
        start = int(time.time()) - 30 * DAY_S + self.runs * 10_000
        quoted = ",".join(f"[==[{body}]==]" for body in self.bodies)
        path = self.directory / f"ingest-{self.runs}.lua"
        path.write_text(
            _INGEST_LUA
            % {"bodies": quoted, "secret": self.secret, "vehicles": HTTP_VEHICLES, "start": start}
        )
        self.runs += 1
        return path

    def run(self, base: str, seconds: float) -> dict[str, float]:
        return wrk(f"{base}/v1/ingest", self.script(), seconds, HTTP_CONNECTIONS)


def provider_secret(tree: Path, store: Store) -> str:
    """A new ingest provider's secret, made by the tree's own code."""
    made = subprocess.run(
        [sys.executable, "-c", _PROVIDER, str(store.data_dir), store.url, store.schema or ""],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        check=True,
        capture_output=True,
        text=True,
    )
    return made.stdout.strip().splitlines()[-1]


_PROVIDER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from bench.ingest import _provider_secret
    print(asyncio.run(_provider_secret(Path(sys.argv[1]), sys.argv[2], sys.argv[3] or None)))
    """
)

# Points of the HTTP vehicles, in either storage.
_NEW_COUNT = """
SELECT (SELECT count(*) FROM history_hot h JOIN history_series s ON s.id = h.series_id
        WHERE s.vin LIKE 'WBAHTTP%')
     + (SELECT coalesce(sum(c.count), 0) FROM history_chunks c
        JOIN history_series s ON s.id = c.series_id WHERE s.vin LIKE 'WBAHTTP%')
"""
_OLD_COUNT = "SELECT count(*) FROM vehicle_data_history WHERE vin LIKE 'WBAHTTP%'"


async def http_points(store: Store) -> int:
    db = create_database(store.url, schema=store.schema, pool_size=1)
    await db.connect()
    try:
        tables = await db.fetch_all(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            if db.dialect == "sqlite"
            else "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()"
        )
        names = {str(row["name"]) for row in tables}
        return int(await db.fetch_value(_NEW_COUNT if "history_hot" in names else _OLD_COUNT))
    finally:
        await db.close()


def ingest_over_http(
    tree: Path, store: Store, bodies: list[str], seconds: float
) -> dict[str, float]:
    """Points/s stored through POST /v1/ingest of the tree's `autoport serve`."""
    load = IngestLoad(store.data_dir, bodies, provider_secret(tree, store))
    with serving(tree, store) as base:
        load.run(base, 2)  # warm-up
        before = asyncio.run(http_points(store))
        figures = load.run(base, seconds)
        stored = asyncio.run(http_points(store)) - before
    figures["points_per_second"] = stored / seconds
    figures["points_per_request"] = stored / (figures["rps"] * seconds)
    return figures


@contextlib.contextmanager
def checkout(commit: str) -> Iterator[Path]:
    """The tree of `commit` in a temporary git worktree."""
    where = Path(tempfile.mkdtemp(prefix="autoport-before-"))
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(where / "tree"), commit],
        check=True,
        capture_output=True,
    )
    try:
        yield where / "tree"
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(where / "tree")], capture_output=True
        )
        shutil.rmtree(where, ignore_errors=True)


# --- 3. a page of a vehicle with 10 million points -----------------------------------------

PAGE_PROPERTIES = (
    "charging.battery_level",
    "charging.battery_energy",
    "charging.max_range",
    "charging.charging_rate",
    "diagnostics.odometer",
    "diagnostics.low_voltage_battery_charge_level",
    "charging.time_to_complete_charge",
    "climate.hvac_state",
)


def driving_day(seconds: int) -> dict[str, list[Any]]:
    """The value of each page property every second of a simulated driving EV."""
    vehicle = Vehicle("WBAHISTDAY0000000", KINDS[0], 1, seed=42)
    vehicle.properties = sorted(set(vehicle.properties) | set(PAGE_PROPERTIES))
    values: dict[str, list[Any]] = {key: [] for key in PAGE_PROPERTIES}
    for second in range(seconds):
        vehicle.state = step(vehicle.state, 1.0, step_rng(42, second + 1))
        now = vehicle.values()
        for key in PAGE_PROPERTIES:
            values[key].append(now.get(key))
    return values


def _wrapper(data: Any, at: int) -> str:
    return orjson.dumps({"data": data, "timestamp": to_iso(at)}).decode()


def page_start() -> int:
    """The 10-million-point vehicle's first second (µs): far enough back for its points
    (1.25 million seconds a property) to end before now, recent enough that the served
    server's retention (90 days by default, run at its start) keeps them all."""
    today = int(time.time()) // DAY_S
    return (today - 20) * DAY_S * MICROS


# The first points of each property are written and sealed by the real path; the rest
# are chunks made by the sealer's own encoding (service.chunk_values) and inserted
# directly, a hundred times faster: the check below holds them to what sealing wrote.
SEALED_BY_THE_REAL_PATH = 5 * CHUNK_POINTS


def _page_points(
    key: str, day: dict[str, list[Any]], start_us: int, first: int, count: int
) -> list[history.Point]:
    """Points `first` to `first + count` of the property (1 Hz); each chunk's worth
    arrives 0.5 s after its last point."""
    values = day[key]
    stamps = [start_us + second * MICROS for second in range(first, first + count)]
    points = []
    for second, at, iso in zip(
        range(first, first + count), stamps, codec.iso_many(stamps), strict=True
    ):
        data = values[second % len(values)]
        block_end = (second // CHUNK_POINTS + 1) * CHUNK_POINTS - 1
        received = start_us + block_end * MICROS + 500_000
        text = orjson.dumps({"data": data if data is not None else 0, "timestamp": iso})
        points.append(history.Point(at, text.decode(), received, history.HOT, second))
    return points


async def fill_vehicle(
    db: Database, vin: str, total: int, day: dict[str, list[Any]], start_us: int
) -> int:
    """`total` points of the page properties at 1 Hz from `start_us` (the day's values
    repeated): the first SEALED_BY_THE_REAL_PATH of each property through history.append
    and service.seal_series, the rest as chunks encoded as the sealer does, inserted."""
    per_property = total // len(PAGE_PROPERTIES)
    real = min(SEALED_BY_THE_REAL_PATH, per_property)
    for key in PAGE_PROPERTIES:
        capability, _, prop = key.partition(".")
        sid = history.series_id("production", vin, capability, prop)
        points = _page_points(key, day, start_us, 0, real)
        for first in range(0, real, CHUNK_POINTS):
            batch = points[first : first + CHUNK_POINTS]
            rows = [
                (capability, prop, p.timestamp, history.digest_hex(history.digest_of(p.value)),
                 p.value)
                for p in batch
            ]  # fmt: skip
            async with db.transaction() as conn:
                await history.append(
                    conn, environment="production", vin=vin,
                    received_at=batch[0].received_at, points=rows,
                )  # fmt: skip
        while await history.seal_series(db, sid, before=history.FAR_FUTURE, target=CHUNK_POINTS):
            pass
        # The sealer's chunks hold these points (after the few the vehicle had), and
        # the direct writing below makes the same bytes of the same points.
        blobs = [
            bytes(row["data"])
            for row in await db.fetch_all(
                "SELECT data FROM history_chunks WHERE series_id = :s ORDER BY first_ts",
                {"s": sid},
            )
        ]
        held = []
        for blob in blobs:
            chunk = codec.decode(blob)
            again = list(zip(chunk.timestamps, chunk.values, chunk.received, strict=True))
            made = [history.Point(t, v, r, history.HOT, i) for i, (t, v, r) in enumerate(again)]
            assert history.chunk_values(sid, made)["data"] == blob, key
            held += again
        assert held[len(held) - real :] == [(p.timestamp, p.value, p.received_at) for p in points]
        for first in range(real, per_property, 50 * CHUNK_POINTS):
            count = min(50 * CHUNK_POINTS, per_property - first)
            points = _page_points(key, day, start_us, first, count)
            chunks = [
                history.chunk_values(sid, points[i : i + CHUNK_POINTS])
                for i in range(0, count, CHUNK_POINTS)
            ]
            await partitions.ensure(db, [c["received_max"] for c in chunks])
            async with db.transaction() as conn:
                await repository.add_chunks(conn, chunks)
    return per_property * len(PAGE_PROPERTIES)


_PAGE_LUA = """
local paths = {%(paths)s}
local headers = {["Authorization"] = "Bearer %(token)s"}
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", paths[(counter %% #paths) + 1], headers)
end
"""


def page_script(path: Path, token: str, paths: list[str]) -> None:
    quoted = ",".join(f'"{p}"' for p in paths)
    path.write_text(_PAGE_LUA % {"paths": quoted, "token": token})


async def page_setup(store: Store, total: int, day: dict[str, list[Any]]) -> dict[str, Any]:
    """The vehicle of bench.vehicle_data_pull (its consent token reads the page
    properties), filled with `total` points; the paths of newest-first pages and of
    pages from cursors at random depths."""
    from autoport.app import create_app
    from autoport.kit.paging import encode_cursor
    from bench._pull_apps import bench_settings
    from bench.vehicle_data_pull import VIN, prepare

    settings = bench_settings(store.data_dir, store.schema and store.url, store.schema)
    token, _ = await prepare(store.data_dir, settings)
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        state = app.state.autoport
        db = state.database
        started = time.perf_counter()
        start_us = page_start()
        written = await fill_vehicle(db, VIN, total, day, start_us)
        took = time.perf_counter() - started
        app_id = str(await db.fetch_value("SELECT id FROM applications LIMIT 1"))
        key = PAGE_PROPERTIES[0]
        per_property = written // len(PAGE_PROPERTIES)
        scope = ("history", "production", app_id, VIN, key)
        rng = random.Random(5)
        base = f"/v1/vehicle-data/autoapi-13/{VIN}/history?property={key}&limit=1000"
        cursors = []
        values = day[key]
        for _ in range(200):
            second = rng.randrange(1000, per_property)
            at = start_us + second * MICROS
            data = values[second % len(values)]
            text = _wrapper(data if data is not None else 0, at)
            digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
            cursors.append(encode_cursor(state.token_key, scope, [at, digest]))
        chunks = int(await db.fetch_value("SELECT count(*) FROM history_chunks"))
        stored = await point_count(db)
    return {
        "token": token,
        "newest": [base],
        "cursor": [f"{base}&cursor={cursor}" for cursor in cursors],
        "points": stored,
        "chunks": chunks,
        "fill_seconds": took,
        "property_points": per_property,
    }


def page_latency(store: Store, setup: dict[str, Any], seconds: float) -> dict[str, Any]:
    import httpx

    found: dict[str, Any] = {}
    data_dir = store.data_dir
    from bench._serve import Changed

    # One application reads hundreds of pages a second: over make run's 600 a minute.
    raised = Changed(
        "AUTOPORT_VEHICLE_DATA_RATE_LIMIT",
        "100000000/minute",
        "one application reads pages back to back: the limiter runs on every page but "
        "never refuses",
    )
    with serving(Path.cwd(), store, (raised,)) as base:
        headers = {"Authorization": f"Bearer {setup['token']}"}
        for name in ("newest", "cursor"):
            probe = httpx.get(base + setup[name][0], headers=headers, timeout=60)
            assert probe.status_code == 200, probe.text[:300]
            assert len(probe.json()["values"]) == 1000
            script = data_dir / f"page-{name}.lua"
            page_script(script, setup["token"], setup[name])
            wrk(base + setup[name][0], script, 1, 1)  # warm-up
            found[name] = wrk(base + setup[name][0], script, seconds, 1)
    return found


# --- 4. retention of a 1,000-car day ---------------------------------------------------------


def retention_day() -> int:
    """The start (µs) of the fleet's day: 91 days ago, past the default retention of 90
    days (the server's own pruner runs at its start, before the day is written)."""
    today = int(time.time()) // DAY_S
    return (today - 91) * DAY_S * MICROS


async def template_chunks(db: Database, day_start: int) -> list[dict[str, Any]]:
    """One car of each kind reporting every 30 s for the day from `day_start`, stored
    and sealed by the real path; their chunk rows with series names."""
    vehicles = [
        Vehicle(f"WBAHISTTPL{i:07d}", kind, 30, seed=500 + i) for i, kind in enumerate(KINDS)
    ]
    offset = (day_start - START_US) // MICROS
    for second in range(0, DAY_S, 30):
        async with db.transaction() as conn:
            for vehicle in vehicles:
                report = vehicle.report(offset + second)
                if report is not None:
                    _, arrival, data = report
                    await history.append(
                        conn, environment="production", vin=vehicle.vin, received_at=arrival,
                        points=stored_points(vehicle.vin, arrival, data),
                    )  # fmt: skip
        if second % 3600 == 3570:
            await seal_everything(db, START_US + (offset + second) * MICROS)
    await seal_everything(db, START_US + (offset + DAY_S) * MICROS, before=history.FAR_FUTURE)
    rows = await db.fetch_all(
        "SELECT s.vin, s.capability, s.property, c.last_ts, c.received_max, c.first_ts, "
        "c.count, c.data FROM history_chunks c JOIN history_series s ON s.id = c.series_id "
        "WHERE s.vin LIKE 'WBAHISTTPL%'"
    )
    async with db.transaction() as conn:
        await conn.execute(
            "DELETE FROM history_chunks WHERE series_id IN "
            "(SELECT id FROM history_series WHERE vin LIKE 'WBAHISTTPL%')"
        )
        await conn.execute("DELETE FROM history_series WHERE vin LIKE 'WBAHISTTPL%'")
    return [dict(row) for row in rows]


async def fleet_day(db: Database, cars: int) -> int:
    """`cars` cars' day of chunks (the templates' copied, a third of each kind);
    returns the points."""
    templates = await template_chunks(db, retention_day())
    by_vin: dict[str, list[dict[str, Any]]] = {}
    for row in templates:
        by_vin.setdefault(str(row["vin"]), []).append(row)
    kinds = sorted(by_vin)
    points = 0
    await partitions.ensure(db, [int(row["received_max"]) for row in templates])
    for car in range(cars):
        vin = f"WBAFLEET{car:09d}"
        async with db.transaction() as conn:
            for row in by_vin[kinds[car % len(kinds)]]:
                sid = history.series_id("production", vin, row["capability"], row["property"])
                await conn.execute(
                    "INSERT INTO history_series (id, environment, vin, capability, property) "
                    "VALUES (:id, 'production', :vin, :c, :p) ON CONFLICT DO NOTHING",
                    {"id": sid, "vin": vin, "c": row["capability"], "p": row["property"]},
                )
                await conn.execute(
                    "INSERT INTO history_chunks (series_id, last_ts, received_max, first_ts, "
                    "count, id, data) VALUES (:s, :l, :r, :f, :n, :i, :d)",
                    {
                        "s": sid, "l": row["last_ts"], "r": row["received_max"],
                        "f": row["first_ts"], "n": row["count"],
                        "i": random.getrandbits(63), "d": bytes(row["data"]),
                    },
                )  # fmt: skip
                points += int(row["count"])
    return points


# A worker process's retention round (`autoport worker --only history` runs it every
# hour): the real clock and the default settings; it prunes when told on stdin.
_PRUNER = textwrap.dedent(
    """
    import asyncio, sys, time
    from autoport.config import Settings
    from autoport.history.retention import prune
    from autoport.kit.db import create_database
    from autoport.kit.state import AppState

    async def main(data_dir, url, schema):
        settings = Settings(data_dir=data_dir, database_url=url or None,
                            database_schema=schema or None)
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        await db.connect()
        try:
            state = AppState(settings=settings, database=db)
            print("ready", flush=True)
            sys.stdin.readline()
            started = time.perf_counter()
            points = await prune(state)
            print(points, time.perf_counter() - started, flush=True)
        finally:
            await db.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
    """
)


def retention_under_load(
    store: Store, cars: int, bodies: list[str], seconds: float
) -> dict[str, Any]:
    """The server ingests under wrk; a worker process prunes the fleet's day 2 s into a
    run; the run just before is the quiet one."""
    import threading

    load = IngestLoad(store.data_dir, bodies, provider_secret(Path.cwd(), store))
    with serving(Path.cwd(), store) as base:
        time.sleep(3)  # its own first retention round, at its start, is over

        async def fill() -> int:
            db = await store.open()
            try:
                return await fleet_day(db, cars)
            finally:
                await store.close()

        started = time.perf_counter()
        points = asyncio.run(fill())
        filled = time.perf_counter() - started
        pruner = subprocess.Popen(
            [sys.executable, "-c", _PRUNER, str(store.data_dir),
             (store.schema and store.url) or "", store.schema or ""],
            env={**os.environ, "PYTHONPATH": os.getcwd()},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert pruner.stdin is not None and pruner.stdout is not None
        assert pruner.stdout.readline().strip() == "ready"
        load.run(base, 2)  # warm-up
        quiet = load.run(base, seconds)
        during: dict[str, float] = {}
        runner = threading.Thread(target=lambda: during.update(load.run(base, seconds)))
        runner.start()
        time.sleep(2.0)
        pruner.stdin.write("go\n")
        pruner.stdin.flush()
        deleted, took = pruner.stdout.readline().split()
        runner.join()
        pruner.wait(timeout=60)
    return {
        "cars": cars,
        "points": points,
        "fill_seconds": filled,
        "deleted": int(deleted),
        "seconds": float(took),
        "quiet": quiet,
        "during": during,
        "overlapped": float(took) < seconds - 2.0,
    }


# --- 5. moving an old table -------------------------------------------------------------------

_OLD_INSERT = """
INSERT INTO vehicle_data_history
    (environment, vin, capability, property, timestamp, digest, value, received_at)
VALUES (:environment, :vin, :capability, :property, :timestamp, :digest, :value, :received_at)
ON CONFLICT (environment, vin, capability, property, timestamp, digest) DO NOTHING
"""


async def move_old_table(store: Store, rows: int, day: dict[str, list[Any]]) -> dict[str, Any]:
    """A database made at 0019 with `rows` points in its old table (the driving day's
    values of eight properties), migrated, then moved."""
    await upgrade(store.url, schema=store.schema, revision="0019")
    db = create_database(store.url, schema=store.schema, pool_size=4)
    await db.connect()
    try:
        batch = []
        per_property = rows // len(PAGE_PROPERTIES)
        for key in PAGE_PROPERTIES:
            capability, _, prop = key.partition(".")
            for second in range(per_property):
                at = START_US + second * MICROS
                value = day[key][second % len(day[key])]
                text = _wrapper(value if value is not None else 0, at)
                batch.append(
                    {
                        "environment": "production", "vin": "WBAHISTOLD0000001",
                        "capability": capability, "property": prop, "timestamp": at,
                        "digest": hashlib.blake2b(text.encode(), digest_size=8).hexdigest(),
                        "value": text, "received_at": at + 700_000,
                    }
                )  # fmt: skip
                if len(batch) == 10_000:
                    async with db.transaction() as conn:
                        await conn.execute_many(_OLD_INSERT, batch)
                    batch = []
        if batch:
            async with db.transaction() as conn:
                await conn.execute_many(_OLD_INSERT, batch)
    finally:
        await db.close()
    await upgrade(store.url, schema=store.schema)
    db = create_database(store.url, schema=store.schema, pool_size=4)
    await db.connect()
    try:
        mover = migration.Mover(
            db, target=CHUNK_POINTS, now_us=lambda: time.time_ns() // 1000, drop_after_us=0
        )
        assert await mover.claim()
        started = time.perf_counter()
        moved = 0
        while not mover.done:
            with contextlib.suppress(history.SealConflict):
                moved += await mover.step()
            await asyncio.sleep(migration.PAUSE_SECONDS)
        took = time.perf_counter() - started
    finally:
        await db.close()
    return {"rows": moved, "seconds": took, "points_per_second": moved / took}


# --- the run ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs, a smoke test")
    parser.add_argument("--postgres", default=os.environ.get("AUTOPORT_TEST_POSTGRES_URL", ""))
    parser.add_argument("--days", type=float, default=2.0, help="simulated days of the mix")
    parser.add_argument("--page-points", type=int, default=10_000_000)
    parser.add_argument("--cars", type=int, default=1000, help="the fleet retention drops")
    parser.add_argument("--seconds", type=float, default=8.0, help="per HTTP measurement")
    parser.add_argument("--move-rows", type=int, default=1_000_000)
    parser.add_argument(
        "--before", default=BEFORE, help="the commit whose storage ingestion is compared with"
    )
    parser.add_argument("--no-before", action="store_true", help="skip that comparison")
    parser.add_argument(
        "--only",
        default=",".join(PARTS),
        help=f"the parts to run, of {','.join(PARTS)}; the others' figures are kept from the "
        "last run in var/bench-results/history.json (each part records its own time and load)",
    )
    args = parser.parse_args()
    only = [part.strip() for part in args.only.split(",") if part.strip()]
    if unknown := set(only) - set(PARTS):
        parser.error(f"--only: no part {', '.join(sorted(unknown))} (parts: {', '.join(PARTS)})")
    per_kind_30s, checkpoints = 10, 8
    if args.quick:
        # A smoke test: every part runs, small; the server's parts on SQLite only.
        args.days, args.page_points, args.cars = 0.01, 16_000, 5
        args.seconds, args.move_rows, args.no_before = 1.0, 4_000, True
        per_kind_30s, checkpoints = 2, 2
    if shutil.which("wrk") is None or shutil.which("taskset") is None:
        sys.exit("needs wrk and taskset (apt-get install -y wrk util-linux)")
    postgres = (
        args.postgres if args.postgres and asyncio.run(postgres_reachable(args.postgres)) else None
    )  # (it says why it is skipped)
    from bench._figures import keep
    from bench._serve import announce

    announce(())
    print(f"history storage; {load()} at the start", flush=True)
    results: dict[str, Any] = {"parts": {}, "quick": args.quick, "started_at": time.time()}
    results["load_start"] = os.getloadavg()[0]
    results["cores"] = os.cpu_count()
    results["command"] = "python -m bench history" + (" --quick" if args.quick else "")
    if set(only) != set(PARTS):
        results["command"] += " (parts run apart: --only)"
    served_on = None if args.quick else postgres  # the parts with a server
    schemas: list[str] = []

    def part_started() -> tuple[float, float]:
        return time.time(), os.getloadavg()[0]

    def part_done(part: str, started: tuple[float, float]) -> None:
        results["parts"][part] = {
            "started_at": started[0],
            "seconds": time.time() - started[0],
            "load_start": started[1],
            "load_end": os.getloadavg()[0],
        }
        results["load_end"] = os.getloadavg()[0]
        if not args.quick:
            save(results, whole=set(only) == set(PARTS))

    def fresh(label: str, url: str | None) -> list[Store]:
        made = stores(base, url, label)
        schemas.extend(store.schema for store in made if store.schema)
        return made

    with tempfile.TemporaryDirectory(prefix="autoport-bench-history-") as tmp:
        base = Path(tmp)
        if {"ingest", "retention"} & set(only):
            bodies = report_bodies(60 if args.quick else 400)
        if {"page", "move"} & set(only):
            day = driving_day(min(DAY_S, max(args.page_points // len(PAGE_PROPERTIES), 600)))
        try:
            # 1. bytes per point
            if "bytes" in only:
                started = part_started()
                targets = fresh("sizes", postgres)
                sizes = asyncio.run(bytes_per_point(targets, args.days, per_kind_30s, checkpoints))
                report_bytes(sizes)
                print(f"  {load()}", flush=True)
                results["bytes"] = sizes
                part_done("bytes", started)

            # 2. ingestion over HTTP, beside the storage before
            if "ingest" in only:
                started = part_started()
                results["ingest"] = {}
                trees = [("now", Path.cwd())]
                with contextlib.ExitStack() as stack:
                    if not args.no_before:
                        trees.append((args.before, stack.enter_context(checkout(args.before))))
                    for label, tree in trees:
                        for store in fresh(f"http{len(results['ingest'])}", served_on):
                            found = ingest_over_http(tree, store, bodies, args.seconds)
                            results["ingest"][f"{label} {store.name}"] = found
                            print(
                                f"ingestion over HTTP ({label}, {store.name}): "
                                f"{found['points_per_second']:,.0f} points/s "
                                f"({found['rps']:,.0f} requests/s, "
                                f"{found['points_per_request']:.1f} points each, "
                                f"p50 {found['p50_ms']:.1f} ms, p99 {found['p99_ms']:.1f} ms); "
                                f"{load()}",
                                flush=True,
                            )
                part_done("ingest", started)

            # 3. pages of a vehicle with 10 million points
            if "page" in only:
                started = part_started()
                results["page"] = {}
                for store in fresh("page", served_on):
                    setup = asyncio.run(page_setup(store, args.page_points, day))
                    answer = page_latency(store, setup, args.seconds)
                    results["page"][store.name] = {
                        **answer,
                        **{
                            k: setup[k]
                            for k in ("points", "chunks", "fill_seconds", "property_points")
                        },
                    }
                    for name, label in (("newest", "newest first"), ("cursor", "from a cursor")):
                        page = answer[name]
                        verdict = "met" if page["p99_ms"] < TARGET_PAGE_P99_MS else "NOT MET"
                        print(
                            f"history page, 1,000 points {label} ({store.name}, a vehicle of "
                            f"{setup['points']:,} points, the property's "
                            f"{setup['property_points']:,}): "
                            f"p50 {page['p50_ms']:.2f} ms, p99 {page['p99_ms']:.2f} ms "
                            f"({page['rps']:,.0f} pages/s, one connection); target p99 < "
                            f"{TARGET_PAGE_P99_MS:g} ms: {verdict}",
                            flush=True,
                        )
                    print(
                        f"  (the {setup['points']:,} points written in "
                        f"{setup['fill_seconds']:.0f} s, {setup['chunks']:,} chunks); {load()}",
                        flush=True,
                    )
                part_done("page", started)

            # 4. retention of a fleet's day while ingesting
            if "retention" in only:
                started = part_started()
                results["retention"] = {}
                for store in fresh("retention", served_on):
                    answer = retention_under_load(store, args.cars, bodies, args.seconds)
                    results["retention"][store.name] = answer
                    quiet, during = answer["quiet"], answer["during"]
                    verdict = "met" if answer["seconds"] < TARGET_RETENTION_SECONDS else "NOT MET"
                    print(
                        f"retention ({store.name}): a day of {answer['cars']:,} cars "
                        f"({answer['points']:,} points; {answer['deleted']:,} deleted) in "
                        f"{answer['seconds'] * 1000:.0f} ms "
                        f"(target < {TARGET_RETENTION_SECONDS:g} s: {verdict}); ingestion "
                        f"{during['rps']:,.0f} requests/s during it "
                        f"(p99 {during['p99_ms']:.1f} ms, max {during.get('max_ms', 0):.0f} ms) "
                        f"against {quiet['rps']:,.0f} "
                        f"(p99 {quiet['p99_ms']:.1f} ms, max {quiet.get('max_ms', 0):.0f} ms) "
                        f"just before; {load()}",
                        flush=True,
                    )
                part_done("retention", started)

            # 5. moving an old table
            if "move" in only:
                started = part_started()
                results["move"] = {}
                for store in fresh("move", postgres):
                    moved = asyncio.run(move_old_table(store, args.move_rows, day))
                    results["move"][store.name] = moved
                    print(
                        f"moving an old table ({store.name}): {moved['rows']:,} rows in "
                        f"{moved['seconds']:.1f} s, {moved['points_per_second']:,.0f} points/s; "
                        f"{load()}",
                        flush=True,
                    )
                part_done("move", started)

        finally:
            if postgres and schemas:
                asyncio.run(drop_schemas(postgres, schemas))
    results["load_end"] = os.getloadavg()[0]
    print(f"{load()} at the end", flush=True)
    keep(figures_of(results))
    if not args.quick:
        save(results, whole=set(only) == set(PARTS))


def save(results: dict[str, Any], *, whole: bool) -> None:
    """Write the results (after each part: a run cut short keeps the parts it finished).
    A run of some parts merges them into the file as it is now (another run of other
    parts may have ended meanwhile)."""
    if not whole and RESULTS.exists():
        kept = json.loads(RESULTS.read_text())
        results = {
            **kept,
            **results,
            "parts": {**kept.get("parts", {}), **results["parts"]},
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, default=str))


def figures_of(results: dict[str, Any]) -> dict[str, float]:
    """The figures `python -m bench publish` and `compare` keep (bench._figures: a name's
    ending says its direction)."""
    found: dict[str, float] = {}
    for name, sizes in results.get("bytes", {}).get("stores", {}).items():
        found[f"{name.lower()}.at_rest_per_point_bytes"] = sizes["bytes_per_point"]
    for label, figures in results.get("ingest", {}).items():
        key = label.lower().replace(" ", ".").replace("^", "")
        found[f"ingest.{key}.points_per_s"] = figures["points_per_second"]
    for name, pages in results.get("page", {}).items():
        for kind in ("newest", "cursor"):
            found[f"{name.lower()}.page_{kind}.p50_ms"] = pages[kind]["p50_ms"]
            found[f"{name.lower()}.page_{kind}.p99_ms"] = pages[kind]["p99_ms"]
    for name, pruned in results.get("retention", {}).items():
        found[f"{name.lower()}.retention_fleet_day_s"] = pruned["seconds"]
        found[f"{name.lower()}.ingest_during_retention.rps"] = pruned["during"]["rps"]
    for name, moved in results.get("move", {}).items():
        found[f"{name.lower()}.move.points_per_s"] = moved["points_per_second"]
    return found


if __name__ == "__main__":
    main()
