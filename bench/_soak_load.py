"""The load of `bench.fleet_soak`: a carmaker's feed, applications and their followers.

Two processes, so that neither's event loop delays the other's clocks:

- the **feed** (`feed_main`): a provider pushing the fleet through `POST /v1/ingest` at
  the realistic mix (`FLEET`), batched as a carmaker's feed sends them (every 100 ms,
  what became due in that tick, at most `BATCH_VEHICLES` vehicles a request); the
  applications' pulls, fleet clearance requests and vehicle commands;
- the **followers** (`followers_main`): the applications' SSE streams and MQTT
  subscription, the webhook receiver and the carmaker's API (clearances, commands) on
  one local aiohttp server.

Both are cheap by construction: bodies are spliced from per-vehicle templates built
once (a timestamp replaced, a few numbers formatted for moving cars), followers find the
timestamp and the message id in a message's bytes without parsing its JSON. Each keeps
its samples (`Series`: wall-clock instant, value) and answers the orchestrator's
requests on a pipe: summaries of a window, the samples in buckets for the plots, its own
CPU time, and at the end what was acknowledged (for the end-to-end loss count).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import random
import resource
import ssl
import time
from array import array
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from typing import Any

import orjson

# ------------------------------------------------------------------ the fleet's mix

PARKED, DRIVING, CHARGING = 0, 1, 2
KIND_NAMES = {PARKED: "parked", DRIVING: "driving", CHARGING: "charging"}
# Of every 100 vehicles: 10 driving, 5 charging, 85 parked.
DRIVING_PER_100 = 10
CHARGING_PER_100 = 5
# Seconds between two deliveries of one vehicle, by what it does.
PERIOD_S = {PARKED: 30.0, DRIVING: 1.0, CHARGING: 10.0}
TICK_S = 0.1
BATCH_VEHICLES = 50

# What each kind of vehicle sends: a parked car its 20-property snapshot, a driving one
# where it is, how fast, its odometer and battery; a charging one its charging state.
PROPERTIES: dict[int, tuple[str, ...]] = {
    PARKED: (
        "charging.battery_level",
        "charging.estimated_range",
        "charging.plugged_in",
        "charging.status",
        "charging.charge_limit",
        "charging.charging_rate",
        "charging.time_to_complete_charge",
        "diagnostics.odometer",
        "diagnostics.speed",
        "diagnostics.battery_voltage",
        "diagnostics.washer_fluid_level",
        "diagnostics.engine_coolant_temperature",
        "diagnostics.low_voltage_battery_charge_level",
        "doors.locks_state",
        "climate.inside_temperature",
        "climate.outside_temperature",
        "vehicle_location.coordinates",
        "vehicle_location.heading",
        "ignition.state",
        "engine.status",
    ),
    DRIVING: (
        "vehicle_location.coordinates",
        "diagnostics.speed",
        "diagnostics.odometer",
        "charging.battery_level",
    ),
    CHARGING: (
        "charging.battery_level",
        "charging.charging_rate",
        "charging.status",
        "charging.time_to_complete_charge",
        "charging.estimated_range",
    ),
}


def kind_of(index: int) -> int:
    slot = index % 100
    if slot < DRIVING_PER_100:
        return DRIVING
    if slot < DRIVING_PER_100 + CHARGING_PER_100:
        return CHARGING
    return PARKED


def rates(vehicles: int) -> dict[str, float]:
    """Vehicle deliveries and data points per second of `vehicles` at the mix."""
    counts = {kind: 0 for kind in PERIOD_S}
    for index in range(min(vehicles, 100)):
        counts[kind_of(index)] += 1
    scale = vehicles / max(1, min(vehicles, 100))
    deliveries = sum(counts[k] * scale / PERIOD_S[k] for k in counts)
    points = sum(counts[k] * scale * len(PROPERTIES[k]) / PERIOD_S[k] for k in counts)
    return {"deliveries": deliveries, "points": points}


# The applications: who reads what, how, and which share of the fleet each is cleared for.
@dataclass(frozen=True)
class AppPlan:
    key: str
    name: str
    properties: tuple[str, ...]
    # Cleared for vehicle `i` when i % every == 0.
    every: int
    follows: str  # "sse" or "mqtt"
    commands: tuple[str, ...] = ()


APPS: tuple[AppPlan, ...] = (
    AppPlan(
        "fleet",
        "Fleet manager (pulls, SSE, commands)",
        PROPERTIES[PARKED],
        every=1,
        follows="sse",
        commands=("doors.lock_unlock_doors",),
    ),
    AppPlan(
        "insurer",
        "Insurer (MQTT)",
        ("diagnostics.odometer", "diagnostics.speed", "vehicle_location.coordinates"),
        every=2,
        follows="mqtt",
    ),
    AppPlan(
        "energy",
        "Energy service (SSE)",
        (*PROPERTIES[CHARGING], "charging.plugged_in"),
        every=5,
        follows="sse",
    ),
)

# Requests of the applications, per vehicle in the fleet and second.
PULLS_PER_VEHICLE_S = 1 / 100  # each vehicle pulled every 100 s on average
COMMANDS_PER_VEHICLE_S = 1 / 2000
CLEARANCES_PER_VEHICLE_S = 1 / 10_000  # new vehicles joining a fleet (churn)
TOKEN_REFRESH_S = 120.0
IN_FLIGHT = 96


def vin_of(index: int, space: str = "F") -> str:
    """The fleet's vehicle `index` (space F), or a newcomer of the churn (space C): a
    valid VIN of the brand's manufacturer code, the same in every run."""
    from autoport.vehicles.vin import generate_vin

    return generate_vin(random.Random(f"{space}{index}"), "WBA")


def iso_ms(instant_ms: int) -> str:
    """An instant in whole milliseconds as a wrapper's timestamp."""
    seconds, ms = divmod(instant_ms, 1000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{ms:03d}Z"


def parse_iso(text: bytes) -> float:
    """Seconds since the epoch of a wrapper's timestamp ("...Z", any fraction)."""
    return datetime.fromisoformat(text.decode().replace("Z", "+00:00")).timestamp()


# ------------------------------------------------------------------ samples


class Series:
    """Samples in arrival order: (wall-clock instant, value)."""

    def __init__(self) -> None:
        self.at = array("d")
        self.values = array("d")

    def add(self, value: float, at: float | None = None) -> None:
        self.at.append(time.time() if at is None else at)
        self.values.append(value)

    def window(self, start: float, end: float) -> list[float]:
        lo = bisect.bisect_left(self.at, start)
        hi = bisect.bisect_left(self.at, end)
        return list(self.values[lo:hi])

    def buckets(self, start: float, width: float) -> list[tuple[float, list[float]]]:
        """The values in consecutive buckets of `width` seconds from `start`."""
        out: list[tuple[float, list[float]]] = []
        if not self.at:
            return out
        edge = start
        index = bisect.bisect_left(self.at, start)
        while index < len(self.at):
            nxt = bisect.bisect_left(self.at, edge + width, lo=index)
            out.append((edge, list(self.values[index:nxt])))
            index, edge = nxt, edge + width
        return out


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summarize(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"count": 0}
    n = len(ordered)
    return {
        "count": n,
        "p50": ordered[int(0.50 * (n - 1))],
        "p90": ordered[int(0.90 * (n - 1))],
        "p99": ordered[int(0.99 * (n - 1))],
        "max": ordered[-1],
        "mean": sum(ordered) / n,
    }


@dataclass
class Recorder:
    series: dict[str, Series] = field(default_factory=dict)

    def add(self, name: str, value: float = 1.0, at: float | None = None) -> None:
        found = self.series.get(name)
        if found is None:
            found = self.series[name] = Series()
        found.add(value, at)

    def summary(self, start: float, end: float) -> dict[str, dict[str, float]]:
        return {name: summarize(s.window(start, end)) for name, s in self.series.items()}

    def timeline(self, start: float, width: float) -> dict[str, list[dict[str, float]]]:
        out: dict[str, list[dict[str, float]]] = {}
        for name, s in self.series.items():
            out[name] = [
                {"t": edge - start, "count": len(v), "sum": sum(v),
                 "p50": percentile(v, 0.5), "p99": percentile(v, 0.99)}
                for edge, v in s.buckets(start, width)
            ]  # fmt: skip
        return out


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ------------------------------------------------------------------ the control pipe


async def serve_pipe(pipe: Connection, handle: Callable[[str, Any], Awaitable[Any]]) -> None:
    """Answer the orchestrator's requests ((verb, argument) -> answer) until "exit". The
    pipe is read and written in a thread: it stays blocking, and a large answer never
    holds the event loop."""
    loop = asyncio.get_running_loop()
    while True:
        verb, argument = await loop.run_in_executor(None, pipe.recv)
        if verb == "exit":
            pipe.send(None)
            return
        try:
            answer = await handle(verb, argument)
        except Exception as error:  # the orchestrator prints it and stops the run
            answer = {"error": f"{type(error).__name__}: {error}"}
        await loop.run_in_executor(None, pipe.send, answer)


def tls_context(cafile: str | None) -> ssl.SSLContext | bool:
    return ssl.create_default_context(cafile=cafile) if cafile else False


# ------------------------------------------------------------------ the feed


def _example(prop_key: str, index: int) -> Any:
    """A valid value of the property for vehicle `index` (the catalog's example, with
    the numbers a car would have)."""
    from autoport.catalog import CATALOG
    from autoport.catalog.schemas import example_data

    capability, _, name = prop_key.partition(".")
    prop = CATALOG.get(capability, name)
    assert prop is not None, prop_key
    value = example_data(prop.type)
    rng = random.Random(f"{prop_key}{index}")
    if prop_key == "vehicle_location.coordinates":
        return {"latitude": 48.0 + rng.random() * 6, "longitude": 6.0 + rng.random() * 8}
    if isinstance(value, float) and 0.0 <= value <= 1.0:
        return round(0.2 + rng.random() * 0.75, 3)
    if isinstance(value, dict) and "value" in value:
        scale = {"diagnostics.odometer": 80_000_000.0}.get(prop_key, 400.0)
        return {**value, "value": round(rng.random() * scale, 1)}
    return value


@dataclass
class Vehicle:
    index: int
    vin: str
    kind: int
    # The parked snapshot with the timestamp left to fill in (b"@T@").
    snapshot: bytes
    # A moving car's state.
    lat: float = 50.0
    lon: float = 10.0
    odometer: float = 0.0
    battery: float = 0.5
    # What was acknowledged: (instant in ms << 2) | kind, one entry per delivery.
    acked: array[int] = field(default_factory=lambda: array("q"))


def _wrapper(value: Any) -> bytes:
    return b'{"data":' + orjson.dumps(value) + b',"timestamp":"@T@"}'


def build_vehicle(index: int) -> Vehicle:
    vin = vin_of(index)
    groups: dict[str, list[bytes]] = {}
    for key in PROPERTIES[PARKED]:
        capability, _, name = key.partition(".")
        groups.setdefault(capability, []).append(
            b'"' + name.encode() + b'":' + _wrapper(_example(key, index))
        )
    body = b",".join(
        b'"' + capability.encode() + b'":{' + b",".join(members) + b"}"
        for capability, members in groups.items()
    )
    snapshot = b'{"vin":"' + vin.encode() + b'","brand":"bmw",' + body + b"}"
    rng = random.Random(index)
    return Vehicle(
        index,
        vin,
        kind_of(index),
        snapshot,
        lat=48.0 + rng.random() * 6,
        lon=6.0 + rng.random() * 8,
        odometer=rng.random() * 80_000_000,
        battery=0.3 + rng.random() * 0.6,
    )


def driving_body(car: Vehicle, stamp: bytes) -> bytes:
    car.lat += 0.0002
    car.lon += 0.0001
    car.odometer += 25.0
    car.battery = max(0.05, car.battery - 0.00003)
    speed = 20.0 + (car.index * 7 + int(car.odometer)) % 15
    t = stamp.decode()
    return (
        f'{{"vin":"{car.vin}","brand":"bmw",'
        f'"vehicle_location":{{"coordinates":{{"data":{{"latitude":{car.lat:.6f},'
        f'"longitude":{car.lon:.6f}}},"timestamp":"{t}"}}}},'
        f'"diagnostics":{{"speed":{{"data":{{"unit":"meters_per_second","value":{speed:.1f}}},'
        f'"timestamp":"{t}"}},"odometer":{{"data":{{"unit":"meters","value":'
        f'{car.odometer:.1f}}},"timestamp":"{t}"}}}},'
        f'"charging":{{"battery_level":{{"data":{car.battery:.4f},"timestamp":"{t}"}}}}}}'
    ).encode()


def charging_body(car: Vehicle, stamp: bytes) -> bytes:
    car.battery = min(1.0, car.battery + 0.0008)
    left = max(0.0, (0.9 - car.battery) * 20_000)
    t = stamp.decode()
    return (
        f'{{"vin":"{car.vin}","brand":"bmw","charging":{{'
        f'"battery_level":{{"data":{car.battery:.4f},"timestamp":"{t}"}},'
        f'"charging_rate":{{"data":{{"unit":"watts","value":11000.0}},"timestamp":"{t}"}},'
        f'"status":{{"data":"charging","timestamp":"{t}"}},'
        f'"time_to_complete_charge":{{"data":{{"unit":"seconds","value":{left:.0f}}},'
        f'"timestamp":"{t}"}},'
        f'"estimated_range":{{"data":{{"unit":"meters","value":{car.battery * 450_000:.0f}}},'
        f'"timestamp":"{t}"}}}}}}'
    ).encode()


@dataclass
class FeedConfig:
    base_url: str  # through nginx
    cafile: str | None
    provider_secret: str
    apps: dict[str, dict[str, str]]  # key -> {app_id, client_id, client_secret}
    tick_s: float = TICK_S
    batch_vehicles: int = BATCH_VEHICLES
    pulls_per_vehicle_s: float = PULLS_PER_VEHICLE_S
    commands_per_vehicle_s: float = COMMANDS_PER_VEHICLE_S
    clearances_per_vehicle_s: float = CLEARANCES_PER_VEHICLE_S
    seed: int = 7


class Feed:
    def __init__(self, config: FeedConfig) -> None:
        self.config = config
        self.rec = Recorder()
        self.cars: list[Vehicle] = []
        self.active = 0  # vehicles 0..active-1 push
        self.cleared = 0  # vehicles 0..cleared-1 were asked to be cleared
        self.dark: list[Vehicle] = []  # pushing, never cleared for anyone (cost phases)
        self.dark_active = 0
        self.pushing = False  # the fleet delivers its data
        self.requesting = False  # the applications pull, command, add vehicles
        self.rng = random.Random(config.seed)
        self.tokens: dict[str, str] = {}
        self.session: Any = None
        self.slots = asyncio.Semaphore(IN_FLIGHT)
        self.churned = 0
        self.commands: list[str] = []
        # Fleet vehicles with data stored (a pull of one without is a 422).
        self.readable: list[int] = []
        self.offered_points = 0
        self.late_ticks = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.rate_overrides: dict[str, float] = {}

    # --------------------------------------------------------------- plumbing

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _token(self, key: str) -> str:
        app = self.config.apps[key]
        async with self.session.post(
            self.config.base_url + "/v1/access_tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
            },
        ) as answer:
            body = await answer.read()
            if answer.status != 200:
                raise RuntimeError(f"token for {key}: {answer.status} {body[:300]!r}")
            return str(orjson.loads(body)["access_token"])

    async def refresh_tokens(self) -> None:
        while True:
            for key in self.config.apps:
                with contextlib.suppress(Exception):
                    self.tokens[key] = await self._token(key)
            await asyncio.sleep(TOKEN_REFRESH_S)

    def ensure_cars(self, count: int) -> None:
        while len(self.cars) < count:
            self.cars.append(build_vehicle(len(self.cars)))

    # --------------------------------------------------------------- pushes

    async def push_loop(self) -> None:
        """Every tick, what became due: each vehicle delivers at its kind's period, at a
        phase of its own, so the load is even over the period."""
        tick_s = self.config.tick_s
        start = time.monotonic()
        tick = 0
        while True:
            tick += 1
            due_at = start + tick * tick_s
            delay = due_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            elif delay < -tick_s:
                self.late_ticks += 1
            if self.pushing:
                self._deliver(tick)

    def _due(self, cars: list[Vehicle], active: int, tick: int) -> list[Vehicle]:
        tick_s = self.config.tick_s
        due = []
        for car in cars[:active]:
            period = max(1, round(PERIOD_S[car.kind] / tick_s))
            if (tick + car.index * 7919) % period == 0:
                due.append(car)
        return due

    def _deliver(self, tick: int) -> None:
        due = self._due(self.cars, self.active, tick) + self._due(self.dark, self.dark_active, tick)
        if not due:
            return
        now = time.time()
        stamp_ms = int(now * 1000)
        stamp = iso_ms(stamp_ms).encode()
        size = self.config.batch_vehicles
        for offset in range(0, len(due), size):
            batch = due[offset : offset + size]
            self._spawn(self._post_batch(batch, stamp, stamp_ms, now))

    async def _post_batch(
        self, batch: list[Vehicle], stamp: bytes, stamp_ms: int, scheduled: float
    ) -> None:
        parts = []
        points = 0
        for car in batch:
            if car.kind == DRIVING:
                parts.append(driving_body(car, stamp))
            elif car.kind == CHARGING:
                parts.append(charging_body(car, stamp))
            else:
                parts.append(car.snapshot.replace(b"@T@", stamp))
            points += len(PROPERTIES[car.kind])
        body = b"[" + b",".join(parts) + b"]"
        self.offered_points += points
        async with self.slots:
            started = time.time()
            self.rec.add("ingest_send_delay_ms", (started - scheduled) * 1000, at=started)
            status, answer = await self._request(
                "POST", "/v1/ingest", self.config.provider_secret, body
            )
            done = time.time()
        self.rec.add("ingest_ms", (done - started) * 1000, at=done)
        self.rec.add("ingest_points", points, at=done)
        if status != 200 or answer is None:
            self.rec.add(f"ingest_errors_{status}", at=done)
            return
        accepted = orjson.loads(answer).get("accepted_count")
        if accepted != points:
            self.rec.add("ingest_rejected", points - (accepted or 0), at=done)
            return
        entry = stamp_ms << 2
        for car in batch:
            if not car.acked and car.index < 1_000_000:
                self.readable.append(car.index)  # has data now: pulls may ask for it
            car.acked.append(entry | car.kind)

    async def _request(
        self, method: str, path: str, token: str, body: bytes | None = None, **headers: str
    ) -> tuple[int, bytes | None]:
        import aiohttp

        try:
            async with self.session.request(
                method,
                self.config.base_url + path,
                data=body,
                headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": "application/json",
                    **headers,
                },
                timeout=aiohttp.ClientTimeout(total=30),
            ) as answer:
                data = await answer.read()
                return answer.status, data if answer.status < 300 else None
        except (aiohttp.ClientError, TimeoutError, OSError):
            return 0, None

    # --------------------------------------------------------------- applications

    async def at_rate(
        self, name: str, per_vehicle: float, action: Callable[[], Awaitable[None]]
    ) -> None:
        """`action` at `per_vehicle` x the active fleet per second, Poisson-spaced."""
        while True:
            rate = self.rate_overrides.get(name, per_vehicle * self.active)
            if not self.requesting or rate <= 0:
                await asyncio.sleep(0.2)
                continue
            await asyncio.sleep(self.rng.expovariate(rate))
            if self.slots.locked():
                self.rec.add(f"{name}_skipped", at=time.time())
                continue
            self._spawn(self._bounded(action))

    async def _bounded(self, action: Callable[[], Awaitable[None]]) -> None:
        async with self.slots:
            await action()

    async def pull_once(self) -> None:
        if not self.readable:
            return
        car = self.cars[self.rng.choice(self.readable)]
        started = time.time()
        status, _ = await self._request(
            "GET", f"/v1/vehicle-data/autoapi-13/{car.vin}", self.tokens["fleet"]
        )
        done = time.time()
        self.rec.add("pull_ms", (done - started) * 1000, at=done)
        if status != 200:
            self.rec.add(f"pull_errors_{status}", at=done)

    async def command_once(self) -> None:
        car = self.cars[self.rng.randrange(self.active)]
        state = self.rng.choice(("locked", "unlocked"))
        body = orjson.dumps(
            {"capability": "doors", "command": "lock_unlock_doors",
             "arguments": {"locks_state": state}}
        )  # fmt: skip
        started = time.time()
        status, answer = await self._request(
            "POST", f"/v1/vehicle-commands/autoapi-13/{car.vin}", self.tokens["fleet"], body
        )
        done = time.time()
        self.rec.add("command_ms", (done - started) * 1000, at=done)
        if status in (200, 202) and answer is not None:
            self.commands.append(str(orjson.loads(answer)["id"]))
        else:
            self.rec.add(f"command_errors_{status}", at=done)

    async def churn_once(self) -> None:
        """A new vehicle joins the fleet manager's fleet (two webhook events: pending,
        then approved by the carmaker)."""
        vin = vin_of(self.churned, "C")
        self.churned += 1
        started = time.time()
        status, _ = await self.add_to_fleet("fleet", [vin])
        done = time.time()
        self.rec.add("clearance_ms", (done - started) * 1000, at=done)
        if status != 200:
            self.rec.add(f"clearance_errors_{status}", at=done)

    async def add_to_fleet(self, key: str, vins: list[str]) -> tuple[int, bytes | None]:
        body = orjson.dumps({"vehicles": [{"vin": vin, "brand": "bmw"} for vin in vins]})
        return await self._request("POST", "/v1/fleets/vehicles", self.tokens[key], body)

    async def clear(self, upto: int) -> dict[str, int]:
        """Ask for the clearances of vehicles cleared..upto-1 (each application its
        share); returns how many each asked for."""
        self.ensure_cars(upto)
        asked: dict[str, int] = {}
        for plan in APPS:
            vins = [c.vin for c in self.cars[self.cleared : upto] if c.index % plan.every == 0]
            asked[plan.key] = len(vins)
            for offset in range(0, len(vins), 1000):
                status, _ = await self.add_to_fleet(plan.key, vins[offset : offset + 1000])
                if status != 200:
                    raise RuntimeError(f"fleet add for {plan.key}: HTTP {status}")
        self.cleared = max(self.cleared, upto)
        return asked

    # --------------------------------------------------------------- control

    async def handle(self, verb: str, argument: Any) -> Any:
        if verb == "clear":
            return await self.clear(int(argument))
        if verb == "push":
            # {"vehicles": n, "dark": m (never cleared), "deliver": bool (data),
            #  "rates": {"pull" | "command" | "clearance": per second} (else per vehicle)}
            self.ensure_cars(int(argument["vehicles"]))
            self.active = int(argument["vehicles"])
            dark = int(argument.get("dark", 0))
            while len(self.dark) < dark:
                car = build_vehicle(1_000_000 + len(self.dark))
                self.dark.append(car)
            self.dark_active = dark
            self.rate_overrides = dict(argument.get("rates", {}))
            self.pushing = bool(argument.get("deliver", True))
            self.requesting = True
            return {"active": self.active, "dark": self.dark_active}
        if verb == "stop":
            self.pushing = self.requesting = False
            await asyncio.gather(*self.tasks, return_exceptions=True)
            return True
        if verb == "summary":
            start, end = argument
            return {"series": self.rec.summary(start, end), "late_ticks": self.late_ticks}
        if verb == "timeline":
            start, width = argument
            return self.rec.timeline(start, width)
        if verb == "cpu":
            return cpu_seconds()
        if verb == "acked":
            return {
                "vehicles": [(c.index, c.vin, c.acked.tobytes()) for c in self.cars if c.acked],
                "dark": [(c.index, c.vin, c.acked.tobytes()) for c in self.dark if c.acked],
                "commands": list(self.commands),
                "churned": [vin_of(n, "C") for n in range(self.churned)],
                "offered_points": self.offered_points,
            }
        raise ValueError(f"unknown request {verb!r}")

    async def run(self, pipe: Connection) -> None:
        import aiohttp

        connector = aiohttp.TCPConnector(ssl=tls_context(self.config.cafile), limit=IN_FLIGHT)
        async with aiohttp.ClientSession(connector=connector) as session:
            self.session = session
            for key in self.config.apps:
                self.tokens[key] = await self._token(key)
            workers = [
                asyncio.create_task(self.refresh_tokens()),
                asyncio.create_task(self.push_loop()),
                asyncio.create_task(
                    self.at_rate("pull", self.config.pulls_per_vehicle_s, self.pull_once)
                ),
                asyncio.create_task(
                    self.at_rate("command", self.config.commands_per_vehicle_s, self.command_once)
                ),
                asyncio.create_task(
                    self.at_rate("clearance", self.config.clearances_per_vehicle_s, self.churn_once)
                ),
            ]
            try:
                await serve_pipe(pipe, self.handle)
            finally:
                for task in workers:
                    task.cancel()


def _uvloop() -> None:
    with contextlib.suppress(ImportError):
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def feed_main(pipe: Connection, config: FeedConfig) -> None:
    _uvloop()
    asyncio.run(Feed(config).run(pipe))


# ------------------------------------------------------------------ the followers

TIMESTAMP_KEY = b'"timestamp":"'
MESSAGE_ID_KEY = b'"message_id":"'


def message_lag_ms(body: bytes, now: float) -> float | None:
    """Milliseconds from a stream message's data point (its wrapper's timestamp, the
    instant the feed sent it) to `now`; None for a message without one (a command's)."""
    at = body.find(TIMESTAMP_KEY)
    if at < 0:
        return None
    start = at + len(TIMESTAMP_KEY)
    end = body.find(b'"', start)
    return (now - parse_iso(body[start:end])) * 1000


@dataclass
class FollowersConfig:
    """What the followers follow, given once the deployment is up ("follow")."""

    base_url: str
    cafile: str | None
    apps: dict[str, dict[str, str]]
    mqtt: dict[str, Any]  # {host, port, username, password, topic} of the MQTT follower


class Followers:
    """Starts with its server (the webhook receiver and the carmaker's API, on a port the
    system picks, answered to "port"), before the deployment that calls it; follows the
    streams once told to ("follow")."""

    def __init__(self) -> None:
        self.config: FollowersConfig | None = None
        self.port = 0
        self.tasks: list[asyncio.Task[None]] = []
        self.rec = Recorder()
        self.session: Any = None
        # SSE: per application, every event id seen (in order) and the reconnections.
        self.sse_ids: dict[str, array[int]] = {}
        self.sse_connects: dict[str, int] = {}
        self.sse_gaps: dict[str, int] = {}
        self.mqtt_ids: set[str] = set()
        self.mqtt_received = 0
        # Webhooks: (application id, vin, what) -> delivery ids
        self.hooks: dict[tuple[str, str, str], set[str]] = {}
        self.hook_requests = 0
        self.carmaker_calls: dict[str, int] = {}
        self.stopping = False

    # --------------------------------------------------------------- SSE

    async def _token(self, key: str) -> str:
        assert self.config is not None
        app = self.config.apps[key]
        async with self.session.post(
            self.config.base_url + "/v1/access_tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
            },
        ) as answer:
            return str(orjson.loads(await answer.read())["access_token"])

    async def follow_sse(self, key: str) -> None:
        import aiohttp

        assert self.config is not None
        base_url = self.config.base_url
        ids = self.sse_ids.setdefault(key, array("q"))
        self.sse_connects[key] = 0
        self.sse_gaps[key] = 0
        last: int | None = None
        while not self.stopping:
            headers = {"Accept": "text/event-stream"}
            try:
                headers["Authorization"] = f"Bearer {await self._token(key)}"
                if last is not None:
                    headers["Last-Event-ID"] = str(last)
                self.sse_connects[key] += 1
                async with self.session.get(
                    base_url + "/v1/stream",
                    headers=headers,
                    timeout=aiohttp.ClientTimeout(total=None, sock_read=60),
                ) as answer:
                    if answer.status != 200:
                        self.rec.add(f"sse_{key}_errors", answer.status)
                        await asyncio.sleep(1)
                        continue
                    buffer = b""
                    async for chunk in answer.content.iter_any():
                        now = time.time()
                        buffer += chunk
                        events = buffer.split(b"\n\n")
                        buffer = events.pop()
                        for event in events:
                            last = self._sse_event(key, event, now, ids, last)
            except (aiohttp.ClientError, TimeoutError, OSError):
                self.rec.add(f"sse_{key}_errors", 0)
            if not self.stopping:
                await asyncio.sleep(0.2)

    def _sse_event(
        self, key: str, event: bytes, now: float, ids: array[int], last: int | None
    ) -> int | None:
        if not event.startswith(b"id: "):
            # The stream's starting position ("event: start" with its id), or retry:,
            # keep-alive, end, gap: no message.
            if b"event: start\n" in event:
                at = event.find(b"\nid: ") + 5
                return int(event[at : event.find(b"\n", at)])
            return last
        line, _, rest = event.partition(b"\n")
        seq = int(line[4:])
        if not rest.startswith(b"data: "):
            return seq
        if last is not None and seq != last + 1:
            self.sse_gaps[key] += 1
        ids.append(seq)
        lag = message_lag_ms(rest, now)
        if lag is not None:
            self.rec.add(f"sse_{key}_lag_ms", lag, at=now)
        return seq

    # --------------------------------------------------------------- MQTT

    async def follow_mqtt(self) -> None:
        import aiomqtt

        assert self.config is not None
        mqtt = self.config.mqtt
        while not self.stopping:
            try:
                async with aiomqtt.Client(
                    mqtt["host"],
                    int(mqtt["port"]),
                    username=mqtt["username"],
                    password=mqtt["password"],
                    identifier=f"soak-{mqtt['username']}",
                    clean_session=False,
                    keepalive=30,
                ) as client:
                    await client.subscribe(mqtt["topic"], qos=1)
                    async for message in client.messages:
                        now = time.time()
                        body = bytes(message.payload)
                        self.mqtt_received += 1
                        at = body.find(MESSAGE_ID_KEY)
                        if at >= 0:
                            start = at + len(MESSAGE_ID_KEY)
                            self.mqtt_ids.add(body[start : start + 64].decode())
                        lag = message_lag_ms(body, now)
                        if lag is not None:
                            self.rec.add("mqtt_lag_ms", lag, at=now)
            except aiomqtt.MqttError:
                self.rec.add("mqtt_errors", 0)
                await asyncio.sleep(1)

    # --------------------------------------------------------------- receiver

    async def hook(self, request: Any) -> Any:
        from aiohttp import web

        now = time.time()
        body = orjson.loads(await request.read())
        self.hook_requests += 1
        event = body["event"]
        lag = (now - parse_iso(event["received_at"].encode())) * 1000
        self.rec.add("webhook_ms", lag, at=now)
        kind = event["type"]
        if kind == "command_changed":
            what = f"command:{event['command']['id']}:{event['command']['status']}"
        else:
            what = f"{kind}:{event.get('action')}"
        key = (body["application"]["id"], body["vehicle"]["vin"], what)
        delivery = request.headers.get("webhook-id") or request.headers.get("X-Svc-Delivery", "")
        self.hooks.setdefault(key, set()).add(delivery)
        return web.Response(status=204)

    def _carmaker(self, name: str) -> Callable[[Any], Awaitable[Any]]:
        """The carmaker's API as the template connector calls it: every vehicle is
        eligible, every clearance granted, every command executed."""
        from aiohttp import web

        answers = {
            "eligibility": {"eligible": True, "connected": True},
            "clearance": {"state": "granted"},
            "removal": {"state": "removed"},
            "command": {"state": "executed"},
        }

        async def answer(request: Any) -> Any:
            await request.read()
            self.carmaker_calls[name] = self.carmaker_calls.get(name, 0) + 1
            return web.json_response(answers[name])

        return answer

    async def start_server(self) -> Any:
        from aiohttp import web

        app = web.Application()
        app.router.add_post("/hook/{app}", self.hook)
        carmaker = "/carmaker"
        clearance = carmaker + "/fleets/{fleet}/clearances/{vin}"
        app.router.add_get(carmaker + "/vehicles/{vin}/eligibility", self._carmaker("eligibility"))
        app.router.add_put(clearance, self._carmaker("clearance"))
        app.router.add_delete(clearance, self._carmaker("removal"))
        app.router.add_post(carmaker + "/vehicles/{vin}/commands", self._carmaker("command"))
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        return runner

    # --------------------------------------------------------------- control

    async def handle(self, verb: str, argument: Any) -> Any:
        if verb == "port":
            return self.port
        if verb == "follow":
            self.follow(argument)
            return True
        if verb == "summary":
            start, end = argument
            return {"series": self.rec.summary(start, end)}
        if verb == "timeline":
            start, width = argument
            return self.rec.timeline(start, width)
        if verb == "cpu":
            return cpu_seconds()
        if verb == "counts":
            return self.counts()
        if verb == "stop":
            self.stopping = True
            return self.counts()
        raise ValueError(f"unknown request {verb!r}")

    def counts(self) -> dict[str, Any]:
        return {
            "sse": {
                key: {
                    "received": len(ids),
                    "distinct": len(set(ids)),
                    "first": ids[0] if ids else None,
                    "last": ids[-1] if ids else None,
                    "gaps": self.sse_gaps.get(key, 0),
                    "connects": self.sse_connects.get(key, 0),
                }
                for key, ids in self.sse_ids.items()
            },
            "mqtt": {"received": self.mqtt_received, "distinct": len(self.mqtt_ids)},
            "hooks": [[*key, len(ids)] for key, ids in self.hooks.items()],
            "hook_requests": self.hook_requests,
            "carmaker_calls": dict(self.carmaker_calls),
        }

    def follow(self, config: FollowersConfig) -> None:
        import aiohttp

        self.config = config
        connector = aiohttp.TCPConnector(ssl=tls_context(config.cafile), limit=16)
        self.session = aiohttp.ClientSession(connector=connector)
        self.tasks = [
            asyncio.create_task(self.follow_sse(plan.key)) for plan in APPS if plan.follows == "sse"
        ]
        if config.mqtt:
            self.tasks.append(asyncio.create_task(self.follow_mqtt()))

    async def run(self, pipe: Connection) -> None:
        runner = await self.start_server()
        try:
            await serve_pipe(pipe, self.handle)
        finally:
            self.stopping = True
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)
            if self.session is not None:
                await self.session.close()
            await runner.cleanup()


def followers_main(pipe: Connection, config: None) -> None:
    _uvloop()
    asyncio.run(Followers().run(pipe))
