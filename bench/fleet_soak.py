"""Benchmark: how many vehicles one machine carries, at a fleet's realistic mix.

The production topology of docs/operations.md runs on this machine (`bench._soak_stack`:
PostgreSQL, `autoport serve --workers 2 --no-workers` behind nginx, one `autoport
worker`, Redis, Mosquitto; or SQLite with one `autoport serve`), while
`bench._soak_load` plays the world around it:

- a carmaker's feed pushes N vehicles through `POST /v1/ingest`: 85 % parked (a
  20-property snapshot every 30 s), 10 % driving (location, speed, odometer, battery at
  1 Hz), 5 % charging (5 properties every 10 s), batched every 100 ms, at most 50
  vehicles a request;
- three applications are cleared for 100 %, 50 % and 20 % of the fleet; the first pulls
  1 % of its vehicles a second, sends a command per 2,000 vehicles a second and adds a
  new vehicle per 10,000 a second to its fleet; it and the third follow their streams
  over SSE, the second over MQTT; every clearance change and command change is a webhook
  to a local receiver; the carmaker's API (clearances, commands) is local too;
- history retention runs every minute over points seeded 91 days old.

N ramps in steps (clearances of the step's new vehicles first, then a warm-up, then the
measured window) until a service level breaks: ingestion p99 < 250 ms, pull p99 < 50 ms,
stream lag p99 < 2 s (SSE and MQTT, from the data point's timestamp), webhook delivery
p99 < 5 s, fewer than 0.1 % failed requests, the offered load delivered. At the end
every acknowledged data point is looked up in the history, every SSE stream checked for
gaps and against its head, MQTT messages counted against theirs, every expected webhook
event found: nothing acknowledged may be lost.

    python -m bench fleet_soak                       # the publishing ramps, both backends
    python -m bench fleet_soak --quick               # short steps, a few minutes
    python -m bench fleet_soak --smoke               # CI: one tiny step per backend
    python -m bench fleet_soak --hold 8000 --minutes 30 --backend postgresql  # memory
    python -m bench fleet_soak --costs --backend postgresql   # CPU per operation
    python -m bench fleet_soak --profile --hold 6000 --minutes 3   # py-spy under load

PostgreSQL is the server AUTOPORT_TEST_POSTGRES_URL names (the soak makes a database of
its own there and drops it after). Results: var/bench-results/fleet_soak_<backend>.json
and the printed report; `python -m bench publish` plots them into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import math
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bench import _soak_load as load
from bench._soak_stack import (
    CHANGED_SETTINGS,
    Sampler,
    Stack,
    cpu_between,
    pretty_waits,
    short_command,
)

RESULTS = Path("var/bench-results")
# The service levels a step must hold.
SLO = {
    "ingest_p99_ms": 250.0,
    "pull_p99_ms": 50.0,
    "stream_lag_p99_ms": 2000.0,
    "webhook_p99_ms": 5000.0,
    "error_rate": 0.001,
    "offered_share": 0.97,
}
RETENTION_AGE_DAYS = 91


@dataclass
class Plan:
    backend: str
    steps: list[int]
    step_s: float
    warmup_s: float
    sample_s: float
    stop_on_breach: bool = True
    memory: bool = False
    costs: bool = False
    profile: bool = False
    mode: str = "full"
    verify_all: bool = True
    # Points seeded RETENTION_AGE_DAYS old for retention: vehicles x deliveries of 20.
    retention_seed: tuple[int, int] = (20, 30)


def plans(args: argparse.Namespace) -> list[Plan]:
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    out = []
    for backend in backends:
        if args.smoke:
            plan = Plan(backend, [60], 8, 4, 1, mode="smoke", retention_seed=(2, 10))
        elif args.quick:
            steps = [500, 1500, 3000] if backend == "sqlite" else [1000, 3000, 6000]
            plan = Plan(backend, steps, 60, 15, 2, mode="quick")
        else:
            steps = (
                [1000, 2000, 3000, 4000, 5000, 6000]
                if backend == "sqlite"
                else [2500, 5000, 7500, 10000, 12500, 15000, 17500, 20000]
            )
            plan = Plan(backend, steps, 300, 60, 5)
        if args.steps:
            plan.steps = [int(n) for n in args.steps.split(",")]
        if args.step_seconds:
            plan.step_s = args.step_seconds
        if args.hold:
            plan.steps = [args.hold]
            plan.step_s = args.minutes * 60
            plan.memory = True
            plan.stop_on_breach = False
            plan.mode = "memory" if not args.profile else "profile"
            plan.sample_s = 10 if plan.step_s > 600 else plan.sample_s
        plan.costs = args.costs
        plan.profile = args.profile
        if args.costs:
            plan.mode = "costs"
            plan.steps = [args.hold or (1000 if args.quick or args.smoke else 3000)]
            plan.warmup_s, plan.step_s = (10, 30) if args.quick or args.smoke else (20, 60)
        plan.stop_on_breach = plan.stop_on_breach and not args.keep_going
        out.append(plan)
    return out


# ------------------------------------------------------------------ the load's processes


class Child:
    """A load process and its pipe."""

    def __init__(self, name: str, target: Any, config: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self.name = name
        self.pipe, child_end = context.Pipe()
        self.process = context.Process(target=target, args=(child_end, config), daemon=True)
        self.process.start()

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    async def ask(self, verb: str, argument: Any = None, within: float = 600) -> Any:
        self.pipe.send((verb, argument))
        deadline = time.monotonic() + within
        while not self.pipe.poll():
            if not self.process.is_alive():
                raise RuntimeError(f"the {self.name} process died (exit {self.process.exitcode})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {self.name} process did not answer {verb!r}")
            await asyncio.sleep(0.05)
        answer = self.pipe.recv()
        if isinstance(answer, dict) and "error" in answer and len(answer) == 1:
            raise RuntimeError(f"{self.name} {verb}: {answer['error']}")
        return answer

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.ask("exit", within=20)
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()


# ------------------------------------------------------------------ setting up


@dataclass
class World:
    stack: Stack
    apps: dict[str, dict[str, str]]
    provider_secret: str
    mqtt: dict[str, Any]
    followers_port: int
    feed: Child | None = None
    followers: Child | None = None
    sampler: Sampler | None = None
    retention_vins: list[str] = field(default_factory=list)
    # Vehicles 0..cleared-1 were asked to be cleared (each application its share).
    cleared: int = 0


def say(text: str) -> None:
    print(text, flush=True)


async def set_up(stack: Stack, followers_port: int) -> World:
    """The applications, the provider and the MQTT follower's credentials, made by the
    CLI's commands as an operator makes them."""
    made = []
    for plan in load.APPS:
        args = ["apps", "create", "--name", plan.name, "--brand", "bmw"]
        for prop in plan.properties:
            args += ["--property", prop]
        for command in plan.commands:
            args += ["--command", command]
        made.append(await stack.autoport_in_process(*args))
    provider = await stack.autoport_in_process(
        "providers", "create", "--name", "carmaker feed", "--brand", "bmw"
    )
    apps = {
        plan.key: {
            "app_id": app["app_id"],
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
        }
        for plan, app in zip(load.APPS, made, strict=True)
    }
    mqtt: dict[str, Any] = {}
    for plan in load.APPS:
        if plan.follows == "mqtt":
            issued = await stack.autoport_in_process(
                "streaming", "credentials", apps[plan.key]["app_id"]
            )
            mqtt = {
                "host": "127.0.0.1",
                "port": stack.mqtt_port,
                "username": issued["username"],
                "password": issued["password"],
                "topic": issued["topic"],
            }
    return World(stack, apps, provider["secret"], mqtt, followers_port)


async def subscribe_webhooks(world: World) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        for plan in load.APPS:
            events = ["fleet_clearance_changed", *(["command_changed"] if plan.commands else [])]
            app_id = world.apps[plan.key]["app_id"]
            async with session.put(
                f"{world.stack.direct_url}/admin/v1/applications/{app_id}/webhook",
                headers={"Authorization": f"Bearer {world.stack.admin_token}"},
                json={"url": f"http://127.0.0.1:{world.followers_port}/hook/{plan.key}",
                      "events": events},
            ) as answer:  # fmt: skip
                if answer.status not in (200, 201):
                    raise RuntimeError(f"webhook of {plan.key}: {await answer.text()}")


async def seed_old_history(stack: Stack, seed: tuple[int, int]) -> tuple[list[str], int]:
    """Points that arrived RETENTION_AGE_DAYS ago (through the ingestion service, as a
    delivery then would have been stored), for retention to remove during the soak."""
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.db import create_database
    from autoport.kit.environments import Environment

    db = create_database(stack.url)
    await db.connect()
    vehicles, deliveries = seed
    vins = [load.vin_of(n, "R") for n in range(vehicles)]
    old = time.time() - RETENTION_AGE_DAYS * 86400
    points = 0
    try:
        for vin in vins:
            for delivery in range(deliveries):
                at = old + delivery * 30
                stamp = load.iso_ms(int(at * 1000))
                data: dict[str, dict[str, Any]] = {}
                for key in load.PROPERTIES[load.PARKED]:
                    capability, _, name = key.partition(".")
                    data.setdefault(capability, {})[name] = {
                        "data": load._example(key, delivery),
                        "timestamp": stamp,
                    }
                await ingest_vehicle_data(
                    db, environment=Environment.production, vin=vin, brand="bmw",
                    data=data, now_us=int(at * 1e6), source="fleet_soak",
                )  # fmt: skip
                points += len(load.PROPERTIES[load.PARKED])
    finally:
        await db.close()
    return vins, points


# ------------------------------------------------------------------ a step


@dataclass
class StepResult:
    vehicles: int
    started: float
    ended: float
    rates: dict[str, float]
    feed: dict[str, Any]
    followers: dict[str, Any]
    cpu: dict[str, dict[str, float]]
    waits: str
    pg: dict[str, float]
    queues: dict[str, Any]
    load1: tuple[float, float]
    checks: dict[str, tuple[float, float, bool]] = field(default_factory=dict)

    @property
    def held(self) -> bool:
        return all(ok for _, _, ok in self.checks.values())


def _p99(summary: dict[str, Any], name: str) -> float:
    found = summary.get(name, {})
    return float(found.get("p99", float("nan"))) if found.get("count") else float("nan")


def _count(summary: dict[str, Any], name: str) -> int:
    return int(summary.get(name, {}).get("count", 0))


def error_series(summary: dict[str, Any]) -> list[str]:
    """The feed's failures: `<kind>_errors_<status>` (0: no answer), `ingest_rejected`."""
    return [
        n for n in summary if ("_errors_" in n or n == "ingest_rejected") and _count(summary, n)
    ]


def judge(step: StepResult) -> None:
    feed, followers = step.feed["series"], step.followers["series"]
    seconds = step.ended - step.started
    lags = [
        _p99(followers, name)
        for name in followers
        if name.endswith("_lag_ms") and _count(followers, name)
    ]
    requests = sum(_count(feed, n) for n in ("ingest_ms", "pull_ms", "command_ms", "clearance_ms"))
    errors = sum(_count(feed, n) for n in error_series(feed))
    points = feed.get("ingest_points", {})
    delivered = points.get("mean", 0.0) * points.get("count", 0)
    offered = step.rates["points"] * seconds
    webhook = _p99(followers, "webhook_ms")
    checks = {
        "ingest p99 ms": (_p99(feed, "ingest_ms"), SLO["ingest_p99_ms"]),
        "pull p99 ms": (_p99(feed, "pull_ms"), SLO["pull_p99_ms"]),
        "stream lag p99 ms": (max(lags) if lags else float("nan"), SLO["stream_lag_p99_ms"]),
        "webhook p99 ms": (webhook, SLO["webhook_p99_ms"]),
        "failed requests": (errors / max(requests, 1), SLO["error_rate"]),
    }
    step.checks = {
        name: (value, limit, not math.isnan(value) and value < limit)
        for name, (value, limit) in checks.items()
    }
    if math.isnan(webhook):  # no webhook in a short window is not a breach
        step.checks["webhook p99 ms"] = (webhook, SLO["webhook_p99_ms"], True)
    share = delivered / offered if offered else 1.0
    step.checks["points delivered / offered"] = (share, SLO["offered_share"],
                                                  share >= SLO["offered_share"])  # fmt: skip


def saturation(step: StepResult, cores: int) -> list[str]:
    """What ran out first, from the step's own measurements, most telling first."""
    notes = []
    cpu = {k: v for k, v in step.cpu.items() if k not in ("machine", "other work")}
    machine = step.cpu["machine"]["cores"]
    single = [
        (name, figures["busiest"])
        for name, figures in cpu.items()
        if figures["busiest"] >= 0.85 and name in ("api", "worker", "mosquitto", "nginx")
    ]
    for name, busy in sorted(single, key=lambda x: -x[1]):
        notes.append(f"{name}: one process at {busy:.0%} of a core (its event loop is full)")
    if machine >= 0.93 * cores:
        top = sorted(cpu.items(), key=lambda kv: -kv[1]["cores"])[:3]
        notes.append(
            f"the machine: {machine:.2f} of {cores} cores busy ("
            + ", ".join(f"{k} {v['cores']:.2f}" for k, v in top)
            + ")"
        )
    queues = step.queues
    for name in ("outbox_streaming", "webhook_backlog", "mqtt_lag"):
        first, last = queues.get(name, (0, 0))
        if last > max(500, 2 * first):
            notes.append(f"{name} grew from {first:.0f} to {last:.0f} during the step")
    if step.pg.get("lock_waits", 0) >= 1:
        notes.append(f"PostgreSQL: {step.pg['lock_waits']:.1f} backends waiting on locks")
    return notes or ["nothing saturated: every process and queue had room"]


async def wait_for(what: str, check: Any, within: float, every: float = 1.0) -> float:
    started = time.monotonic()
    shown = 0.0
    while True:
        problem = await check()
        if problem is None:
            return time.monotonic() - started
        elapsed = time.monotonic() - started
        if elapsed > within:
            raise RuntimeError(f"{what}: {problem} after {within:.0f} s")
        if elapsed - shown >= 15:
            say(f"    waiting for {what}: {problem} ({elapsed:.0f} s)")
            shown = elapsed
        await asyncio.sleep(every)


def approved_hooks(counts: dict[str, Any], apps: dict[str, dict[str, str]]) -> dict[str, int]:
    ids = {v["app_id"]: k for k, v in apps.items()}
    out = dict.fromkeys(apps, 0)
    for app_id, _vin, what, _n in counts["hooks"]:
        if what == "fleet_clearance_changed:approved":
            out[ids[app_id]] += 1
    return out


async def clear_step(world: World, upto: int, cleared_before: dict[str, int]) -> dict[str, int]:
    """Clearances of the step's new vehicles, until the carmaker approved them all and
    their webhooks arrived (before the measured window)."""
    assert world.feed is not None and world.followers is not None
    followers = world.followers
    asked = await world.feed.ask("clear", upto, within=1800)
    target = {k: cleared_before.get(k, 0) + asked.get(k, 0) for k in world.apps}

    async def approved() -> str | None:
        got = approved_hooks(await followers.ask("counts"), world.apps)
        short = {k: target[k] - got[k] for k in target if got[k] < target[k]}
        return f"approvals still to come {short}" if short else None

    await wait_for("the clearances' webhooks", approved, within=1800)
    return target


def _queues(samples: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    with_metrics = [s["metrics"] for s in samples if s.get("metrics")]
    if not with_metrics:
        return {}
    first, last = with_metrics[0], with_metrics[-1]
    return {k: (first.get(k, 0.0), last.get(k, 0.0)) for k in last}


def _pg_figures(samples: list[dict[str, Any]]) -> dict[str, float]:
    pg = [s for s in samples if s.get("pg")]
    if len(pg) < 2:
        return {}
    first, last = pg[0], pg[-1]
    seconds: float = last["t"] - first["t"]

    def rate(part: str, key: str) -> float:
        later: float = last[part].get(key, 0)
        earlier: float = first[part].get(key, 0)
        return (later - earlier) / seconds

    return {
        "commits_s": rate("pg", "xact_commit"),
        "inserted_s": rate("pg", "tup_inserted"),
        "updated_s": rate("pg", "tup_updated"),
        "deleted_s": rate("pg", "tup_deleted"),
        "blocks_read_s": rate("pg", "blks_read"),
        "wal_mb_s": rate("wal", "wal_bytes") / 2**20,
        "wal_records_s": rate("wal", "wal_records"),
        "wal_fpi_s": rate("wal", "wal_fpi"),
        "lock_waits": sum(s.get("lock_waits", 0) for s in pg) / len(pg),
        "deadlocks": float(last["pg"].get("deadlocks", 0) - first["pg"].get("deadlocks", 0)),
        "size_mb": last.get("pg_size", 0) / 2**20,
    }


def window(samples: list[dict[str, Any]], start: float, end: float) -> list[dict[str, Any]]:
    return [s for s in samples if start <= s["t"] <= end]


async def run_step(world: World, plan: Plan, vehicles: int, step_index: int) -> StepResult:
    assert world.feed is not None and world.followers is not None and world.sampler is not None
    feed, followers, sampler = world.feed, world.followers, world.sampler
    await feed.ask("push", {"vehicles": vehicles})
    await asyncio.sleep(plan.warmup_s)
    sampler.waits.clear()
    started = time.time()
    end = started + plan.step_s
    shown = started
    while time.time() < end:
        await asyncio.sleep(min(plan.sample_s, max(0.1, end - time.time())))
        if time.time() - shown >= max(10.0, plan.step_s / 6) and time.time() < end - 1:
            shown = time.time()
            f = (await feed.ask("summary", (started, shown)))["series"]
            g = (await followers.ask("summary", (started, shown)))["series"]
            lag = max(
                (_p99(g, n) for n in g if n.endswith("_lag_ms") and _count(g, n)), default=0.0
            )
            say(
                f"    {vehicles:>6} vehicles  {shown - started:4.0f}/{plan.step_s:.0f} s  "
                f"ingest p99 {_p99(f, 'ingest_ms'):7.1f} ms  "
                f"pull p99 {_p99(f, 'pull_ms'):6.1f} ms  "
                f"stream lag p99 {lag:7.0f} ms  load {os.getloadavg()[0]:.1f}"
            )
    ended = time.time()
    # The samples close to the window's ends frame the CPU and database figures.
    await asyncio.sleep(0)
    samples = window(sampler.samples, started - plan.sample_s, ended + 0.5)
    feed_summary = await feed.ask("summary", (started, ended))
    followers_summary = await followers.ask("summary", (started, ended))
    cpu = cpu_between(samples[0], samples[-1]) if len(samples) >= 2 else {}
    step = StepResult(
        vehicles=vehicles,
        started=started,
        ended=ended,
        rates=load.rates(vehicles),
        feed=feed_summary,
        followers=followers_summary,
        cpu=cpu,
        waits=pretty_waits(dict(sampler.waits)),
        pg=_pg_figures(samples),
        queues=_queues(samples),
        load1=(samples[0]["load1"], samples[-1]["load1"]) if samples else (0.0, 0.0),
    )
    judge(step)
    return step


# ------------------------------------------------------------------ the end: nothing lost


async def drain(world: World, within: float = 600) -> float:
    import aiohttp

    from bench._soak_stack import parse_metrics

    async def quiet() -> str | None:
        async with (
            aiohttp.ClientSession() as session,
            session.get(world.stack.direct_url + "/metrics") as answer,
        ):
            metrics = parse_metrics(await answer.text())
        # Commands still pending or sent first: their final status, and its webhook, are
        # yet to come (a command answered just after the feed stopped was counted as a
        # lost webhook). A command that turns final commits its event with it, so the
        # queues read after this hold that event until it is delivered.
        in_flight = await commands_in_flight(world)
        busy = {
            k: v for k, v in metrics.items()
            if k in ("outbox_streaming", "outbox_webhooks", "webhook_backlog", "mqtt_lag") and v
        }  # fmt: skip
        if in_flight:
            busy["commands_in_flight"] = in_flight
        return f"queues {busy}" if busy else None

    return await wait_for("the queues to drain", quiet, within)


async def commands_in_flight(world: World) -> int:
    from autoport.kit.db import create_database

    db = create_database(world.stack.url)
    await db.connect()
    try:
        row = await db.reader.fetch_one(
            "SELECT count(*) AS n FROM vehicle_commands WHERE status IN ('pending', 'sent')"
        )
        return int(row["n"]) if row else 0
    finally:
        await db.close()


async def stream_heads(world: World) -> dict[str, int]:
    from autoport.kit.db import create_database
    from autoport.kit.environments import Environment
    from autoport.streaming.repository import get_last_seq

    db = create_database(world.stack.url)
    await db.connect()
    try:
        return {
            key: await get_last_seq(
                db.reader, environment=Environment.production, application_id=app["app_id"]
            )
            for key, app in world.apps.items()
        }
    finally:
        await db.close()


async def missing_points(
    stack: Stack, vehicles: list[tuple[int, str, bytes]], *, sample: int | None = None
) -> tuple[int, int, int]:
    """(acknowledged points, of them missing from the history, vehicles checked): every
    acknowledged delivery of each vehicle, property by property, read back through the
    history's own repository."""
    from autoport.kit.db import create_database

    db = create_database(stack.url)
    await db.connect()
    acknowledged = missing = 0
    checked = vehicles if sample is None else vehicles[:: max(1, len(vehicles) // sample)]
    limit = asyncio.Semaphore(8)
    progress = {"done": 0, "shown": time.monotonic()}

    async def one(vin: str, raw: bytes) -> tuple[int, int]:
        entries = array("q")
        entries.frombytes(raw)
        expected: dict[str, set[int]] = {}
        for entry in entries:
            at_us = (entry >> 2) * 1000
            for key in load.PROPERTIES[entry & 3]:
                expected.setdefault(key, set()).add(at_us)
        async with limit:
            stored = await stored_points(db, vin)
        got_missing = sum(
            1 for key, instants in expected.items() for at in instants if (key, at) not in stored
        )
        progress["done"] += 1
        if time.monotonic() - progress["shown"] > 15:
            progress["shown"] = time.monotonic()
            say(f"    history checked for {progress['done']:,} of {len(checked):,} vehicles")
        return sum(len(v) for v in expected.values()), got_missing

    try:
        for acked, lost in await asyncio.gather(*(one(vin, raw) for _, vin, raw in checked)):
            acknowledged += acked
            missing += lost
    finally:
        await db.close()
    return acknowledged, missing, len(checked)


async def stored_points(db: Any, vin: str) -> set[tuple[str, int]]:
    """("capability.property", timestamp µs) of every point stored for the vehicle, read
    through the history's own reader (hot rows, sealed chunks, the old table alike)."""
    from autoport.history.service import vehicle_history

    found: set[tuple[str, int]] = set()
    async for page in vehicle_history(
        db.reader, environment="production", vin=vin, page_rows=10_000
    ):
        found.update((f"{p.capability}.{p.property}", p.timestamp) for p in page)
    return found


async def retained(stack: Stack, vins: list[str]) -> int:
    from autoport.kit.db import create_database

    db = create_database(stack.url)
    await db.connect()
    try:
        return sum([len(await stored_points(db, vin)) for vin in vins])
    finally:
        await db.close()


def expected_hooks(
    world: World, cleared: int, acked: dict[str, Any]
) -> dict[tuple[str, str, str], int]:
    """Each webhook event that must have arrived (application id, vin, what)."""
    expected: dict[tuple[str, str, str], int] = {}
    for plan in load.APPS:
        app_id = world.apps[plan.key]["app_id"]
        for index in range(0, cleared, plan.every):
            vin = load.vin_of(index)
            for action in ("pending", "approved"):
                expected[(app_id, vin, f"fleet_clearance_changed:{action}")] = 1
    fleet_id = world.apps["fleet"]["app_id"]
    for vin in acked["churned"]:
        for action in ("pending", "approved"):
            expected[(fleet_id, vin, f"fleet_clearance_changed:{action}")] = 1
    return expected


async def verify(world: World, cleared: int, plan: Plan) -> dict[str, Any]:
    assert world.feed is not None and world.followers is not None
    say("  draining: every queue empty, every stream at its head")
    await world.feed.ask("stop", within=120)
    drained = await drain(world)
    heads = await stream_heads(world)

    followers = world.followers

    async def streams_done() -> str | None:
        counts = await followers.ask("counts")
        behind = {k: (c["last"], heads[k]) for k, c in counts["sse"].items()
                  if (c["last"] or 0) < heads[k]}  # fmt: skip
        mqtt_key = next(p.key for p in load.APPS if p.follows == "mqtt")
        if counts["mqtt"]["distinct"] < heads[mqtt_key]:
            behind["mqtt"] = (counts["mqtt"]["distinct"], heads[mqtt_key])
        return f"behind {behind}" if behind else None

    with contextlib.suppress(RuntimeError):
        await wait_for("the followers to reach the heads", streams_done, within=120)
    counts = await world.followers.ask("stop")
    acked = await world.feed.ask("acked", within=300)
    say(f"  checking every acknowledged point in the history ({len(acked['vehicles']):,} "
        "vehicles)")  # fmt: skip
    started = time.monotonic()
    points, lost, checked = await missing_points(
        world.stack, acked["vehicles"] + acked["dark"],
        sample=None if plan.verify_all else 500,
    )  # fmt: skip
    say(f"    {points:,} points checked in {time.monotonic() - started:.0f} s")
    received = {(a, v, w): n for a, v, w, n in counts["hooks"]}
    if plan.costs:
        # The cost phases switch the fleet manager's webhook off for a phase (webhook
        # delivery's cost is the difference): the churn's clearance events of that
        # time had no webhook to go to. Only the cleared fleet's events are expected.
        acked = {**acked, "churned": []}
    expected = expected_hooks(world, cleared, acked)
    missing_hooks = [key for key in expected if key not in received]
    commands_done = {
        what.split(":")[1]
        for _, _, what in received
        if what.startswith("command:") and what.split(":")[2] in ("executed", "failed",
                                                                     "timed_out")
    }  # fmt: skip
    unfinished = [cid for cid in acked["commands"] if cid not in commands_done]
    mqtt_key = next(p.key for p in load.APPS if p.follows == "mqtt")
    sse = {
        key: {**c, "head": heads[key],
              "missing": heads[key] - c["distinct"] - (c["first"] or 1) + 1}
        for key, c in counts["sse"].items()
    }  # fmt: skip
    left = await retained(world.stack, world.retention_vins)
    return {
        "drained_s": drained,
        "points_acknowledged": points,
        "points_lost": lost,
        "vehicles_checked": checked,
        "offered_points": acked["offered_points"],
        "sse": sse,
        "mqtt": {
            **counts["mqtt"],
            "head": heads[mqtt_key],
            "missing": heads[mqtt_key] - counts["mqtt"]["distinct"],
        },
        "webhooks_expected": len(expected),
        "webhooks_missing": len(missing_hooks),
        "webhook_requests": counts["hook_requests"],
        "commands_accepted": len(acked["commands"]),
        "commands_without_final_webhook": len(unfinished),
        "carmaker_calls": counts["carmaker_calls"],
        "retention_points_left": left,
    }


# ------------------------------------------------------------------ one backend


def postgres_url() -> str:
    return os.environ.get("AUTOPORT_TEST_POSTGRES_URL", "")


async def run_backend(plan: Plan, argv: list[str]) -> dict[str, Any] | None:
    if plan.backend == "postgresql" and not postgres_url():
        say("PostgreSQL skipped: AUTOPORT_TEST_POSTGRES_URL is not set")
        return None
    cores = os.cpu_count() or 1
    root = Path(tempfile.mkdtemp(prefix=f"autoport-soak-{plan.backend}-"))
    # The followers first: their server (webhooks, the carmaker's API) on a port the
    # system picks, which the deployment is configured with.
    followers = Child("followers", load.followers_main, None)
    followers_port = int(await followers.ask("port", within=120))
    stack = Stack(
        plan.backend,
        root,
        postgres_url() or None,
        carmaker_url=f"http://127.0.0.1:{followers_port}/carmaker",
        profile_dir=root / "profiles" if plan.profile else None,
    )
    title = (
        "PostgreSQL: nginx, `autoport serve --workers 2 --no-workers`, one `autoport worker`, "
        "Redis, Mosquitto" if stack.postgres
        else "SQLite: nginx, one `autoport serve` (background work in it), Mosquitto"
    )  # fmt: skip
    say(f"\n== {title}")
    say(f"   commit {commit()}, {cores} cores, load average {os.getloadavg()[0]:.1f}")
    result: dict[str, Any] = {
        "backend": plan.backend,
        "mode": plan.mode,
        "command": short_command(["python -m bench fleet_soak", *argv]),
        "commit": commit(),
        "cores": cores,
        "slo": SLO,
        "mix": mix_text(),
        "changed_settings": {k: v for k, (v, _) in CHANGED_SETTINGS.items()},
        "started_at": time.time(),
        "steps": [],
    }
    world: World | None = None
    try:
        started = time.monotonic()
        await stack.start()
        say(f"   started in {time.monotonic() - started:.1f} s; settings changed from the "
            "defaults (logging left at its defaults):")  # fmt: skip
        for key, (value, why) in CHANGED_SETTINGS.items():
            say(f"     {key}={value}: {why}")
        world = await set_up(stack, followers_port)
        world.followers = followers
        made_in = time.monotonic() - started
        say(f"   applications, provider and MQTT credentials made ({made_in:.1f} s)")
        await followers.ask(
            "follow", load.FollowersConfig(stack.base_url, str(stack.cert), world.apps, world.mqtt)
        )
        await subscribe_webhooks(world)
        world.feed = Child(
            "feed",
            load.feed_main,
            load.FeedConfig(stack.base_url, str(stack.cert), world.provider_secret, world.apps),
        )
        await world.feed.ask("cpu", within=120)
        world.retention_vins, seeded = await seed_old_history(stack, plan.retention_seed)
        result["retention_seeded_points"] = seeded
        world.sampler = Sampler(
            stack,
            {"load: feed": world.feed.pid, "load: followers": world.followers.pid,
             "load: orchestrator": os.getpid()},
            plan.sample_s,
        )  # fmt: skip
        await world.sampler.start()
        say(f"   load processes up, {seeded:,} points seeded for retention "
            f"({time.monotonic() - started:.1f} s)")  # fmt: skip
        result["ramp_started_at"] = time.time()
        if plan.costs:
            result["costs_vehicles"] = plan.steps[0]
            result["costs"] = await measure_costs(world, plan)
        else:
            await ramp(world, plan, result, cores)
        result["verification"] = await verify(world, world.cleared, plan)
        result["timeline"] = {
            "feed": await world.feed.ask("timeline", (result["ramp_started_at"], 10.0)),
            "followers": await world.followers.ask("timeline", (result["ramp_started_at"], 10.0)),
            "samples": thin_samples(world.sampler.samples, result["ramp_started_at"]),
        }
        result["storage"] = await storage(stack, result)
        if plan.memory:
            result["memory"] = memory_trend(world.sampler.samples, result)
        report(result)
        say(f"   {plan.backend} done in {time.monotonic() - started:.0f} s")
        return result
    except BaseException:
        say(stack.logs())
        raise
    finally:
        if world is not None:
            if world.sampler is not None:
                await world.sampler.stop()
            if world.feed is not None:
                await world.feed.close()
        await followers.close()
        stopping = time.monotonic()
        await stack.stop()
        say(f"   deployment stopped in {time.monotonic() - stopping:.0f} s")
        if plan.profile and stack.profile_dir is not None:
            from bench._soak_costs import summarize_profiles

            result["profiles"] = summarize_profiles(stack.profile_dir, say)
            save(result)
        shutil.rmtree(root, ignore_errors=True)


async def ramp(world: World, plan: Plan, result: dict[str, Any], cores: int) -> None:
    assert world.feed is not None
    cleared_hooks: dict[str, int] = {}
    for index, vehicles in enumerate(plan.steps):
        rate = load.rates(vehicles)
        say(
            f"\n  step {index + 1}/{len(plan.steps)}: {vehicles:,} vehicles "
            f"({rate['points']:,.0f} points/s in {rate['deliveries']:,.0f} vehicle deliveries/s)"
        )
        started = time.monotonic()
        cleared_hooks = await clear_step(world, vehicles, cleared_hooks)
        world.cleared = max(world.cleared, vehicles)
        say(f"    clearances of the new vehicles approved, webhooks in "
            f"({time.monotonic() - started:.0f} s); warming up {plan.warmup_s:.0f} s, "
            f"then {plan.step_s:.0f} s measured")  # fmt: skip
        step = await run_step(world, plan, vehicles, index)
        result["steps"].append(step_record(step))
        print_step(step, cores)
        save(result)
        if not step.held and plan.stop_on_breach:
            break


async def measure_costs(world: World, plan: Plan) -> list[dict[str, Any]]:
    """Each operation alone at a known rate, after a baseline: the deployment's CPU per
    operation (by process), PostgreSQL rows and WAL per operation (bench._soak_costs)."""
    from bench._soak_costs import phases, price

    assert world.feed is not None and world.followers is not None and world.sampler is not None
    vehicles = plan.steps[0]
    say(f"\n  cost per operation: {vehicles:,} vehicles cleared, then each operation alone "
        f"({plan.warmup_s:.0f} s to settle, {plan.step_s:.0f} s measured)")  # fmt: skip
    await clear_step(world, vehicles, {})
    world.cleared = vehicles
    rates = {"pulls": 200.0, "commands": 10.0, "clearances": 10.0}
    done: dict[str, dict[str, Any]] = {}
    out = []
    for phase in phases(vehicles, rates["pulls"], rates["commands"], rates["clearances"]):
        if not phase.webhooks:
            await set_webhook(world, "fleet", on=False)
        await world.feed.ask("push", phase.push)
        await asyncio.sleep(plan.warmup_s)
        started = time.time()
        await asyncio.sleep(plan.step_s)
        ended = time.time()
        samples = window(world.sampler.samples, started - plan.sample_s, ended + 0.5)
        feed = (await world.feed.ask("summary", (started, ended)))["series"]
        followers = (await world.followers.ask("summary", (started, ended)))["series"]
        if not phase.webhooks:
            await set_webhook(world, "fleet", on=True)
        seconds = samples[-1]["t"] - samples[0]["t"]
        cpu = cpu_between(samples[0], samples[-1])
        figures = price(
            phase,
            seconds,
            cpu,
            _pg_figures(samples),
            phase.counter(feed, followers) * seconds / (ended - started),
            done.get(phase.base) if phase.base else None,
        )
        figures["webhooks"] = _count(followers, "webhook_ms") * seconds / (ended - started)
        figures["load1"] = samples[-1]["load1"]
        figures["other_work"] = cpu.get("other work", {}).get("cores", 0.0)
        done[phase.name] = figures
        out.append(figures)
        say_cost(figures)
    with_hooks, without = done["clearances"], done["clearances without webhooks"]
    if with_hooks.get("webhooks"):
        # Per webhook delivery: the clearances' CPU with their webhooks minus without.
        extra = {
            g: (with_hooks["cores"][g] - without["cores"][g]) * with_hooks["seconds"]
            / with_hooks["webhooks"] * 1e6
            for g in with_hooks["cores"]
        }  # fmt: skip
        webhook = {"phase": "webhook delivery", "what": "webhook delivered to the receiver",
                   "ops": with_hooks["webhooks"], "us_per_op": extra,
                   "us_per_op_total": sum(extra.values())}  # fmt: skip
        out.append(webhook)
        say_cost(webhook)
    await world.feed.ask("stop")
    return out


async def storage_bytes(stack: Stack) -> dict[str, int]:
    """Bytes of each table with its indexes and TOAST (partitions under their table)."""
    if not stack.postgres:
        import sqlite3

        raw = sqlite3.connect(stack.root / "data" / "autoport.db")
        try:
            rows = raw.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:
            rows = []
        finally:
            raw.close()
        return {str(name): int(size) for name, size in rows}
    import asyncpg

    conn = await asyncpg.connect(stack.url)
    try:
        rows = await conn.fetch(
            "SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text AS name, "
            "sum(pg_total_relation_size(c.oid)) AS bytes "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "GROUP BY 1"
        )
    finally:
        await conn.close()
    return {str(r["name"]): int(r["bytes"]) for r in rows}


def say_cost(figures: dict[str, Any]) -> None:
    if "us_per_op_total" not in figures:
        say(f"    {figures['phase']:<28} baseline: "
            + ", ".join(f"{g} {c:.3f}" for g, c in figures["cores"].items() if c >= 0.001)
            + " cores")  # fmt: skip
        return
    parts = ", ".join(f"{g} {v:,.0f}" for g, v in figures["us_per_op"].items() if abs(v) >= 0.5)
    extra = ""
    if "rows_per_op" in figures:
        extra = (f"; PostgreSQL {figures['rows_per_op']:.2f} rows, "
                 f"{figures['wal_bytes_per_op']:,.0f} WAL bytes, "
                 f"{figures['commits_per_op']:.3f} commits per op")  # fmt: skip
    say(
        f"    {figures['phase']:<28} {figures['us_per_op_total']:8,.0f} µs CPU per "
        f"{figures['what']} ({figures['ops']:,.0f} in the window: {parts}){extra}"
    )


async def set_webhook(world: World, key: str, *, on: bool) -> None:
    import aiohttp

    app_id = world.apps[key]["app_id"]
    if on:
        await subscribe_webhooks(world)
        return
    async with (
        aiohttp.ClientSession() as session,
        session.delete(
            f"{world.stack.direct_url}/admin/v1/applications/{app_id}/webhook",
            headers={"Authorization": f"Bearer {world.stack.admin_token}"},
        ) as answer,
    ):
        if answer.status != 204:
            raise RuntimeError(f"removing the webhook of {key}: {answer.status}")


def step_record(step: StepResult) -> dict[str, Any]:
    record = asdict(step)
    record["held"] = step.held
    record["saturation"] = saturation(step, os.cpu_count() or 1)
    return record


def print_step(step: StepResult, cores: int) -> None:
    verdict = "HELD" if step.held else "BROKEN"
    say(f"    {verdict}: " + "; ".join(
        f"{name} {value:.4g}{'' if ok else ' (limit ' + format(limit, '.4g') + ')'}"
        for name, (value, limit, ok) in step.checks.items()
    ))  # fmt: skip
    cpu = step.cpu
    parts = [
        f"{name} {figures['cores']:.2f}"
        + (f" (busiest {figures['busiest']:.2f})" if figures.get("processes", 1) > 1 else "")
        for name, figures in sorted(cpu.items(), key=lambda kv: -kv[1]["cores"])
        if name != "machine" and figures["cores"] >= 0.005
    ]
    say(f"    CPU cores: machine {cpu.get('machine', {}).get('cores', 0):.2f} of {cores}; "
        + ", ".join(parts))  # fmt: skip
    if step.pg:
        pg = step.pg
        say(
            f"    PostgreSQL: {pg['commits_s']:,.0f} commits/s, rows {pg['inserted_s']:,.0f} "
            f"inserted {pg['updated_s']:,.0f} updated {pg['deleted_s']:,.0f} deleted /s, WAL "
            f"{pg['wal_mb_s']:.1f} MB/s ({pg['wal_fpi_s']:,.0f} full pages/s), lock waits "
            f"{pg['lock_waits']:.2f}, deadlocks {pg['deadlocks']:.0f}; active backends by "
            f"wait: {step.waits}"
        )
    if step.queues:
        say("    queues (start -> end): " + ", ".join(
            f"{k} {a:.0f} -> {b:.0f}" for k, (a, b) in sorted(step.queues.items())
        ))  # fmt: skip
    failures = error_series(step.feed["series"])
    if failures:
        say("    failed: " + ", ".join(f"{n} {_count(step.feed['series'], n)}" for n in failures))
    say("    saturation: " + "; ".join(saturation(step, cores)))


def thin_samples(samples: list[dict[str, Any]], start: float) -> list[dict[str, Any]]:
    """Per sample: time, group CPU (cores over the previous sample), RSS and open files per
    group, queues; what the plots and the memory trend need."""
    out = []
    for before, after in itertools.pairwise(samples):
        if after["t"] < start:
            continue
        cpu = cpu_between(before, after)
        out.append(
            {
                "t": after["t"] - start,
                "cpu": {k: round(v["cores"], 3) for k, v in cpu.items()},
                "rss_mb": {
                    k: round(sum(r for _, r, _ in pids.values()) / 2**20, 1)
                    for k, pids in after["processes"].items()
                },
                "fds": {
                    k: sum(f for _, _, f in pids.values()) for k, pids in after["processes"].items()
                },
                "metrics": after.get("metrics", {}),
                "db_mb": round((after.get("pg_size") or after.get("db_size") or 0) / 2**20, 1),
            }
        )
    return out


def memory_trend(samples: list[dict[str, Any]], result: dict[str, Any]) -> dict[str, Any]:
    """RSS and open files per group over the hold, after its first fifth: the least-squares
    slope per hour, and the first and last values."""
    thin = result["timeline"]["samples"]
    if len(thin) < 4:
        return {}
    skip = len(thin) // 5
    kept = thin[skip:]
    trend: dict[str, Any] = {}
    for group in kept[-1]["rss_mb"]:
        # PostgreSQL's backends each map the shared buffers: their RSS sums say nothing.
        if group.startswith(("load", "postgres")):
            continue
        xs = [s["t"] / 3600 for s in kept if group in s["rss_mb"]]
        for measure in ("rss_mb", "fds"):
            ys = [s[measure][group] for s in kept if group in s[measure]]
            if len(xs) < 3:
                continue
            slope = least_squares(xs, ys)
            trend.setdefault(group, {})[measure] = {
                "first": ys[0], "last": ys[-1], "per_hour": slope, "max": max(ys),
            }  # fmt: skip
    return {"from_s": kept[0]["t"], "to_s": kept[-1]["t"], "groups": trend}


def least_squares(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0


async def storage(stack: Stack, result: dict[str, Any]) -> dict[str, Any]:
    """Bytes at rest: the database, and the history's tables, per acknowledged point
    (points not sealed yet are rows of history_hot: the soak's steps are shorter than
    the hour after which the history worker seals them)."""
    points = result["verification"]["points_acknowledged"] + result.get(
        "retention_seeded_points", 0
    )
    tables = await storage_bytes(stack)
    if stack.postgres:
        import asyncpg

        conn = await asyncpg.connect(stack.url)
        try:
            total = int(await conn.fetchval("SELECT pg_database_size(current_database())"))
        finally:
            await conn.close()
    else:
        total = sum(p.stat().st_size for p in (stack.root / "data").glob("autoport.db*"))
    history = sum(v for k, v in tables.items() if "history" in k)
    return {
        "database_bytes": total,
        "history_bytes": history,
        "points_stored": points,
        "history_bytes_per_point": history / points if points else None,
        "largest_tables": dict(sorted(tables.items(), key=lambda kv: -kv[1])[:8]),
    }


def mix_text() -> str:
    return (
        f"{load.DRIVING_PER_100} % driving ({', '.join(load.PROPERTIES[load.DRIVING])} at 1 Hz), "
        f"{load.CHARGING_PER_100} % charging ({len(load.PROPERTIES[load.CHARGING])} properties "
        f"every 10 s), the rest parked ({len(load.PROPERTIES[load.PARKED])} properties every "
        f"30 s); batches every {load.TICK_S * 1000:.0f} ms of at most {load.BATCH_VEHICLES} "
        f"vehicles; pulls 1/{1 / load.PULLS_PER_VEHICLE_S:.0f} s per vehicle, a command per "
        f"{1 / load.COMMANDS_PER_VEHICLE_S:,.0f} vehicles a second, a new fleet vehicle per "
        f"{1 / load.CLEARANCES_PER_VEHICLE_S:,.0f} a second"
    )


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "log", "-1", "--format=%h %cs %s"], capture_output=True, text=True,
            check=True,
        ).stdout.strip()[:90]  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def save(result: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = f"fleet_soak_{result['backend']}" + (
        "" if result["mode"] == "full" else f"_{result['mode']}"
    )
    body = orjson.dumps(result, option=orjson.OPT_INDENT_2, default=str)
    (RESULTS / f"{name}.json").write_bytes(body)


# ------------------------------------------------------------------ the report


def server_cores(cpu: dict[str, dict[str, float]]) -> float:
    """Cores the deployment's own processes used (not the load, not other work)."""
    return sum(
        v["cores"]
        for k, v in cpu.items()
        if k not in ("machine", "other work") and not k.startswith("load")
    )


def held_steps(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in result["steps"] if s["held"]]


def report(result: dict[str, Any]) -> None:
    cores = result["cores"]
    say(f"\n== fleet soak, {result['backend']}: {result['command']}")
    say(f"   mix: {result['mix']}")
    steps = result["steps"]
    if steps:
        say("   vehicles | points/s | ingest p99 | pull p99 | SSE lag p99 | MQTT lag p99 | "
            "webhook p99 | machine CPU | load gen CPU | held")  # fmt: skip
        for s in steps:
            feed, fol = s["feed"]["series"], s["followers"]["series"]
            sse = max((_p99(fol, n) for n in fol if n.startswith("sse_") and n.endswith("lag_ms")
                       and _count(fol, n)), default=float("nan"))  # fmt: skip
            loadgen = sum(v["cores"] for k, v in s["cpu"].items() if k.startswith("load"))
            say(
                f"   {s['vehicles']:>8,} | {s['rates']['points']:>8,.0f} | "
                f"{_p99(feed, 'ingest_ms'):7.1f} ms | {_p99(feed, 'pull_ms'):5.1f} ms | "
                f"{sse:8.0f} ms | {_p99(fol, 'mqtt_lag_ms'):9.0f} ms | "
                f"{_p99(fol, 'webhook_ms'):8.0f} ms | {s['cpu']['machine']['cores']:.2f} of "
                f"{cores} | {loadgen:.2f} ({loadgen / cores:.0%}) | "
                f"{'yes' if s['held'] else 'NO'}"
            )
        held = held_steps(result)
        best = max((s["vehicles"] for s in held), default=0)
        result["largest_held"] = best
        result["vehicles_per_core"] = best / cores
        last = steps[-1]
        say(
            f"   largest fleet held: {best:,} vehicles = {best / cores:,.0f} vehicles per core "
            f"of this {cores}-core machine (everything on it: PostgreSQL, nginx, broker, "
            "the load generator)"
        )
        if best:
            top = next(s for s in held if s["vehicles"] == best)
            server = server_cores(top["cpu"])
            result["vehicles_per_server_core"] = best / server if server else None
            say(f"   at {best:,}: the deployment's processes used {server:.2f} cores = "
                f"{best / server:,.0f} vehicles per core they used")  # fmt: skip
        which = "the step that broke" if not last["held"] else "the largest step"
        say(f"   what saturated first ({which}, {last['vehicles']:,} vehicles): "
            + "; ".join(last["saturation"]))  # fmt: skip
        loadgen = [sum(v["cores"] for k, v in s["cpu"].items() if k.startswith("load"))
                   for s in steps]  # fmt: skip
        say(
            f"   the load generator took {min(loadgen):.2f} to {max(loadgen):.2f} cores "
            f"({min(loadgen) / cores:.0%} to {max(loadgen) / cores:.0%} of the machine)"
        )
    v = result.get("verification")
    if v:
        say(
            f"   nothing lost? points: {v['points_acknowledged']:,} acknowledged, "
            f"{v['points_lost']:,} missing from the history ({v['vehicles_checked']:,} vehicles "
            f"checked); webhooks: {v['webhooks_expected']:,} events expected, "
            f"{v['webhooks_missing']:,} missing ({v['webhook_requests']:,} requests received); "
            f"commands: {v['commands_accepted']:,} accepted, "
            f"{v['commands_without_final_webhook']:,} without their final webhook; "
            + "; ".join(
                f"SSE {k}: {c['distinct']:,} of head {c['head']:,}, {c['gaps']} gaps, "
                f"{c['connects']} connections"
                for k, c in v["sse"].items()
            )
            + f"; MQTT: {v['mqtt']['distinct']:,} of head {v['mqtt']['head']:,} "
            f"({v['mqtt']['received']:,} received); queues drained in {v['drained_s']:.1f} s"
        )
        say(
            f"   retention: {result.get('retention_seeded_points', 0):,} points seeded "
            f"{RETENTION_AGE_DAYS} days old, {v['retention_points_left']:,} left"
        )
    s = result.get("storage")
    if s and s.get("history_bytes_per_point"):
        say(f"   at rest: {s['history_bytes'] / 2**20:,.1f} MB of history for "
            f"{s['points_stored']:,} points = {s['history_bytes_per_point']:,.0f} bytes per "
            f"point; database {s['database_bytes'] / 2**20:,.1f} MB")  # fmt: skip
    m = result.get("memory")
    if m:
        say(f"   memory over {m['from_s']:.0f}-{m['to_s']:.0f} s of the hold (least-squares "
            "slope per hour):")  # fmt: skip
        for group, figures in m["groups"].items():
            rss, fds = figures.get("rss_mb", {}), figures.get("fds", {})
            say(f"     {group:<16} RSS {rss.get('first', 0):7.1f} -> {rss.get('last', 0):7.1f} "
                f"MB ({rss.get('per_hour', 0):+6.1f} MB/h), open files {fds.get('first', 0)} -> "
                f"{fds.get('last', 0)} ({fds.get('per_hour', 0):+.1f}/h)")  # fmt: skip
    save(result)
    say(f"   figures written to {RESULTS}/fleet_soak_{result['backend']}*.json")


def verdict(result: dict[str, Any]) -> list[str]:
    """The problems that fail the run: anything acknowledged and lost."""
    v = result.get("verification", {})
    problems = []
    if v.get("points_lost"):
        problems.append(f"{v['points_lost']} acknowledged points lost")
    if v.get("webhooks_missing"):
        problems.append(f"{v['webhooks_missing']} webhook events missing")
    if v.get("commands_without_final_webhook"):
        problems.append(f"{v['commands_without_final_webhook']} commands without a final webhook")
    for key, c in v.get("sse", {}).items():
        if c["gaps"] or (c["distinct"] and c["last"] != c["head"]):
            problems.append(f"SSE {key}: {c['gaps']} gaps, at {c['last']} of {c['head']}")
    if v.get("mqtt", {}).get("missing"):
        problems.append(f"MQTT: {v['mqtt']['missing']} messages missing")
    return problems


def _stop_on_sigterm() -> None:
    """SIGTERM (a run stopped by hand, a timeout) unwinds like Ctrl-C: the deployment's
    processes are stopped and the soak's database dropped instead of left behind."""

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def main() -> int:
    _stop_on_sigterm()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", choices=("both", "postgresql", "sqlite"), default="both")
    parser.add_argument("--quick", action="store_true", help="short steps (a few minutes)")
    parser.add_argument("--smoke", action="store_true", help="one tiny step: CI")
    parser.add_argument("--steps", help="vehicles per step, comma-separated")
    parser.add_argument("--step-seconds", type=float, help="measured seconds per step")
    parser.add_argument("--keep-going", action="store_true", help="every step, even broken")
    parser.add_argument("--hold", type=int, help="one step of this many vehicles (memory run)")
    parser.add_argument("--minutes", type=float, default=30.0, help="how long --hold holds")
    parser.add_argument("--costs", action="store_true", help="CPU per operation, phase by phase")
    parser.add_argument("--profile", action="store_true", help="py-spy on the API and worker")
    args = parser.parse_args()
    argv = sys.argv[1:]
    failed: list[str] = []
    for plan in plans(args):
        result = asyncio.run(run_backend(plan, argv))
        if result is not None:
            problems = verdict(result)
            if problems:
                say(f"   LOST: {'; '.join(problems)}")
                failed += problems
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
