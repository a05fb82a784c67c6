"""Benchmark: the pull under live conditions, against the real `autoport serve`.

The subject is the real server process (`python -m autoport serve`, pinned to core 0)
with its background work on: the sandbox simulator driving the demo cars, the stream and
webhook workers, the fleet worker, housekeeping. While it is measured, a provider ingests
a steady 1,000 points/s through `POST /v1/ingest` (10 vehicles, new values every 100 ms),
and wrk (core 1, 64 connections) loads one of two pulls:

- `push`: a push-fed production vehicle with ~100 properties (no data source);
- `sandbox`: the demo EV, driving (brand `sandbox`: a data source asked per freshness
  window, `autoport/vehicle_data/freshness.py`).

Beside each, in the same run, the floor (`bench._pull_apps.live_floor`, core 0): a minimal
Starlette + sqlite3 app that checks the bearer token in the token table and serves the
same stored document. While the floor runs, the server and the ingestion are paused
(SIGSTOP), so neither taxes the other; rounds alternate and the best of each is kept,
because the machine is shared. Every point the provider had acknowledged is counted in
the history afterwards.

    python -m bench pull_live            # 8 s per measurement, 2 rounds
    python -m bench pull_live --quick    # 2 s, one round: a smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.vehicle_data_pull import VIN as PUSH_VIN
from bench.vehicle_data_pull import _free_port, _parse_wrk, _wait_ready, prepare

TARGET_SHARE = 0.60
TARGET_P99_MS = 50.0
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


async def prepare_live(data_dir: Path) -> Setup:
    """The push-fed vehicle and its consent token (bench.vehicle_data_pull.prepare), the
    demo sandbox (cars, application, approved clearances) and an ingest provider."""
    from autoport.app import create_app
    from autoport.ingestion.providers import create_provider
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.clock import now_us
    from autoport.kit.environments import Environment
    from autoport.sandbox.demo import seed_demo
    from bench._pull_apps import bench_settings

    push_token, _ = await prepare(data_dir)
    app = create_app(bench_settings(data_dir), run_background=False)
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
        self.running = threading.Event()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.running.set()
        self.thread.start()

    def pause(self) -> None:
        self.running.clear()

    def resume(self) -> None:
        self.running.set()

    def stop(self) -> None:
        self.stopped.set()
        self.running.set()
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
                if self.stopped.is_set():
                    break
                tick += 1
                try:
                    response = client.post(self.url, headers=self.headers, json=self._batch(tick))
                    if response.status_code == 200:
                        self.acknowledged += response.json()["accepted_count"]
                    else:
                        self.failed += 1
                except httpx.HTTPError:
                    self.failed += 1
                next_at = max(next_at + 0.1, time.monotonic())
                time.sleep(max(0.0, next_at - time.monotonic()))


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)


def start_server(data_dir: Path) -> Server:
    port = _free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(data_dir),
        "AUTOPORT_PORT": str(port),
        "AUTOPORT_LOG_LEVEL": "warning",
        "AUTOPORT_ACCESS_LOG": "false",
        # The limiter runs on every pull but never refuses.
        "AUTOPORT_VEHICLE_DATA_RATE_LIMIT": "100000000/minute",
        "PYTHONPATH": os.getcwd(),
    }
    process = subprocess.Popen(
        ["taskset", "-c", "0", sys.executable, "-m", "autoport", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    _wait_ready(port, process)
    return Server(process, port)


def start_floor(data_dir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = {**os.environ, "BENCH_DATA_DIR": str(data_dir), "PYTHONPATH": os.getcwd()}
    command = [
        "taskset", "-c", "0", sys.executable, "-m", "uvicorn", "--factory",
        "bench._pull_apps:live_floor", "--port", str(port), "--no-access-log",
        "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env)
    _wait_ready(port, process)
    return process, port


def wrk(url: str, token: str, seconds: int, warmup: int, connections: int) -> dict[str, float]:
    command = [
        "taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", "--latency",
        "-H", f"Authorization: Bearer {token}",
    ]  # fmt: skip
    probe = httpx.get(url, headers={"Authorization": f"Bearer {token}"})
    if probe.status_code != 200:
        raise RuntimeError(f"{url} answered {probe.status_code}: {probe.text[:300]}")
    if warmup:
        subprocess.run([*command, f"-d{warmup}s", url], check=True, capture_output=True)
    run = subprocess.run(
        [*command, f"-d{seconds}s", url], check=True, capture_output=True, text=True
    )
    figures = _parse_wrk(run.stdout)
    figures["bytes"] = float(len(probe.content))
    return figures


@dataclass
class Results:
    subject: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    floor: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def best(self, side: str, target: str) -> dict[str, float]:
        runs = getattr(self, side)[target]
        return dict(max(runs, key=lambda run: run["rps"]))


def history_count(data_dir: Path) -> int:
    conn = sqlite3.connect(str(data_dir / "autoport.db"))
    try:
        marks = ",".join("?" * len(INGEST_VEHICLES))
        row = conn.execute(
            f"SELECT count(*) FROM vehicle_data_history WHERE vin IN ({marks})",  # noqa: S608
            INGEST_VEHICLES,
        ).fetchone()
        return int(row[0])
    finally:
        conn.close()


def run(args: argparse.Namespace) -> Results:
    seconds, warmup = (2, 0) if args.quick else (args.seconds, 2)
    rounds = 1 if args.quick else args.rounds
    results = Results()
    with tempfile.TemporaryDirectory(prefix="autoport-pull-live-") as tmp:
        setup = asyncio.run(prepare_live(Path(tmp)))
        server = start_server(setup.data_dir)
        base = f"http://127.0.0.1:{server.port}"
        ingestion = Ingestion(base, setup.provider_secret)
        try:
            sandbox_token = httpx.post(
                f"{base}/sandbox/v1/access_tokens", data=setup.sandbox_token_request
            ).json()["access_token"]
            targets = {
                "push": (f"/v1/vehicle-data/autoapi-13/{PUSH_VIN}", setup.push_token),
                "sandbox": (
                    f"/sandbox/v1/vehicle-data/autoapi-13/{setup.sandbox_vin}",
                    sandbox_token,
                ),
            }
            ingestion.start()
            time.sleep(1 if args.quick else 3)  # the background work and ingestion settle
            for _ in range(rounds):
                for name, (path, token) in targets.items():
                    server.pause()
                    ingestion.pause()
                    floor, floor_port = start_floor(setup.data_dir)
                    try:
                        figures = wrk(
                            f"http://127.0.0.1:{floor_port}{path}",
                            token,
                            seconds,
                            warmup,
                            args.connections,
                        )
                        results.floor.setdefault(name, []).append(figures)
                    finally:
                        floor.terminate()
                        floor.wait(timeout=10)
                    server.resume()
                    ingestion.resume()
                    figures = wrk(f"{base}{path}", token, seconds, warmup, args.connections)
                    results.subject.setdefault(name, []).append(figures)
        finally:
            ingestion.stop()
            server.resume()
            server.process.send_signal(signal.SIGTERM)
            server.process.wait(timeout=30)
        stored = history_count(setup.data_dir)
    print(
        f"ingestion: {ingestion.acknowledged} points acknowledged, {stored} in the history "
        f"({'none lost' if stored >= ingestion.acknowledged else 'LOST POINTS'}), "
        f"{ingestion.failed} failed requests"
    )
    if stored < ingestion.acknowledged:
        raise SystemExit(1)
    return results


def report(results: Results, connections: int, seconds: int) -> dict[str, Any]:
    summary: dict[str, Any] = {"connections": connections, "seconds": seconds, "targets": {}}
    print(f"pull under live conditions: {connections} connections, {seconds} s per run")
    for name in results.subject:
        subject, floor = results.best("subject", name), results.best("floor", name)
        share = subject["rps"] / floor["rps"]
        met = share >= TARGET_SHARE and subject["p99_ms"] < TARGET_P99_MS
        summary["targets"][name] = {"subject": subject, "floor": floor, "share": share}
        print(f"  {name} ({subject['bytes']:.0f} bytes):")
        for label, figures in (("floor", floor), ("autoport serve", subject)):
            print(
                f"    {label:<15} {figures['rps']:>9.0f} req/s   p50 {figures['p50_ms']:6.2f} ms"
                f"   p99 {figures['p99_ms']:6.2f} ms   non-2xx {figures['non_2xx']:.0f}"
            )
        print(
            f"    share {share:.0%}; targets >= {TARGET_SHARE:.0%} and p99 < "
            f"{TARGET_P99_MS:.0f} ms: {'met' if met else 'NOT met'}"
        )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s per run, one round")
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    if shutil.which("wrk") is None or shutil.which("taskset") is None:
        sys.exit("needs wrk and taskset (apt-get install -y wrk util-linux)")
    # This process (the ingestion thread) shares core 1 with wrk, like any client would.
    os.sched_setaffinity(0, {1})
    results = run(args)
    summary = report(results, args.connections, 2 if args.quick else args.seconds)
    if not args.quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(summary, indent=2))
        print(f"figures written to {RESULTS}")


if __name__ == "__main__":
    main()
