"""Webhook delivery benchmark.

    python -m bench.webhooks [--quick] [--database-url postgresql://...]

A receiver (aiohttp) runs in another process (core 1) and answers 200 at once. The
delivery worker `autoport serve` runs, in this process (core 0, uvloop), with `make
run`'s settings but one, printed: receivers on loopback are allowed. Events are
committed in this process, so the commit wakes the worker as the app's own events do.
Figures:
1. throughput: deliveries/s from one worker process (outbox -> delivery rows -> signed
   POST -> recorded outcome), beside a baseline: a raw aiohttp POST loop sending the
   same number of signed bodies to the same receiver with the same concurrency;
2. latency: events emitted at a steady rate (100/s) while the worker runs; the receiver
   measures event-to-delivery time from the event's `received_at` (the outbox row's
   creation), p50/p99.
Targets (issue #33): >= 50 % of the raw sender's rate, p99 < 25 ms at 100 events/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from autoport.config import Settings, ensure_secrets
from autoport.kit import outbox
from autoport.kit.clock import Clock, from_iso, now_us
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade
from autoport.webhooks import delivery, service
from autoport.webhooks.delivery import WebhookConfig
from autoport.webhooks.signing import delivery_headers
from autoport.webhooks.tasks import DeliveryWorker
from bench._figures import keep
from bench._serve import CLIENT_CPUS, SERVER_CPUS, load_text, pin

APP_ID = "BE0C4BE0C4BE0C4BE0C4BE0C"
TARGET_SHARE = 0.5
TARGET_P99_MS = 25.0
SECRET = "bench-secret-0123456789abcdef"  # noqa: S105 - a benchmark fixture


# ------------------------------------------------------------------ receiver process


def serve_receiver() -> None:
    count = 0
    latencies: list[float] = []

    async def hook(request: web.Request) -> web.Response:
        nonlocal count
        body = await request.read()
        count += 1
        try:
            received_at = orjson.loads(body)["event"]["received_at"]
            latencies.append((now_us() - from_iso(received_at)) / 1000)
        except (ValueError, KeyError, TypeError):
            pass
        return web.Response(text="ok")

    async def stats(request: web.Request) -> web.Response:
        return web.json_response({"count": count, "latencies_ms": latencies})

    async def reset(request: web.Request) -> web.Response:
        nonlocal count
        count = 0
        latencies.clear()
        return web.Response(text="ok")

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/hook", hook)
        app.router.add_get("/stats", stats)
        app.router.add_post("/reset", reset)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


class ReceiverProcess:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.webhooks", "--serve-receiver"],
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())
        self.base = f"http://127.0.0.1:{self.port}"

    async def stats(self, session: aiohttp.ClientSession) -> dict[str, Any]:
        async with session.get(self.base + "/stats") as response:
            data: dict[str, Any] = await response.json()
            return data

    async def reset(self, session: aiohttp.ClientSession) -> None:
        async with session.post(self.base + "/reset") as response:
            await response.read()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


# ------------------------------------------------------------------------ helpers


async def prepare(db: Database, config: WebhookConfig, url: str) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES ('bench-account', 'production', 'bench', 0)"
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, "
            "client_type, redirect_uris, properties, brands, created_at) VALUES "
            "(:id, 'production', 'bench-account', 'bench-client', 'bench', 'confidential', "
            "'[]', '[]', '[]', 0)",
            {"id": APP_ID},
        )
    result = await service.save_webhook(
        db,
        environment=Environment.production,
        application_id=APP_ID,
        url=url,
        secret=SECRET,
        events=["fleet_clearance_changed"],
        config=config,
        clock_now=Clock().now_us,
    )
    assert result.ping.status == "succeeded", result.ping


async def emit_events(db: Database, first: int, count: int) -> None:
    async with db.transaction() as conn:
        for n in range(first, first + count):
            await outbox.emit(
                conn,
                environment=Environment.production,
                event_type="fleet_clearance_changed",
                payload={"action": "approved", "detail": None},
                now_us=now_us(),
                vin=f"WBA0000000{n:07d}",
                application_id=APP_ID,
            )


async def wait_for_count(
    receiver: ReceiverProcess, session: aiohttp.ClientSession, count: int, seconds: float
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if (await receiver.stats(session))["count"] >= count:
            return
        await asyncio.sleep(0.02)
    raise RuntimeError(f"receiver did not get {count} requests within {seconds} s")


async def baseline(url: str, count: int, concurrency: int) -> float:
    """Raw aiohttp POSTs of signed bodies: the floor a delivery worker cannot beat."""
    bodies = [
        delivery.build_payload(
            event_type="fleet_clearance_changed",
            vin=f"WBA0000000{n:07d}",
            application_id=APP_ID,
            received_at_us=now_us(),
            payload={"action": "approved"},
        )
        for n in range(count)
    ]
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def sender() -> None:
            while not queue.empty():
                body = queue.get_nowait()
                headers = delivery_headers(
                    prefix="Svc",
                    secret=SECRET,
                    body=body,
                    delivery_id="x",
                    event_type="e",
                    timestamp=int(time.time()),
                )
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()

        started = time.perf_counter()
        await asyncio.gather(*(sender() for _ in range(concurrency)))
        return count / (time.perf_counter() - started)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# --------------------------------------------------------------------------- main


async def run(args: argparse.Namespace) -> None:
    events = 300 if args.quick else args.events
    seconds = 2.0 if args.quick else args.seconds
    rate = args.rate
    receiver = ReceiverProcess()
    tmp = tempfile.TemporaryDirectory(prefix="bench-webhooks-")
    schema = None
    try:
        overrides: dict[str, Any] = {"data_dir": Path(tmp.name), "webhook_allow_loopback": True}
        print(
            "delivery worker: make run's settings, except AUTOPORT_WEBHOOK_ALLOW_LOOPBACK=true "
            "(the receiver listens on loopback)"
        )
        if args.database_url:
            schema = f"bench_webhooks_{os.getpid()}"
            overrides |= {"database_url": args.database_url, "database_schema": schema}
        settings, _ = ensure_secrets(Settings(**overrides))
        await upgrade(settings.resolved_database_url, schema=schema)
        db = create_database(settings.resolved_database_url, schema=schema)
        await db.connect()
        config = WebhookConfig.from_settings(settings)
        url = receiver.base + "/hook"
        await prepare(db, config, url)
        async with aiohttp.ClientSession() as control:
            # 1. Throughput: a backlog of events, one worker drains it.
            base_rate = await baseline(url, events, args.concurrency)
            await receiver.reset(control)
            await emit_events(db, 0, events)
            worker = DeliveryWorker(
                db,
                config,
                concurrency=args.concurrency,
                poll_interval=settings.webhook_poll_interval_seconds,
            )
            started = time.perf_counter()
            cpu_started = time.process_time()
            task = asyncio.create_task(worker.run())
            await wait_for_count(receiver, control, events, seconds=120)
            elapsed = time.perf_counter() - started
            # This process's CPU while the worker drained the backlog (the receiver runs
            # in its own): the worker's cost per delivery, which a busy machine does not
            # change the way it changes a rate.
            cpu_per_delivery = (time.process_time() - cpu_started) * 1e6 / events
            # 2. Latency at a steady rate, the same worker still running.
            await receiver.reset(control)
            total = int(rate * seconds)
            tick = 1.0 / rate
            start = time.perf_counter()
            for n in range(total):
                delay = start + n * tick - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                await emit_events(db, events + n, 1)
            await wait_for_count(receiver, control, total, seconds=60)
            latencies = (await receiver.stats(control))["latencies_ms"]
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await worker.close()
        await db.close()
        backend = "postgresql" if args.database_url else "sqlite"
        worker_rate = events / elapsed
        share = worker_rate / base_rate
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        print(f"webhooks benchmark ({backend}, concurrency {args.concurrency})")
        print(f"  baseline raw aiohttp POST loop : {base_rate:8.0f} requests/s")
        print(
            f"  worker (outbox -> delivered)   : {worker_rate:8.0f} deliveries/s "
            f"({events} events in {elapsed:.2f} s; {share:.0%} of the baseline, target >= "
            f"{TARGET_SHARE:.0%}: {'met' if share >= TARGET_SHARE else 'NOT met'})"
        )
        print(f"  worker CPU per delivery        : {cpu_per_delivery:8.0f} us (this process)")
        print(
            f"  latency at {rate:g} events/s for {seconds:g} s: p50 {p50:.1f} ms, "
            f"p99 {p99:.1f} ms, max {max(latencies):.1f} ms (target p99 < {TARGET_P99_MS:g} "
            f"ms: {'met' if p99 < TARGET_P99_MS else 'NOT met'})"
        )
        print(f"  load: {load_text()}")
        keep(
            {
                "baseline_rps": base_rate,
                "deliveries_per_s": worker_rate,
                "worker_cpu_per_delivery_us": cpu_per_delivery,
                "share_of_baseline": share,
                "latency_p50_ms": p50,
                "latency_p99_ms": p99,
            }
        )
    finally:
        receiver.stop()
        if schema and args.database_url:
            import asyncpg

            conn = await asyncpg.connect(args.database_url)
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            await conn.close()
        tmp.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke mode: seconds, not minutes")
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--database-url", default=None, help="PostgreSQL URL (default SQLite)")
    parser.add_argument("--serve-receiver", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_receiver:
        pin(CLIENT_CPUS)
        serve_receiver()
        return
    import uvloop

    pin(SERVER_CPUS)
    uvloop.run(run(args))


if __name__ == "__main__":
    main()
