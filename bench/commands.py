"""Benchmark: vehicle commands against the real `autoport serve` (sandbox cars, SQLite).

The subject is the real server process (`python -m autoport serve`, pinned to core 0)
with `make run`'s settings (bench._serve: logging on; the command rate limit raised so
that the limiter runs but never refuses, printed) and its background work on (the
command worker, the simulator, streams, webhooks). The sandbox cars answer with zero
latency. The demo application (which registers every command the simulator obeys) holds
approved fleet clearances of N parked sandbox cars.

Two phases, from clients on core 1:
- accepted: wrk (one thread, 64 connections, a Lua script written to the data directory)
  POSTs one command per (car, capability) slot, each slot once, as fast as the server
  answers; commands/s accepted = 202 answers / the time from the first request to the
  last slot's answer, timed in the script. Then every one must reach `executed` (read
  from the server's SQLite database). A client in Python (httpx) tops out near 150-300
  requests/s here, under the server: wrk is far faster, so the server is measured.
- latency: wrk again, 32 connections, each sending a command with `Prefer: wait=10` and
  the next one when it finished: the time from request to `executed` (p50, p99) and the
  executed rate. (32 httpx clients in one Python process, as before, took ~130 ms a
  round trip against the floor on a loaded machine: their own latency, not the server's.)

Beside each, in the same run and alternating with it, the floor
(`bench._pull_apps.command_floor`, also on core 0): a minimal Starlette app taking the
same POSTs with one sqlite3 insert each, under the same load (the other server paused
meanwhile). The machine is shared: autoport's share of the floor says more than its
absolute figures when the load drifts. Less sensitive still: the CPU time the server
process spent per command (/proc/<pid>/stat), which the load barely moves; its inverse
is what one core would accept (or execute end to end) with nothing else to do.

    python -m bench commands            # 1,000 cars, 8 s of latency measurement
    python -m bench commands --quick    # 20 cars, 2 s: a smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench import _serve
from bench._figures import keep
from bench._serve import Changed
from bench.vehicle_data_pull import _free_port, _wait_ready

TARGET_ACCEPTED_PER_S = 500.0
TARGET_P99_MS = 250.0
RESULTS = Path("var/bench-results/commands.json")
# (capability, command, two alternating argument sets): a slot is a car and a capability.
KINDS: tuple[tuple[str, str, tuple[dict[str, Any], dict[str, Any]]], ...] = (
    ("doors", "lock_unlock_doors", ({"locks_state": "unlocked"}, {"locks_state": "locked"})),
    ("climate", "start_stop_hvac", ({"hvac_state": "active"}, {"hvac_state": "inactive"})),
    ("honk_horn_flash_lights", "honk_flash", ({"flash_times": 1}, {"flash_times": 2})),
)


@dataclass
class Setup:
    client_id: str
    client_secret: str
    vins: list[str]


async def bearer_headers(client: httpx.AsyncClient, base: str, setup: Setup) -> dict[str, str]:
    """The demo application's app token (client_credentials) as request headers."""
    token = await client.post(
        f"{base}/sandbox/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": setup.client_id,
            "client_secret": setup.client_secret,
        },
    )
    token.raise_for_status()
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


async def prepare(data_dir: Path, cars: int) -> Setup:
    from autoport.app import create_app
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.clock import now_us
    from autoport.kit.migrate import upgrade
    from autoport.sandbox import service
    from autoport.sandbox.demo import approve_fleet_clearances, seed_demo
    from autoport.sandbox.service import NewVehicle
    from bench._pull_apps import bench_settings

    settings = bench_settings(data_dir)
    await upgrade(settings.resolved_database_url)
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        db = app.state.autoport.database
        demo = await seed_demo(db, ingest=ingest_vehicle_data, now_us=now_us())
        vins = []
        for number in range(cars):
            vehicle = await service.create_vehicle(
                db,
                ingest=ingest_vehicle_data,
                spec=NewVehicle(vin=f"SBXCMD{number:011d}", running=False, profile="full"),
                now_us=now_us(),
            )
            vins.append(vehicle.vin)
        await approve_fleet_clearances(
            db,
            application_id=demo.application_id,
            client_id=demo.client_id,
            properties=["doors.locks_state"],
            vins=vins,
            now_us=now_us(),
        )
    return Setup(demo.client_id, demo.client_secret or "", vins)


RATE_LIMIT = Changed(
    "AUTOPORT_VEHICLE_COMMAND_RATE_LIMIT",
    "100000000/minute",
    "one application commands every car: the limiter runs on every command but never refuses",
)


def start_server(
    data_dir: Path, changed: tuple[Changed, ...], profile: Path | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    served = _serve.serve(data_dir, changed, profile=profile)
    return served.process, served.port


def start_floor(data_dir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    process = subprocess.Popen(
        [
            *pin,
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "bench._pull_apps:command_floor",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        env={**os.environ, "BENCH_DATA_DIR": str(data_dir), "PYTHONPATH": os.getcwd()},
        stdout=subprocess.DEVNULL,
    )
    _wait_ready(port, process)
    return process, port


def cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    """User + system CPU time of a process so far (Linux; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{process.pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Paused:
    """SIGSTOP a server while the other one is measured (its background work would
    otherwise take the core they share)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def __enter__(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def __exit__(self, *_: object) -> None:
        self.process.send_signal(signal.SIGCONT)


# The accepted phase's load: wrk (C, one thread, 64 connections, pinned to core 1), far
# faster than the server, so the server's rate is what is measured. httpx from one Python
# process tops out near 150-300 requests/s, which the floor then merely equals.
# The script hands out every slot once, in order; after the last one, each connection
# sends GET /healthz (200, cheap, and told apart from the 202s) until the last slot is
# answered, when the thread stops. Its globals (accepted, refused, started, finished) are
# read in done(), in wrk's main Lua state, through thread:get. The time is taken in the
# script (CLOCK_MONOTONIC through LuaJIT's ffi), from the first slot handed out to the
# last slot answered: wrk's own summary.duration is its whole -d, however early the
# thread stops. One thread holds the whole slot list; it pushes the floor to several
# thousand requests/s, many times autoport's rate, so -t1 leaves the server the limit.
# Both scripts' done() reports each thread's own counters (wrk keeps a Lua state per
# thread): setup() keeps the threads for it.
_KEEP_THREADS = r"""local threads = {}

function setup(thread)
  table.insert(threads, thread)
end
"""
WRK_SCRIPT = (
    r"""
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *tp);
]]
-- CLOCK_MONOTONIC (1): os.clock is CPU time, os.time whole seconds.
local function now()
  local t = ffi.new("bench_timespec")
  ffi.C.clock_gettime(1, t)
  return tonumber(t.tv_sec) + tonumber(t.tv_nsec) / 1e9
end

local SLOTS = {
%(slots)s
}
local HEADERS = {
%(headers)s
}
local prepared = {}
local idle
next_slot = 1
accepted = 0
refused = 0
refusals = ""
started = 0
finished = 0

function init(args)
  for i, slot in ipairs(SLOTS) do
    prepared[i] = wrk.format("POST", slot[1], HEADERS, slot[2])
  end
  idle = wrk.format("GET", "/healthz")
end

local verified = false

function request()
  -- wrk calls request() once before any connection, to count the requests it returns
  -- (script_verify_request, for pipelining): that call gets the idle request, not a slot.
  if not verified then
    verified = true
    return idle
  end
  local index = next_slot
  if index > #prepared then
    return idle
  end
  if index == 1 then
    started = now()
  end
  next_slot = index + 1
  return prepared[index]
end

function response(status, headers, body)
  if status == 200 then
    return
  end
  if status == 202 then
    accepted = accepted + 1
  else
    refused = refused + 1
    refusals = refusals .. status .. " "
  end
  if finished == 0 and accepted + refused >= #prepared then
    finished = now()
    io.write("slots answered\n")
    io.stdout:flush()
    wrk.thread:stop()
  end
end

"""
    + _KEEP_THREADS
    + r"""
function done(summary, latency, requests)
  local e = summary.errors
  for _, t in ipairs(threads) do
    local stop = t:get("finished")
    io.write(string.format(
      "bench accepted=%%d refused=%%d seconds=%%.6f socket_errors=%%d refusals=%%s\n",
      t:get("accepted"), t:get("refused"),
      stop > 0 and stop - t:get("started") or summary.duration / 1e6,
      e.connect + e.read + e.write + e.timeout, t:get("refusals")
    ))
  end
end
"""
)

CONNECTIONS = 64


def _lua_string(text: str) -> str:
    """A Lua long string: no escapes to get wrong (the texts here hold no ']==]')."""
    assert "]==]" not in text
    return f"[==[{text}]==]"


def _lua_headers(headers: dict[str, str]) -> str:
    # "[ [==[" with spaces: "[[" would open a long string.
    return ",\n".join(f"  [ {_lua_string(k)} ] = {_lua_string(v)}" for k, v in headers.items())


def wrk_script(
    data_dir: Path, name: str, slots: list[tuple[str, str]], headers: dict[str, str]
) -> Path:
    """Write the accepted phase's wrk script: (path, JSON body) per slot, the headers."""
    path = data_dir / f"{name}.lua"
    path.write_text(
        WRK_SCRIPT
        % {
            "slots": ",\n".join(
                f"  {{{_lua_string(url)}, {_lua_string(body)}}}" for url, body in slots
            ),
            "headers": _lua_headers(headers),
        }
    )
    return path


def slot_requests(prefix: str, vins: list[str], round_: int) -> list[tuple[str, str]]:
    """Every car x capability: the POST path and this round's JSON body."""
    return [
        (
            f"{prefix}/{vin}",
            json.dumps(
                {"capability": capability, "command": command, "arguments": arguments[round_ % 2]}
            ),
        )
        for vin in vins
        for capability, command, arguments in KINDS
    ]


def run_wrk(port: int, script: Path, slots: int, server: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Load the server with the script until every slot is answered; the server's CPU
    time when the script reports the last answer (wrk itself sleeps its whole -d before it
    prints its summary, so it is interrupted then: SIGINT ends its sleep, as ^C does)."""
    cap = 30 + slots // 50  # 50 commands/s at the least, then the run gives up
    pin = ["taskset", "-c", "1"] if shutil.which("taskset") else []
    process = subprocess.Popen(
        [
            *pin,
            "wrk",
            "-t1",
            f"-c{CONNECTIONS}",
            "--timeout",
            "30s",
            f"-d{cap}s",
            "-s",
            str(script),
            f"http://127.0.0.1:{port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    cpu_at_last_answer = None
    lines = []
    while line := process.stdout.readline():
        lines.append(line)
        if line.startswith("slots answered"):
            cpu_at_last_answer = cpu_seconds(server)
            process.send_signal(signal.SIGINT)
            break
    rest, errors = process.communicate(timeout=60)
    output = "".join(lines) + rest
    if cpu_at_last_answer is None:
        cpu_at_last_answer = cpu_seconds(server)
    found = re.search(
        r"bench accepted=(\d+) refused=(\d+) seconds=([\d.]+) socket_errors=(\d+) "
        r"refusals=(.*)",
        output,
    )
    if found is None:
        raise RuntimeError(f"wrk printed no figures: {output[-2000:]} {errors[-2000:]}")
    refused: dict[int, int] = {}
    for status in found.group(5).split():
        refused[int(status)] = refused.get(int(status), 0) + 1
    accepted, seconds = int(found.group(1)), float(found.group(3))
    return {
        "commands": slots,
        "accepted": accepted,
        "refused": refused,
        # Sent but never answered (a connection lost mid-request): wrk counts its errors.
        "unanswered": slots - accepted - int(found.group(2)),
        "socket_errors": int(found.group(4)),
        "seconds": round(seconds, 3),
        "accepted_per_s": round(accepted / seconds, 1) if seconds else 0.0,
        "cpu_at_last_answer": cpu_at_last_answer,
    }


def command_statuses(data_dir: Path, since_us: int) -> dict[str, int]:
    """How many of the bench cars' commands created since `since_us` are in each status:
    the server's database, read-only (WAL: readers never block its writer)."""
    database = sqlite3.connect(f"file:{data_dir / 'autoport.db'}?mode=ro", uri=True)
    try:
        rows = database.execute(
            "SELECT status, COUNT(*) FROM vehicle_commands"
            " WHERE vin LIKE 'SBXCMD%' AND created_at >= ? GROUP BY status",
            (since_us,),
        ).fetchall()
    finally:
        database.close()
    return {status: count for status, count in rows}


def floor_accepted(
    data_dir: Path, port: int, vins: list[str], round_: int, server: subprocess.Popen[bytes]
) -> dict[str, Any]:
    """The accepted phase against the floor: the same POSTs, the same wrk script."""
    slots = slot_requests("/floor", vins, round_)
    script = wrk_script(data_dir, f"floor-{round_}", slots, {"Content-Type": "application/json"})
    run = run_wrk(port, script, len(slots), server)
    del run["cpu_at_last_answer"]
    return run


async def accepted_phase(
    data_dir: Path,
    port: int,
    headers: dict[str, str],
    vins: list[str],
    round_: int,
    server: subprocess.Popen[bytes],
) -> dict[str, Any]:
    slots = slot_requests("/sandbox/v1/vehicle-commands/autoapi-13", vins, round_)
    script = wrk_script(
        data_dir, f"autoport-{round_}", slots, {**headers, "Content-Type": "application/json"}
    )
    since_us = time.time_ns() // 1000 - 1_000_000  # the server's clock: the same wall clock
    run = await asyncio.to_thread(run_wrk, port, script, len(slots), server)
    # Every accepted command finishes, executed (read from the server's database).
    deadline = time.monotonic() + 60
    statuses = command_statuses(data_dir, since_us)
    while statuses.get("pending", 0) + statuses.get("sent", 0) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        statuses = command_statuses(data_dir, since_us)
    unfinished = statuses.pop("pending", 0) + statuses.pop("sent", 0)
    return {
        **run,
        "stored": sum(statuses.values()) + unfinished,
        "finished": statuses,
        "unfinished": unfinished,
    }


# The latency phase's load: wrk again, 32 connections, each sending a command with
# `Prefer: wait=10` and the next one when it is answered (finished): wrk's latency is then
# request -> executed. Slots go round in order (a slot comes back after all the others,
# long after its command finished), with the other arguments each time round.
LATENCY_SCRIPT = (
    r"""
local SLOTS = {
%(slots)s
}
local HEADERS = {
%(headers)s
}
local prepared = {}
local sent = 0
finished = 0
others = ""

function init(args)
  for i, slot in ipairs(SLOTS) do
    prepared[i] = {
      wrk.format("POST", slot[1], HEADERS, slot[2]),
      wrk.format("POST", slot[1], HEADERS, slot[3]),
    }
  end
end

function request()
  local slot = sent %% #prepared + 1
  local turn = math.floor(sent / #prepared) %% 2 + 1
  sent = sent + 1
  return prepared[slot][turn]
end

function response(status, headers, body)
  if string.find(body, %(success)s) then
    finished = finished + 1
  else
    others = others .. status .. " "
  end
end

"""
    + _KEEP_THREADS
    + r"""
function done(summary, latency, requests)
  local e = summary.errors
  for _, t in ipairs(threads) do
    io.write(string.format(
      "bench finished=%%d seconds=%%.6f p50_us=%%d p99_us=%%d max_us=%%d socket_errors=%%d"
        .. " others=%%s\n",
      t:get("finished"), summary.duration / 1e6, latency:percentile(50),
      latency:percentile(99), latency.max, e.connect + e.read + e.write + e.timeout,
      t:get("others")
    ))
  end
end
"""
)
LATENCY_CONNECTIONS = 32


def latency_run(
    data_dir: Path,
    name: str,
    port: int,
    prefix: str,
    vins: list[str],
    headers: dict[str, str],
    success: str,
    seconds: float,
) -> dict[str, Any]:
    """`seconds` of the latency phase: the answers whose body holds `success` (a Lua
    pattern) count as finished; wrk's latency percentiles cover every answer."""
    slots = [
        (url, body, other)
        for (url, body), (_, other) in zip(
            slot_requests(prefix, vins, 0), slot_requests(prefix, vins, 1), strict=True
        )
    ]
    script = data_dir / f"{name}.lua"
    script.write_text(
        LATENCY_SCRIPT
        % {
            "slots": ",\n".join(
                "  {" + ", ".join(_lua_string(text) for text in slot) + "}" for slot in slots
            ),
            "headers": _lua_headers(headers),
            "success": _lua_string(success),
        }
    )
    pin = ["taskset", "-c", "1"] if shutil.which("taskset") else []
    done = subprocess.run(
        [
            *pin,
            "wrk",
            "-t1",
            f"-c{LATENCY_CONNECTIONS}",
            "--timeout",
            "30s",
            f"-d{max(1, round(seconds))}s",
            "-s",
            str(script),
            f"http://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    found = re.search(
        r"bench finished=(\d+) seconds=([\d.]+) p50_us=(\d+) p99_us=(\d+) max_us=(\d+) "
        r"socket_errors=(\d+) others=(.*)",
        done.stdout,
    )
    if found is None:
        raise RuntimeError(f"wrk printed no figures: {done.stdout[-2000:]} {done.stderr[-2000:]}")
    others: dict[str, int] = {}
    for status in found.group(7).split():
        others[status] = others.get(status, 0) + 1
    finished, elapsed = int(found.group(1)), float(found.group(2))
    return {
        "finished": finished,
        "others": others,
        "socket_errors": int(found.group(6)),
        "seconds": elapsed,
        "finished_per_s": round(finished / elapsed, 1),
        "p50_ms": round(int(found.group(3)) / 1000, 1),
        "p99_ms": round(int(found.group(4)) / 1000, 1),
        "max_ms": round(int(found.group(5)) / 1000, 1),
    }


async def measure(
    server: subprocess.Popen[bytes],
    port: int,
    floor: subprocess.Popen[bytes],
    floor_port: int,
    setup: Setup,
    data_dir: Path,
    *,
    seconds: float,
    rounds: int,
) -> dict[str, Any]:
    base = f"http://127.0.0.1:{port}"
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        headers = await bearer_headers(client, base, setup)
        accepted, floors = [], []
        for number in range(rounds):
            # Alternating rounds: the floor (autoport paused), then autoport (floor paused).
            with Paused(server):
                floors.append(
                    await asyncio.to_thread(
                        floor_accepted, data_dir, floor_port, setup.vins, number, floor
                    )
                )
            with Paused(floor):
                cpu = cpu_seconds(server)
                run = await accepted_phase(data_dir, port, headers, setup.vins, number, server)
                # The POST window only (the worker executes meanwhile, on the same core).
                used = run.pop("cpu_at_last_answer") - cpu
                run["server_cpu_ms_per_accepted"] = round(used * 1000 / max(run["accepted"], 1), 3)
                # The share of a core the server had: near 1, it is CPU-bound.
                run["server_busy"] = round(used / max(run["seconds"], 0.001), 2)
                accepted.append(run)
        json_headers = {"Content-Type": "application/json"}
        with Paused(server):
            run = await asyncio.to_thread(
                latency_run, data_dir, "floor-latency", floor_port, "/floor", setup.vins,
                json_headers, '"status":%s*"pending"', seconds,
            )  # fmt: skip
            floor_wait = {
                "answered_per_s": run["finished_per_s"],
                "p50_ms": run["p50_ms"],
                "p99_ms": run["p99_ms"],
            }
        with Paused(floor):
            cpu = cpu_seconds(server)
            run = await asyncio.to_thread(
                latency_run, data_dir, "autoport-latency", port,
                "/sandbox/v1/vehicle-commands/autoapi-13", setup.vins,
                {**headers, **json_headers, "Prefer": "wait=10"}, '"status":%s*"executed"',
                seconds,
            )  # fmt: skip
            latency = {
                "executed": run["finished"],
                # Not executed within the wait: the answer's status code, or a lost socket.
                "outcomes": {"executed": run["finished"], **run["others"]}
                | ({"socket_errors": run["socket_errors"]} if run["socket_errors"] else {}),
                "executed_per_s": run["finished_per_s"],
                "p50_ms": run["p50_ms"],
                "p99_ms": run["p99_ms"],
                "max_ms": run["max_ms"],
            }
            # Everything a command costs: accept, claim, the car, the answer, the outbox
            # consumers (streams, webhooks) and the waited-for answer with its state.
            used = cpu_seconds(server) - cpu
            latency["server_cpu_ms_per_executed"] = round(
                used * 1000 / max(latency["executed"], 1), 3
            )
            # Under 1: the server waits part of the time (a command's hops, not its CPU).
            latency["server_busy"] = round(used / run["seconds"], 2)
    return {
        "accepted": accepted,
        "latency": latency,
        "floor": {"accepted": floors, "latency": floor_wait},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test: few cars, 2 s")
    parser.add_argument("--cars", type=int, default=None)
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="record the server with py-spy into this file (folded stacks)",
    )
    _serve.add_arguments(parser)
    args = parser.parse_args()
    changed = _serve.changes(args, RATE_LIMIT)
    _serve.announce(changed)
    # 1,000 cars: 3,000 slots a round, 3 s at 1,000 commands/s (prepared in ~4 s).
    cars = args.cars or (20 if args.quick else 1000)
    seconds = 2.0 if args.quick else 8.0
    rounds = 1 if args.quick else 3
    if shutil.which("wrk") is None:
        sys.exit("needs wrk (apt-get install -y wrk)")
    data_dir = Path(tempfile.mkdtemp(prefix="bench-commands-"))
    try:
        prepared = time.perf_counter()
        setup = asyncio.run(prepare(data_dir, cars))
        prepared = time.perf_counter() - prepared
        process, port = start_server(data_dir, changed, args.profile)
        floor, floor_port = start_floor(data_dir)
        try:
            if shutil.which("taskset"):
                os.sched_setaffinity(0, {1})
            load = os.getloadavg()[0]
            figures = asyncio.run(
                measure(
                    process,
                    port,
                    floor,
                    floor_port,
                    setup,
                    data_dir,
                    seconds=seconds,
                    rounds=rounds,
                )
            )
        finally:
            for server in (process, floor):
                server.send_signal(signal.SIGCONT)
                # py-spy writes its profile on SIGINT (and ends its child, the server).
                server.send_signal(
                    signal.SIGINT if args.profile and server is process else signal.SIGTERM
                )
                server.wait(timeout=30)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    best = max(figures["accepted"], key=lambda r: r["accepted_per_s"])
    latency = figures["latency"]
    floor = figures["floor"]
    shares = [
        run["accepted_per_s"] / base["accepted_per_s"]
        for run, base in zip(figures["accepted"], floor["accepted"], strict=True)
    ]
    figures["accepted_share_of_floor"] = [round(share, 3) for share in shares]
    print(
        f"cars: {cars} sandbox cars ({cars * len(KINDS)} commands a round), zero latency, "
        f"SQLite, real `autoport serve` (prepared in {prepared:.0f} s); accepted phase: wrk, "
        f"1 thread, {CONNECTIONS} connections, on core 1"
    )
    print(
        f"machine load average: {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
        f"on {os.cpu_count()} cores"
    )
    for number, (run, base, share) in enumerate(
        zip(figures["accepted"], floor["accepted"], shares, strict=True), 1
    ):
        print(
            f"accepted round {number}: {run['accepted']} of {run['commands']} in "
            f"{run['seconds']} s = {run['accepted_per_s']} commands/s ({share:.0%} of the "
            f"floor's {base['accepted_per_s']}/s); server CPU "
            f"{run['server_cpu_ms_per_accepted']} ms per accepted command, busy "
            f"{run['server_busy']:.0%} of a core; finished "
            f"{run['finished']}, unfinished {run['unfinished']}, refused {run['refused']}, "
            f"unanswered {run['unanswered']}"
        )
    print(
        f"accepted: {best['accepted_per_s']} commands/s (best round; target >= "
        f"{TARGET_ACCEPTED_PER_S:g}); share of the floor: median "
        f"{sorted(shares)[len(shares) // 2]:.0%}"
    )
    cpu_ms = latency["server_cpu_ms_per_executed"]
    print(
        f"request -> executed (Prefer: wait, wrk, 32 connections): p50 {latency['p50_ms']} ms, "
        f"p99 {latency['p99_ms']} ms (target < {TARGET_P99_MS:g} ms), max "
        f"{latency['max_ms']} ms, {latency['executed_per_s']} executed/s, outcomes "
        f"{latency['outcomes']}; server CPU {cpu_ms} ms per executed command (one core: "
        f"{1000 / max(cpu_ms, 0.001):.0f} commands/s end to end), busy "
        f"{latency['server_busy']:.0%} of a core"
    )
    print(
        f"floor, wrk, 32 connections one POST after the other: "
        f"p50 {floor['latency']['p50_ms']} ms, "
        f"p99 {floor['latency']['p99_ms']} ms, {floor['latency']['answered_per_s']}/s"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"cars": cars, **figures}, indent=2))
    keep(
        {
            "accepted_per_s": best["accepted_per_s"],
            "accepted_share_of_floor": sorted(shares)[len(shares) // 2],
            "executed_p50_ms": latency["p50_ms"],
            "executed_p99_ms": latency["p99_ms"],
            "executed_per_s": latency["executed_per_s"],
            "server_cpu_per_executed_ms": cpu_ms,
        }
    )
    ok = all(
        r["unfinished"] == 0 and r["unanswered"] == 0 and set(r["finished"]) <= {"executed"}
        for r in figures["accepted"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
