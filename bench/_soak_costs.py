"""Cost per operation for `bench.fleet_soak --costs`, and the py-spy profiles of
`--profile`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def summarize_profiles(directory: Path, say: Callable[[str], None]) -> dict[str, Any]:
    """py-spy's raw output (folded stacks, one line per stack and its sample count) per
    profiled command, its processes together (the API's uvicorn workers are alike): the
    functions holding the most samples by themselves (self) and with what they call
    (total)."""
    out: dict[str, Any] = {}
    for path in sorted(directory.glob("*.txt")):
        own: dict[str, int] = {}
        total: dict[str, int] = {}
        samples = 0
        processes: set[str] = set()
        for line in path.read_text(errors="replace").splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            frames = stack.split(";")
            if frames[0].startswith("process "):
                processes.add(frames[0].split(":", 1)[0])
                frames = frames[1:]
            if not frames:
                continue
            n = int(count)
            samples += n
            leaf = _name(frames[-1])
            own[leaf] = own.get(leaf, 0) + n
            for name in {_name(f) for f in frames}:
                total[name] = total.get(name, 0) + n
        if samples < 50:
            continue
        by_self, by_total = _top(own, samples), _top(total, samples, n=60)
        out[path.stem] = {
            "samples": samples,
            "processes": len(processes),
            "self": by_self,
            "total": by_total,
        }
        say(f"   profile of {path.stem} ({len(processes)} processes, {samples:,} samples):")
        for name, share in by_self[:15]:
            say(f"     self  {share:6.1%}  {name}")
        autoport = [(n, v) for n, v in by_total if "autoport/" in n][:20]
        for name, share in autoport:
            say(f"     total {share:6.1%}  {name}")
    return out


def _name(frame: str) -> str:
    """`function (file.py:line)` -> `function (file.py)`: lines of one function together."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.split(':', 1)[0].rstrip(')')})" if where else name


def _top(counts: dict[str, int], samples: int, n: int = 25) -> list[tuple[str, float]]:
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:n]
    return [(name, count / samples) for name, count in ranked]


# ------------------------------------------------------------------ cost per operation

# The deployment's own processes (not the load, not other work on the machine).
SERVER_GROUPS = ("api", "worker", "postgres", "postgres shared", "nginx", "mosquitto", "redis")


@dataclass
class Phase:
    name: str
    what: str  # the operation it prices
    push: dict[str, Any]
    # How many operations the phase did: from the feed's or the followers' samples.
    counter: Callable[[dict[str, Any], dict[str, Any]], float]
    # The phase whose CPU is subtracted (the same load without the priced operation).
    base: str | None = "idle"
    webhooks: bool = True


def _count(series: dict[str, Any], name: str) -> float:
    return float(series.get(name, {}).get("count", 0))


def _points(feed: dict[str, Any], _: dict[str, Any]) -> float:
    found = feed.get("ingest_points", {})
    return float(found.get("mean", 0.0) * found.get("count", 0))


def _messages(_: dict[str, Any], followers: dict[str, Any]) -> float:
    return sum(_count(followers, n) for n in followers if n.endswith("_lag_ms"))


def phases(vehicles: int, pulls: float, commands: float, clearances: float) -> list[Phase]:
    none = {"pull": 0.0, "command": 0.0, "clearance": 0.0}
    return [
        Phase(
            "idle",
            "nothing (the baseline)",
            {"vehicles": 0, "deliver": False, "rates": none},
            lambda f, g: 1.0,
            base=None,
        ),
        Phase(
            "ingest",
            "data point ingested (vehicles no application reads)",
            {"vehicles": 0, "dark": vehicles, "rates": none},
            _points,
        ),
        Phase(
            "streams",
            "stream message delivered (SSE and MQTT, beyond the ingestion)",
            {"vehicles": vehicles, "rates": none},
            _messages,
            base="ingest",
        ),
        Phase(
            "pulls",
            "pull",
            {"vehicles": vehicles, "deliver": False, "rates": {**none, "pull": pulls}},
            lambda f, g: _count(f, "pull_ms"),
        ),
        Phase(
            "commands",
            "command (accepted, sent to the carmaker, executed, its webhooks and messages)",
            {"vehicles": vehicles, "deliver": False, "rates": {**none, "command": commands}},
            lambda f, g: _count(f, "command_ms"),
        ),
        Phase(
            "clearances",
            "fleet clearance (requested, approved by the carmaker, two webhooks)",
            {"vehicles": vehicles, "deliver": False, "rates": {**none, "clearance": clearances}},
            lambda f, g: _count(f, "clearance_ms"),
        ),
        Phase(
            "clearances without webhooks",
            "fleet clearance with the fleet manager's webhook off (subtracted for the next line)",
            {"vehicles": vehicles, "deliver": False, "rates": {**none, "clearance": clearances}},
            lambda f, g: _count(f, "clearance_ms"),
            webhooks=False,
        ),
    ]


def price(
    phase: Phase,
    seconds: float,
    cpu: dict[str, dict[str, float]],
    pg: dict[str, float],
    ops: float,
    base: dict[str, Any] | None,
) -> dict[str, Any]:
    """CPU microseconds (by process group) and PostgreSQL rows and WAL bytes per operation
    of `phase`, over what its base phase used per second."""
    per_group = {g: cpu.get(g, {}).get("cores", 0.0) for g in SERVER_GROUPS}
    rows = pg.get("inserted_s", 0.0) + pg.get("updated_s", 0.0) + pg.get("deleted_s", 0.0)
    figures: dict[str, Any] = {
        "phase": phase.name,
        "what": phase.what,
        "seconds": seconds,
        "ops": ops,
        "ops_per_s": ops / seconds if seconds else 0.0,
        "cores": per_group,
        "rows_s": rows,
        "wal_bytes_s": pg.get("wal_mb_s", 0.0) * 2**20,
        "commits_s": pg.get("commits_s", 0.0),
    }
    if base is None or not ops:
        return figures
    scale = seconds / ops * 1e6
    figures["us_per_op"] = {
        g: (per_group[g] - base["cores"].get(g, 0.0)) * scale for g in SERVER_GROUPS
    }
    figures["us_per_op_total"] = sum(figures["us_per_op"].values())
    figures["rows_per_op"] = (rows - base["rows_s"]) * seconds / ops
    figures["wal_bytes_per_op"] = (figures["wal_bytes_s"] - base["wal_bytes_s"]) * seconds / ops
    figures["commits_per_op"] = (figures["commits_s"] - base["commits_s"]) * seconds / ops
    return figures


# ------------------------------------------------------------------ the capacity model

# Where the model puts each process group's CPU (docs/scaling.md).
MODEL_GROUPS = {
    "API (serve)": ("api", "nginx"),
    "worker": ("worker",),
    "PostgreSQL": ("postgres", "postgres shared"),
    "broker and Redis": ("mosquitto", "redis"),
}
HEADROOM = 1.3  # 30 % headroom over the mean: bursts, retention, sealing


def per_vehicle(costs: list[dict[str, Any]], vehicles: int) -> dict[str, Any]:
    """What one vehicle of the soak's mix costs a second, from the cost phases of a
    `--costs` run (`vehicles` cleared): its operations' rates times their measured CPU
    (by process group), PostgreSQL rows, WAL bytes and commits. Commands and clearances
    carry their own webhooks; stream messages are counted per vehicle as the streams
    phase delivered them (every application that reads the vehicle)."""
    from bench import _soak_load as load

    by = {c["phase"]: c for c in costs if "us_per_op_total" in c}
    mix = load.rates(100)
    streams = by.get("streams", {})
    rates = {
        "ingest": mix["points"] / 100,
        "streams": streams.get("ops_per_s", 0.0) / vehicles if vehicles else 0.0,
        "pulls": load.PULLS_PER_VEHICLE_S,
        "commands": load.COMMANDS_PER_VEHICLE_S,
        "clearances": load.CLEARANCES_PER_VEHICLE_S,
    }
    cpu_us = dict.fromkeys(SERVER_GROUPS, 0.0)
    pg = {"rows": 0.0, "wal_bytes": 0.0, "commits": 0.0}
    for phase, rate in rates.items():
        figures = by.get(phase)
        if figures is None:
            continue
        for group, us in figures["us_per_op"].items():
            # A negative difference is noise of the baseline, not a saving.
            cpu_us[group] += rate * max(us, 0.0)
        pg["rows"] += rate * max(figures.get("rows_per_op", 0.0), 0.0)
        pg["wal_bytes"] += rate * max(figures.get("wal_bytes_per_op", 0.0), 0.0)
        pg["commits"] += rate * max(figures.get("commits_per_op", 0.0), 0.0)
    webhooks = sum(
        rates[p] * by[p].get("webhooks", 0.0) / by[p]["ops"]
        for p in ("commands", "clearances")
        if p in by and by[p]["ops"]
    )
    return {
        "rates": {**rates, "deliveries": mix["deliveries"] / 100, "webhooks": webhooks},
        "cpu_us": cpu_us,
        "pg": pg,
    }


def model(vehicle: dict[str, Any], fleet: int, bytes_per_point: float | None) -> dict[str, Any]:
    """A fleet's needs from one vehicle's costs: cores per group with HEADROOM, and
    PostgreSQL's rows, WAL and commits a second; disk a day at `bytes_per_point`."""
    cores = {
        name: fleet * sum(vehicle["cpu_us"].get(g, 0.0) for g in groups) / 1e6 * HEADROOM
        for name, groups in MODEL_GROUPS.items()
    }
    points_day = fleet * vehicle["rates"]["ingest"] * 86_400
    return {
        "fleet": fleet,
        "cores": cores,
        "cores_total": sum(cores.values()),
        "points_s": fleet * vehicle["rates"]["ingest"],
        "deliveries_s": fleet * vehicle["rates"]["deliveries"],
        "messages_s": fleet * vehicle["rates"]["streams"],
        "rows_s": fleet * vehicle["pg"]["rows"],
        "wal_mb_s": fleet * vehicle["pg"]["wal_bytes"] / 2**20,
        "commits_s": fleet * vehicle["pg"]["commits"],
        "points_day": points_day,
        "disk_gb_day": points_day * bytes_per_point / 1e9 if bytes_per_point else None,
    }
