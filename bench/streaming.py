"""Streaming benchmark: ingest (outbox) -> subscriber, through Mosquitto and through SSE.

One autoport process (the app with its background workers under uvicorn and uvloop, in
this process, SQLite by default) receives `vehicle_data_changed` outbox events written
exactly as ingestion writes them (in this process, so the commit wakes the stream
builder as ingestion's does), at a fixed rate; a separate subscriber process receives
the application's messages over MQTT (QoS 1) and over `GET /v1/stream`, and measures
ingest->receive latency from the data point's timestamp (the ingest instant). Beside
it, the floor: raw aiomqtt QoS 1 publish -> subscribe through the same broker, same
payload size, same rate.

The app runs with `make run`'s settings but three, printed: the MQTT broker (one of
this benchmark's own), no demo sandbox (its cars would add messages to the measured
streams), and the bearer check (a fixed token of the benchmark's application).

Target (issue #33): p99 < 10 ms on both at 20,000 points/s (2,000 events/s).

    python -m bench.streaming            # 10 s at 2,000 events/s x 10 data points
    python -m bench.streaming --quick    # a 2 s smoke run
    python -m bench.streaming --database-url postgresql://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import multiprocessing as mp
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench._figures import keep
from bench._serve import CLIENT_CPUS, SERVER_CPUS, load_text, pin

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
TARGET_P99_MS = 10.0
TARGET_POINTS = 20_000
POINTS_PER_EVENT = 10
PROPERTIES = [
    "charging.battery_level",
    "charging.estimated_range",
    "charging.charging_rate",
    "charging.status",
    "diagnostics.odometer",
    "diagnostics.speed",
    "diagnostics.fuel_level",
    "doors.locks_state",
    "vehicle_location.coordinates",
    "vehicle_location.heading",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def iso(us: int) -> str:
    from autoport.kit.clock import to_iso

    return to_iso(us)


def event_data(now_us: int, i: int) -> dict[str, Any]:
    stamp = iso(now_us)
    data: dict[str, Any] = {}
    for n, prop in enumerate(PROPERTIES[:POINTS_PER_EVENT]):
        capability, name = prop.split(".")
        data.setdefault(capability, {})[name] = [{"data": i + n / 100, "timestamp": stamp}]
    return data


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ------------------------------------------------------------------ subscriber process


def subscriber_main(
    mode: str,
    port: int,
    http_base: str,
    app_id: str,
    password: str,
    token: str,
    expected: int,
    timeout: float,
    results: Any,
    ready: Any,
) -> None:
    pin(CLIENT_CPUS)  # the subscriber never shares the server's core
    asyncio.run(
        _subscribe(
            mode, port, http_base, app_id, password, token, expected, timeout, results, ready
        )
    )


async def _subscribe(
    mode: str,
    port: int,
    http_base: str,
    app_id: str,
    password: str,
    token: str,
    expected: int,
    limit_seconds: float,
    results: Any,
    ready: Any,
) -> None:
    import aiomqtt
    import httpx

    from autoport.kit.clock import from_iso, now_us

    topic = f"sandbox/level13/{app_id}"
    outcome: dict[str, list[float]] = {"mqtt": [], "sse": []}
    last: dict[str, float] = {}

    def latency_of(body: bytes) -> float:
        message = orjson.loads(body)
        if mode == "baseline":
            return (now_us() - int(message["t"])) / 1000
        stamp = message["data"]["charging"]["battery_level"][0]["timestamp"]
        return (now_us() - from_iso(stamp)) / 1000

    async def mqtt() -> None:
        async with aiomqtt.Client(
            "127.0.0.1", port, username=app_id, password=password, max_inflight_messages=1000
        ) as client:
            await client.subscribe(topic, qos=1)
            ready.put("mqtt")
            async for message in client.messages:
                outcome["mqtt"].append(latency_of(bytes(message.payload)))
                last["mqtt"] = time.monotonic()
                if len(outcome["mqtt"]) >= expected:
                    return

    async def sse() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(base_url=http_base, timeout=httpx.Timeout(10.0, read=None)) as client,
            client.stream("GET", "/sandbox/v1/stream", headers=headers) as response,
        ):
            ready.put("sse")
            named = False  # an `event:` line: the stream's own events (start, gap, end)
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    named = True
                elif line == "":
                    named = False
                elif line.startswith("data: ") and not named:
                    outcome["sse"].append(latency_of(line[6:].encode()))
                    last["sse"] = time.monotonic()
                    if len(outcome["sse"]) >= expected:
                        return

    tasks = [mqtt()] if mode == "baseline" else [mqtt(), sse()]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*tasks), limit_seconds)
    results.put({"latencies": outcome, "last": last})


# ------------------------------------------------------------------ driver


async def ingest_at_rate(
    db: Any, vins: list[str], rate: float, seconds: float, concurrency: int
) -> tuple[int, float]:
    """One transaction per event, as ingestion does; up to `concurrency` at once (the
    ingest endpoint serves many requests at once; SQLite serializes them anyway)."""
    from autoport.kit import outbox
    from autoport.kit.clock import now_us
    from autoport.kit.environments import Environment

    total = int(rate * seconds)
    slots = asyncio.Semaphore(concurrency)
    pending: set[asyncio.Task[None]] = set()

    async def one(i: int) -> None:
        async with slots:
            vin = vins[i % len(vins)]
            now = now_us()
            async with db.transaction() as conn:
                await outbox.emit(
                    conn,
                    environment=Environment.sandbox,
                    event_type="vehicle_data_changed",
                    payload={"vin": vin, "brand": "sandbox", "data": event_data(now, i)},
                    now_us=now,
                    vin=vin,
                )

    start = time.monotonic()
    for i in range(total):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(one(i))
        pending.add(task)
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)
    return total, time.monotonic() - start


async def publish_raw_at_rate(
    port: int, username: str, password: str, topic: str, rate: float, seconds: float, size: int
) -> tuple[int, float]:
    import aiomqtt

    from autoport.kit.clock import now_us

    total = int(rate * seconds)
    pad = "x" * max(0, size - 40)
    async with aiomqtt.Client(
        "127.0.0.1", port, username=username, password=password, max_inflight_messages=200
    ) as client:
        client.pending_calls_threshold = 1_000_000
        start = time.monotonic()
        pending: set[asyncio.Task[None]] = set()
        window = asyncio.Semaphore(64)  # as autoport's publisher (aiomqtt is quadratic)

        async def publish(body: bytes) -> None:
            async with window:
                await client.publish(topic, body, qos=1)

        for i in range(total):
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            body = orjson.dumps({"t": now_us(), "pad": pad})
            task = asyncio.create_task(publish(body))
            pending.add(task)
            task.add_done_callback(pending.discard)
        await asyncio.gather(*pending)
        return total, time.monotonic() - start


def report(
    name: str,
    latencies: list[float],
    expected: int,
    first_send: float,
    last_receive: float | None,
    points: int,
) -> dict[str, float]:
    got = len(latencies)
    span = (last_receive - first_send) if last_receive else float("nan")
    rate = got / span if span and span == span else float("nan")
    print(
        f"{name:<26} {got:>6}/{expected:<6} msgs  {rate:>8.0f} msg/s  "
        f"{rate * points:>8.0f} points/s  p50 {percentile(latencies, 0.5):>7.1f} ms  "
        f"p99 {percentile(latencies, 0.99):>7.1f} ms  "
        f"max {max(latencies, default=float('nan')):>7.1f} ms"
    )
    return {
        "points_per_s": rate * points,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "lost": expected - got,
    }


async def main(args: argparse.Namespace) -> int:
    import uvicorn

    from autoport.app import create_app
    from autoport.config import Settings, ensure_secrets
    from autoport.kit.auth import Caller, CallerKind
    from autoport.kit.clock import Clock
    from autoport.kit.environments import Environment
    from autoport.kit.migrate import upgrade
    from autoport.streaming import mosquitto
    from autoport.streaming.mosquitto import broker_address

    rate, seconds = (200.0, 2.0) if args.quick else (args.rate, args.seconds)
    figures: dict[str, dict[str, float]] = {}
    expected = int(rate * seconds)
    work = Path(tempfile.mkdtemp(prefix="autoport-bench-streaming-"))
    broker_port, http_port = free_port(), free_port()
    schema = None
    database_url = args.database_url
    if database_url:
        schema = f"bench_streaming_{secrets.token_hex(4)}"
    settings = Settings(
        data_dir=work,
        database_url=database_url,
        database_schema=schema,
        mqtt_url=f"mqtt://127.0.0.1:{broker_port}",
        port=http_port,
        sandbox_demo=False,  # its simulated cars would add traffic to the measured streams
    )
    print(
        "autoport app: make run's settings, except: AUTOPORT_MQTT_URL (a broker of this "
        "benchmark's own), AUTOPORT_SANDBOX_DEMO=false (its cars would add messages), the "
        "bearer check (a fixed token of the benchmark's application)"
    )
    settings, _ = ensure_secrets(settings)
    await upgrade(settings.resolved_database_url, schema=schema)
    app = create_app(settings, clock=Clock(), run_background=True)
    db = app.state.autoport.database
    await db.connect()
    # Fixture rows: one application with consent for 50 vehicles, all ten properties.
    app_id = secrets.token_hex(12).upper()
    vins = [f"WBENCH{n:011d}" for n in range(50)]
    now = int(time.time() * 1_000_000)
    password = mosquitto.new_password()
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES ('BENCH', 'sandbox', 'bench', :now)",
            {"now": now},
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, client_type, "
            "redirect_uris, properties, brands, created_at) VALUES (:id, 'sandbox', 'BENCH', "
            "'bench', 'bench', 'confidential', '[]', :props, '[\"sandbox\"]', :now)",
            {"id": app_id, "props": orjson.dumps(PROPERTIES).decode(), "now": now},
        )
        for n, vin in enumerate(vins):
            await conn.execute(
                "INSERT INTO authorizations (id, environment, application_id, vin, brand, "
                "properties, status, subject, valid_from, valid_until, created_at, updated_at) "
                "VALUES (:id, 'sandbox', :app, :vin, 'sandbox', :props, 'approved', 'o', 0, "
                "NULL, :now, :now)",
                {
                    "id": f"AUTH{n}",
                    "app": app_id,
                    "vin": vin,
                    "props": orjson.dumps(PROPERTIES).decode(),
                    "now": now,
                },
            )
        await conn.execute(
            "INSERT INTO stream_mqtt_credentials (environment, application_id, password_hash, "
            "created_at, updated_at) VALUES ('sandbox', :app, :hash, :now, :now)",
            {"app": app_id, "hash": mosquitto.password_hash(password), "now": now},
        )
    await db.close()
    from autoport.streaming.repository import list_mqtt_credentials

    await db.connect()
    rows = await list_mqtt_credentials(db.reader)
    await db.close()
    files = mosquitto.render(
        settings,
        directory=work / "mosquitto",
        applications=rows,
        port=broker_port,
        run_as=getpass.getuser() if os.geteuid() == 0 else None,
    )
    mosquitto.write(files, work / "mosquitto")
    broker = subprocess.Popen(  # noqa: ASYNC220 - starts the broker and returns at once
        ["taskset", "-c", CLIENT_CPUS, MOSQUITTO, "-c", str(work / "mosquitto" / "mosquitto.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    token = "bench-" + secrets.token_hex(8)

    async def authenticate(request: Any, environment: Environment) -> Caller:
        from autoport.kit.errors import ApiError

        if request.headers.get("authorization") != f"Bearer {token}":
            raise ApiError(401, "bad token")
        return Caller(
            environment=environment,
            kind=CallerKind.application,
            application_id=app_id,
            client_id="bench",
            scopes=frozenset({"vehicle:data"}),
            application_properties=frozenset(PROPERTIES),
        )

    app.state.authenticator = authenticate
    ctx = mp.get_context("spawn")
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", broker_port)):
                break
            await asyncio.sleep(0.02)
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=http_port, log_config=None)
        )
        serve = asyncio.create_task(server.serve())
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.02)
        print(
            f"autoport streaming benchmark: {expected} events x {POINTS_PER_EVENT} data points "
            f"at {rate:.0f} events/s ({rate * POINTS_PER_EVENT:.0f} points/s offered), "
            f"{'PostgreSQL' if database_url else 'SQLite'}, one autoport process"
        )
        results, ready = ctx.Queue(), ctx.Queue()
        proc = ctx.Process(
            target=subscriber_main,
            args=(
                "autoport",
                broker_port,
                f"http://127.0.0.1:{http_port}",
                app_id,
                password,
                token,
                expected,
                seconds + 30,
                results,
                ready,
            ),
        )
        proc.start()
        for _ in range(2):
            await asyncio.get_running_loop().run_in_executor(None, ready.get, True, 30)
        await asyncio.sleep(0.5)
        first_send = time.monotonic()
        cpu_started = time.process_time()
        sent, took = await ingest_at_rate(db_of(app), vins, rate, seconds, args.concurrency)
        print(f"ingest driver: {sent} events in {took:.2f} s ({sent / took:.0f} events/s)")
        outcome = await asyncio.get_running_loop().run_in_executor(
            None, results.get, True, seconds + 40
        )
        # The app's cost per event, which a busy machine does not change the way it
        # changes latencies: this process's CPU until the subscriber had every message
        # (the ingest driver's commits, the stream builder, the MQTT publisher, the SSE
        # stream; the subscriber runs in its own process).
        cpu_per_event = (time.process_time() - cpu_started) * 1e6 / sent
        print(
            f"app CPU per event: {cpu_per_event:.0f} us (this process: the ingest driver's "
            "commits, the stream builder, the MQTT publisher, the SSE stream)"
        )
        figures["app"] = {"cpu_per_event_us": cpu_per_event}
        proc.join(5)
        # Monotonic clocks are per boot, so the child's timestamps compare with ours.
        for transport in ("mqtt", "sse"):
            figures[transport] = report(
                f"autoport -> {transport.upper()}",
                outcome["latencies"][transport],
                expected,
                first_send,
                outcome["last"].get(transport),
                POINTS_PER_EVENT,
            )
        server.should_exit = True
        await serve

        # Floor: raw aiomqtt QoS 1 through the same broker, same rate and payload size.
        address = broker_address(settings)
        assert address is not None
        size = len(orjson.dumps({"version": 2, "data": event_data(0, 0)})) + 120
        results, ready = ctx.Queue(), ctx.Queue()
        proc = ctx.Process(
            target=subscriber_main,
            args=(
                "baseline",
                broker_port,
                "",
                app_id,
                password,
                token,
                expected,
                seconds + 30,
                results,
                ready,
            ),
        )
        proc.start()
        await asyncio.get_running_loop().run_in_executor(None, ready.get, True, 30)
        await asyncio.sleep(0.3)
        first_send = time.monotonic()
        await publish_raw_at_rate(
            broker_port,
            address.username,
            address.password,
            f"sandbox/level13/{app_id}",
            rate,
            seconds,
            size,
        )
        outcome = await asyncio.get_running_loop().run_in_executor(
            None, results.get, True, seconds + 40
        )
        proc.join(5)
        figures["baseline"] = report(
            "baseline raw aiomqtt",
            outcome["latencies"]["mqtt"],
            expected,
            first_send,
            outcome["last"].get("mqtt"),
            POINTS_PER_EVENT,
        )
        met = all(
            figures[t]["p99_ms"] < TARGET_P99_MS and figures[t]["lost"] == 0
            for t in ("mqtt", "sse")
        )
        print(
            f"target: p99 < {TARGET_P99_MS:g} ms on MQTT and SSE at {TARGET_POINTS:,} points/s "
            f"offered: {'met' if met and rate * POINTS_PER_EVENT >= TARGET_POINTS else 'NOT met'}"
            f" (offered {rate * POINTS_PER_EVENT:,.0f} points/s)"
        )
        print(f"load: {load_text()}")
        keep(
            {
                f"{side}.{name}": value
                for side, values in figures.items()
                for name, value in values.items()
                if value == value  # not NaN
            }
        )
    finally:
        broker.terminate()
        broker.wait(10)
        if database_url and schema:
            import asyncpg

            from autoport.kit.db import asyncpg_dsn

            conn = await asyncpg.connect(asyncpg_dsn(database_url))
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            await conn.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


def db_of(app: Any) -> Any:
    return app.state.autoport.database


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a 2 s smoke run")
    parser.add_argument("--rate", type=float, default=2000.0, help="events per second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=8, help="ingest transactions at once")
    parser.add_argument("--database-url", default=None, help="PostgreSQL URL (default SQLite)")
    return parser.parse_args(argv)


def run(argv: list[str] | None = None) -> int:
    if not os.path.exists(MOSQUITTO):
        print(f"mosquitto not found at {MOSQUITTO}", file=sys.stderr)
        return 2
    import uvloop

    # The app (and the driver writing its events) on the server's core, the broker and
    # the subscriber on the other.
    pin(SERVER_CPUS)
    # uvloop, as `autoport serve` runs (uvicorn's default where it is installed).
    return uvloop.run(main(parse(argv)))


if __name__ == "__main__":
    sys.exit(run())
