"""Benchmark: the pull under live conditions, against the real `autoport serve`.

The subject is the real server process (`python -m autoport serve`, pinned to core 0)
with `make run`'s settings (bench._serve: logging on, one access line per request) and
its background work on: the sandbox simulator driving the demo cars, the stream and
webhook workers, the fleet worker, housekeeping. Its one changed setting, printed: the
pull's rate limit is raised so that the limiter runs on every pull but never refuses.
While it is measured, a provider ingests a steady 1,000 points/s through `POST
/v1/ingest` (10 vehicles, new values every 100 ms), and wrk (core 1, 64 connections)
loads one of two pulls:

- `push`: a push-fed production vehicle with ~100 properties (no data source);
- `sandbox`: the demo EV, driving (brand `sandbox`: a data source asked per freshness
  window, `autoport/vehicle_data/freshness.py`).

Beside each, in the same run, on the server's core, two floors (bench._pull_apps):
- `bare_floor` (SQLite): a user's quickest app serving the same bytes: Starlette and
  sqlite3, the token looked up as stored, autoport's own answer stored and served as is
  (no HMAC, no JSON assembly). The target is a share of it;
- `live_floor`: Starlette that checks the token as a real service must (its HMAC looked
  up in autoport's token table, not expired, not revoked) and assembles the answer from
  the stored document (on PostgreSQL with an asyncpg pool).
While a floor runs, the server and the ingestion are paused (SIGSTOP), so neither taxes
the other; rounds alternate and the best of each is kept, because the machine is shared.
Every point the provider had acknowledged is counted in the history afterwards.

    python -m bench pull_live            # 8 s per measurement, 2 rounds
    python -m bench pull_live --quick    # 2 s, one round: a smoke test
    python -m bench pull_live --logs off # logging at warning, no access line
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench import _serve
from bench._figures import keep
from bench._pull_apps import write_bare_floor
from bench._serve import Changed, Served
from bench.vehicle_data_pull import VIN as PUSH_VIN
from bench.vehicle_data_pull import _parse_wrk, prepare

# One process on SQLite: a share of the bare floor (issue #33), at 64 connections.
TARGET_SHARE = 0.75
TARGET_P99_MS = 20.0
# --workers 2 on PostgreSQL, absolute (a Rust data broker of the kind: 11.2k, p99 7.4 ms).
TARGET_PG_RPS = 18_000
TARGET_PG_P99_MS = 15.0
RATE_LIMIT = Changed(
    "AUTOPORT_VEHICLE_DATA_RATE_LIMIT",
    "100000000/minute",
    "one client pulls one vehicle: the limiter runs on every pull but never refuses",
)
INGEST_VEHICLES = [f"WBAPULL00000{n:05d}" for n in range(10)]
INGEST_POINTS_PER_SECOND = 1_000
RESULTS = Path("var/bench-results/pull_live.json")


@dataclass
class Setup:
    data_dir: Path
    push_token: str
    sandbox_token_request: dict[str, str]
    sandbox_vin: str
    provider_secret: str


async def prepare_live(data_dir: Path, backend: Backend) -> Setup:
    """The push-fed vehicle and its consent token (bench.vehicle_data_pull.prepare), the
    demo sandbox (cars, application, approved clearances) and an ingest provider."""
    from autoport.app import create_app
    from autoport.ingestion.providers import create_provider
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.clock import now_us
    from autoport.kit.environments import Environment
    from autoport.sandbox.demo import seed_demo
    from bench._pull_apps import bench_settings

    settings = bench_settings(data_dir, backend.postgres, backend.schema)
    push_token, _ = await prepare(data_dir, settings)
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        db = app.state.autoport.database
        demo = await seed_demo(db, ingest=ingest_vehicle_data, now_us=now_us())
        async with db.transaction() as conn:
            _, secret = await create_provider(
                conn,
                key=app.state.autoport.token_key,
                environment=Environment.production,
                name="bench",
                now_us=now_us(),
            )
    return Setup(
        data_dir=data_dir,
        push_token=push_token,
        sandbox_token_request={
            "grant_type": "client_credentials",
            "client_id": demo.client_id,
            "client_secret": demo.client_secret or "",
        },
        sandbox_vin=demo.vins[0],
        provider_secret=secret,
    )


class Ingestion:
    """A provider pushing INGEST_POINTS_PER_SECOND through POST /v1/ingest from a thread;
    `pause()` holds it while the floor is measured."""

    def __init__(self, base_url: str, secret: str) -> None:
        self.url = f"{base_url}/v1/ingest"
        self.headers = {"Authorization": f"Bearer {secret}"}
        self.acknowledged = 0
        self.failed = 0
        # Why requests failed: the status code or the exception's name, printed at the end.
        self.failures: Counter[str] = Counter()
        self.running = threading.Event()
        # Held while a request is in flight: pause() waits for it, so a request is never
        # left hanging on a server that is then stopped for the floor's round.
        self.in_flight = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.running.set()
        self.thread.start()

    def pause(self) -> None:
        self.running.clear()
        with self.in_flight:
            pass

    def resume(self) -> None:
        self.running.set()

    def stop(self) -> None:
        self.stopped.set()
        self.running.set()
        if self.thread.is_alive():
            self.thread.join(timeout=10)

    def _batch(self, tick: int) -> list[dict[str, Any]]:
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        per_vehicle = INGEST_POINTS_PER_SECOND // 10 // len(INGEST_VEHICLES)

        def wrapper(value: Any) -> dict[str, Any]:
            return {"data": value, "timestamp": stamp}

        vehicles = []
        for index, vin in enumerate(INGEST_VEHICLES):
            base = (tick + index) % 1000
            data: dict[str, dict[str, Any]] = {
                "charging": {"battery_level": wrapper(base / 1000)},
                "diagnostics": {
                    "odometer": wrapper({"unit": "kilometers", "value": tick + index / 10}),
                    "speed": wrapper({"unit": "kilometers_per_hour", "value": base % 200}),
                    "fuel_level": wrapper((base % 100) / 100),
                    "engine_rpm": wrapper({"unit": "revolutions_per_minute", "value": base}),
                },
                "vehicle_location": {
                    "coordinates": wrapper({"latitude": 52.5 + base / 1e5, "longitude": 13.4}),
                    "heading": wrapper({"unit": "degrees", "value": base % 360}),
                    "altitude": wrapper({"unit": "meters", "value": base % 50}),
                },
                "usage": {
                    "average_speed": wrapper({"unit": "kilometers_per_hour", "value": base % 90}),
                    "odometer_after_last_trip": wrapper(
                        {"unit": "kilometers", "value": float(base)}
                    ),
                },
            }
            count = sum(len(group) for group in data.values())
            assert count == per_vehicle, (count, per_vehicle)
            vehicles.append({"vin": vin, "brand": "bmw", **data})
        return vehicles

    def _run(self) -> None:
        with httpx.Client(timeout=10) as client:
            tick = 0
            next_at = time.monotonic()
            while not self.stopped.is_set():
                self.running.wait()
                with self.in_flight:
                    if self.stopped.is_set():
                        break
                    if not self.running.is_set():  # paused between the wait and the lock
                        continue
                    tick += 1
                    self._send(client, tick)
                next_at = max(next_at + 0.1, time.monotonic())
                time.sleep(max(0.0, next_at - time.monotonic()))

    def _send(self, client: httpx.Client, tick: int) -> None:
        try:
            response = client.post(self.url, headers=self.headers, json=self._batch(tick))
        except httpx.HTTPError as error:
            self.failed += 1
            self.failures[type(error).__name__] += 1
            return
        if response.status_code == 200:
            self.acknowledged += response.json()["accepted_count"]
        else:
            self.failed += 1
            self.failures[f"HTTP {response.status_code}"] += 1


@dataclass(frozen=True)
class Backend:
    """Where the data lives and how many processes serve it."""

    postgres: str | None  # None: SQLite in the data directory
    schema: str | None
    workers: int

    @property
    def label(self) -> str:
        if self.postgres is None:
            return "SQLite, 1 process"
        return f"PostgreSQL, {self.workers} worker{'s' if self.workers > 1 else ''}"

    @property
    def server_cpus(self) -> str:
        # One process: the server on core 0, wrk and the ingestion on core 1. More
        # workers share both cores with wrk, as on any 2-core machine.
        return "0" if self.workers == 1 else "0-1"

    @property
    def client_cpus(self) -> str:
        return "1" if self.workers == 1 else "0-1"

    def environment(self) -> dict[str, str]:
        if self.postgres is None:
            return {}
        env = {"AUTOPORT_DATABASE_URL": self.postgres}
        if self.schema:
            env["AUTOPORT_DATABASE_SCHEMA"] = self.schema
        return env


def start_server(
    data_dir: Path, backend: Backend, changed: tuple[Changed, ...], profile: Path | None = None
) -> Served:
    args = ["--workers", str(backend.workers)] if backend.workers > 1 else []
    return _serve.serve(
        data_dir,
        changed,
        env=backend.environment(),
        args=args,
        cpus=backend.server_cpus,
        profile=profile,
    )


def start_floor(factory: str, data_dir: Path, backend: Backend) -> Served:
    env = {}
    if backend.postgres is not None:
        env["BENCH_DATABASE_URL"] = backend.postgres
        env["BENCH_DATABASE_SCHEMA"] = backend.schema or ""
    return _serve.start_app(
        f"bench._pull_apps:{factory}",
        data_dir,
        env=env,
        cpus=backend.server_cpus,
        workers=backend.workers,
    )


_PERCENTILE = re.compile(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def parse_wrk(output: str) -> dict[str, float]:
    """req/s, the latency percentiles wrk --latency prints (50, 75, 90, 99) in ms, and
    the non-2xx count."""
    figures = _parse_wrk(output)
    for percentile, value, unit in _PERCENTILE.findall(output):
        figures[f"p{percentile}_ms"] = float(value) * _UNIT_MS[unit]
    errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    figures["socket_errors"] = float(sum(map(int, errors.groups()))) if errors else 0.0
    return figures


def wrk(
    url: str,
    token: str,
    seconds: int,
    warmup: int,
    connections: int,
    cpus: str = "1",
    server: Served | None = None,
) -> dict[str, float]:
    """wrk's figures; with `server`, also the CPU time its processes took per request
    answered (`cpu_us_per_request`, background work included): on a shared machine the
    req/s follow what else runs, the CPU a request costs much less."""
    command = [
        "taskset", "-c", cpus, "wrk", "-t1", f"-c{connections}", "--latency",
        "-H", f"Authorization: Bearer {token}",
    ]  # fmt: skip
    probe = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    if probe.status_code != 200:
        raise RuntimeError(f"{url} answered {probe.status_code}: {probe.text[:300]}")
    if warmup:
        subprocess.run([*command, f"-d{warmup}s", url], check=True, capture_output=True)
    cpu_before = server.group_cpu_seconds() if server is not None else 0.0
    run = subprocess.run(
        [*command, f"-d{seconds}s", url], check=True, capture_output=True, text=True
    )
    figures = parse_wrk(run.stdout)
    if server is not None:
        answered = re.search(r"(\d+) requests in", run.stdout)
        if answered and int(answered.group(1)):
            used = server.group_cpu_seconds() - cpu_before
            figures["cpu_us_per_request"] = used / int(answered.group(1)) * 1e6
    figures["bytes"] = float(len(probe.content))
    figures["connections"] = float(connections)
    return figures


# The sides measured: the subject and the floors, by the factory in bench._pull_apps.
FLOORS = {"bare": "bare_floor", "floor": "live_floor"}


@dataclass
class Results:
    # side ("subject", "bare", "floor") -> target -> one run per round
    runs: dict[str, dict[str, list[dict[str, float]]]] = field(default_factory=dict)
    # target -> side -> one run per connection count
    sweep: dict[str, dict[str, list[dict[str, float]]]] = field(default_factory=dict)
    ingestion: dict[str, Any] = field(default_factory=dict)

    def add(self, side: str, target: str, figures: dict[str, float]) -> None:
        self.runs.setdefault(side, {}).setdefault(target, []).append(figures)

    def best(self, side: str, target: str) -> dict[str, float]:
        return dict(max(self.runs[side][target], key=lambda run: run["rps"]))


async def _history_count(backend: Backend, data_dir: Path) -> int:
    marks = ",".join(f"'{vin}'" for vin in INGEST_VEHICLES)  # fixed VINs, no input
    sql = (
        "SELECT count(*) FROM history_hot h JOIN history_series s ON s.id = h.series_id "  # noqa: S608
        f"WHERE s.vin IN ({marks})"
    )
    if backend.postgres is None:
        conn = sqlite3.connect(str(data_dir / "autoport.db"))
        try:
            return int(conn.execute(sql).fetchone()[0])
        finally:
            conn.close()
    import asyncpg

    settings = {"search_path": backend.schema} if backend.schema else {}
    pg = await asyncpg.connect(backend.postgres, server_settings=settings)
    try:
        return int(await pg.fetchval(sql))
    finally:
        await pg.close()


def history_count(backend: Backend, data_dir: Path) -> int:
    return asyncio.run(_history_count(backend, data_dir))


SWEEP_CONNECTIONS = (8, 16, 32, 64, 128)


def floors_of(backend: Backend) -> list[str]:
    """The floors measured: the bare one serves from SQLite only."""
    return ["bare", "floor"] if backend.postgres is None else ["floor"]


def measure_round(
    server: Served,
    ingestion: Ingestion,
    setup: Setup,
    backend: Backend,
    path: str,
    token: str,
    seconds: int,
    warmup: int,
    connections: int,
    floors: list[str],
) -> dict[str, dict[str, float]]:
    """Each floor (server and ingestion paused), then the subject (running)."""
    figures: dict[str, dict[str, float]] = {}
    for side in floors:
        ingestion.pause()  # first: its request in flight is answered before the server stops
        server.pause()
        floor = start_floor(FLOORS[side], setup.data_dir, backend)
        try:
            figures[side] = wrk(
                f"{floor.base}{path}", token, seconds, warmup, connections,
                backend.client_cpus, floor,
            )  # fmt: skip
        finally:
            floor.stop()
            server.resume()
            ingestion.resume()
    figures["subject"] = wrk(
        f"{server.base}{path}", token, seconds, warmup, connections, backend.client_cpus, server
    )
    return figures


def run(args: argparse.Namespace, backend: Backend, changed: tuple[Changed, ...]) -> Results:
    seconds, warmup = (2, 0) if args.quick else (args.seconds, 2)
    rounds = 1 if args.quick else args.rounds
    results = Results()
    floors = floors_of(backend)
    with tempfile.TemporaryDirectory(prefix="autoport-pull-live-") as tmp:
        setup = asyncio.run(prepare_live(Path(tmp), backend))
        server = start_server(setup.data_dir, backend, changed, args.profile)
        ingestion = Ingestion(server.base, setup.provider_secret)
        try:
            sandbox_token = httpx.post(
                f"{server.base}/sandbox/v1/access_tokens",
                data=setup.sandbox_token_request,
                timeout=60,
            ).json()["access_token"]
            targets = {
                "push": ("production", PUSH_VIN, setup.push_token),
                "sandbox": ("sandbox", setup.sandbox_vin, sandbox_token),
            }
            paths = {
                name: ("/sandbox" if env == "sandbox" else "")
                + f"/v1/vehicle-data/autoapi-13/{vin}"
                for name, (env, vin, _) in targets.items()
            }
            # The bare floor serves autoport's own answers, byte for byte.
            answers = []
            for name, (env, vin, token) in targets.items():
                answer = httpx.get(
                    f"{server.base}{paths[name]}",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=60,
                )
                answer.raise_for_status()
                answers.append((env, vin, token, answer.content))
            write_bare_floor(setup.data_dir, answers)
            ingestion.start()
            time.sleep(1 if args.quick else 3)  # the background work and ingestion settle
            for _ in range(rounds):
                for name, (_, _, token) in targets.items():
                    measured = measure_round(
                        server, ingestion, setup, backend, paths[name], token, seconds, warmup,
                        args.connections, floors,
                    )  # fmt: skip
                    for side, figures in measured.items():
                        results.add(side, name, figures)
            if args.sweep:
                # Against the floor the target names (the bare one on SQLite).
                for name, (_, _, token) in targets.items():
                    sides = results.sweep.setdefault(name, {"floor": [], "subject": []})
                    for connections in SWEEP_CONNECTIONS:
                        measured = measure_round(
                            server, ingestion, setup, backend, paths[name], token,
                            args.sweep_seconds, 1, connections, floors[:1],
                        )  # fmt: skip
                        sides["floor"].append(measured[floors[0]])
                        sides["subject"].append(measured["subject"])
        finally:
            ingestion.stop()
            server.stop()
        stored = history_count(backend, setup.data_dir)
        results.ingestion = {
            "acknowledged": ingestion.acknowledged,
            "stored": stored,
            "lost": max(0, ingestion.acknowledged - stored),
            "failed_requests": ingestion.failed,
            "failures": dict(ingestion.failures),
            "access_lines": access_lines(setup.data_dir / "server.log"),
        }
    print(
        f"ingestion: {ingestion.acknowledged} points acknowledged, {stored} in the history "
        f"({'none lost' if stored >= ingestion.acknowledged else 'LOST POINTS'}), "
        f"{ingestion.failed} failed requests"
        + (
            f" ({', '.join(f'{n} {why}' for why, n in ingestion.failures.items())})"
            if ingestion.failures
            else ""
        )
    )
    print(f"server log: {results.ingestion['access_lines']:,} access lines written")
    return results


def access_lines(log: Path) -> int:
    """The access lines the server wrote: the logging measured is really on."""
    count = 0
    with log.open("rb") as lines:
        for line in lines:
            count += b'"event":"request"' in line
    return count


def report(results: Results, backend: Backend, connections: int, seconds: int) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "backend": backend.label,
        "workers": backend.workers,
        "postgres": backend.postgres is not None,
        "connections": connections,
        "seconds": seconds,
        "ingestion": results.ingestion,
        "targets": {},
        "sweep": results.sweep,
    }
    print(
        f"pull under live conditions ({backend.label}): {connections} connections, "
        f"{seconds} s per run"
    )
    labels = {"bare": "bare floor", "floor": "live floor", "subject": "autoport serve"}
    for name in results.runs["subject"]:
        subject = results.best("subject", name)
        floor = results.best("floor", name)
        bare = results.best("bare", name) if "bare" in results.runs else None
        share_live = subject["rps"] / floor["rps"]
        share = subject["rps"] / bare["rps"] if bare else share_live
        if backend.workers > 1:
            met = subject["rps"] >= TARGET_PG_RPS and subject["p99_ms"] < TARGET_PG_P99_MS
            target = f">= {TARGET_PG_RPS:,} req/s and p99 < {TARGET_PG_P99_MS:.0f} ms"
        else:
            met = share >= TARGET_SHARE and subject["p99_ms"] < TARGET_P99_MS
            target = f">= {TARGET_SHARE:.0%} of the bare floor and p99 < {TARGET_P99_MS:.0f} ms"
        summary["targets"][name] = {
            "subject": subject,
            "floor": floor,
            **({"bare": bare} if bare else {}),
            "share": share,
            "share_live": share_live,
            "target": target,
            "met": met,
            "runs": {side: runs[name] for side, runs in results.runs.items()},
        }
        print(f"  {name} ({subject['bytes']:.0f} bytes):")
        for side in ("bare", "floor", "subject"):
            if side not in results.runs:
                continue
            figures = results.best(side, name)
            cpu = figures.get("cpu_us_per_request")
            print(
                f"    {labels[side]:<15} {figures['rps']:>9.0f} req/s   "
                f"p50 {figures['p50_ms']:6.2f} ms   p99 {figures['p99_ms']:6.2f} ms   "
                f"non-2xx {figures['non_2xx']:.0f}"
                + (f"   CPU {cpu:5.0f} µs/request" if cpu is not None else "")
            )
        shares = f"share {share:.0%} of the bare floor, " if bare else "share "
        print(
            f"    {shares}{share_live:.0%} of the live floor; target {target}: "
            f"{'met' if met else 'NOT met'}"
        )
    for name, sides in results.sweep.items():
        print(f"  {name}, rising connections (req/s, p99 ms):")
        for floor, subject in zip(sides["floor"], sides["subject"], strict=True):
            print(
                f"    {subject['connections']:>4.0f}: autoport {subject['rps']:>8.0f} "
                f"{subject['p99_ms']:7.2f} ms   floor {floor['rps']:>8.0f} "
                f"{floor['p99_ms']:7.2f} ms"
            )
    return summary


async def create_schema(url: str) -> str:
    """A fresh schema for one run (dropped afterwards: `drop_schema`)."""
    from autoport.kit.migrate import upgrade

    schema = f"bench_pull_live_{uuid.uuid4().hex[:8]}"
    await upgrade(url, schema=schema)
    return schema


async def drop_schema(url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


def results_path(backend: Backend) -> Path:
    if backend.postgres is None:
        return RESULTS
    return RESULTS.with_name(f"pull_live_pg_w{backend.workers}.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s per run, one round")
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server worker processes; more than 1 serves from PostgreSQL (--postgres)",
    )
    parser.add_argument(
        "--postgres",
        default=None,
        help="serve from PostgreSQL at this URL, in a fresh schema (default with --workers "
        "> 1: AUTOPORT_TEST_POSTGRES_URL)",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help=f"also measure both sides at {', '.join(map(str, SWEEP_CONNECTIONS))} connections",
    )
    parser.add_argument("--sweep-seconds", type=int, default=4)
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="record the server's processes with py-spy into this file (folded stacks)",
    )
    _serve.add_arguments(parser)
    args = parser.parse_args()
    if shutil.which("wrk") is None or shutil.which("taskset") is None:
        sys.exit("needs wrk and taskset (apt-get install -y wrk util-linux)")
    postgres = args.postgres
    if postgres is None and args.workers > 1:
        postgres = os.environ.get("AUTOPORT_TEST_POSTGRES_URL")
        if not postgres:
            sys.exit("--workers > 1 serves from PostgreSQL: give --postgres URL")
    schema = asyncio.run(create_schema(postgres)) if postgres else None
    backend = Backend(postgres, schema, args.workers)
    changed = _serve.changes(args, RATE_LIMIT)
    _serve.announce(changed, server_cpus=backend.server_cpus, client_cpus=backend.client_cpus)
    # This process (the ingestion thread) shares wrk's core(s), like any client would.
    _serve.pin(backend.client_cpus)
    started = time.time()
    # The machine is shared: what else ran is part of the figures (1-minute load average).
    load_before = os.getloadavg()[0]
    try:
        results = run(args, backend, changed)
    finally:
        if postgres and schema:
            asyncio.run(drop_schema(postgres, schema))
    seconds = 2 if args.quick else args.seconds
    summary = report(results, backend, args.connections, seconds)
    summary["command"] = "python -m bench pull_live " + " ".join(
        "URL" if "://" in arg else arg for arg in sys.argv[1:]
    )
    summary["started_at"] = started
    summary["load"] = {"start": load_before, "end": os.getloadavg()[0], "cores": os.cpu_count()}
    summary["changed"] = [vars(change) for change in changed]
    print(f"load: {_serve.load_text()}")
    figures: dict[str, float] = {"ingestion.points_lost": results.ingestion["lost"]}
    for name, target in summary["targets"].items():
        figures |= {
            f"{name}.rps": target["subject"]["rps"],
            f"{name}.p50_ms": target["subject"]["p50_ms"],
            f"{name}.p99_ms": target["subject"]["p99_ms"],
            f"{name}.share_of_live_floor": target["share_live"],
            f"{name}.live_floor_rps": target["floor"]["rps"],
        }
        for side, key in (("subject", "cpu_per_request_us"), ("floor", "live_floor_cpu_us")):
            if "cpu_us_per_request" in target[side]:
                figures[f"{name}.{key}"] = target[side]["cpu_us_per_request"]
        if "bare" in target and "cpu_us_per_request" in target["bare"]:
            figures[f"{name}.bare_floor_cpu_us"] = target["bare"]["cpu_us_per_request"]
        if "bare" in target:
            figures[f"{name}.share_of_bare_floor"] = target["share"]
            figures[f"{name}.bare_floor_rps"] = target["bare"]["rps"]
    if args.profile is None:
        keep(figures)
    # A smoke run's figures and a profiled run's (py-spy halves the server's speed) are
    # not the benchmark's: the published figures stay those of the last real run.
    if not args.quick and args.profile is None:
        path = results_path(backend)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(summary, indent=2))
        print(f"figures written to {path}")
    if results.ingestion["lost"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
