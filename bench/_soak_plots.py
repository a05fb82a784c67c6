"""The fleet soak's part of docs/benchmarks.md (`python -m bench publish`): its tables and
plots, from the runs kept under var/bench-results/ (`fleet_soak_<backend>.json` of the
ramps, `..._costs.json`, `..._memory.json`)."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path("var/bench-results")
BACKENDS = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}
# Lines of the plots, by the load processes' series names.
LATENCY = {"ingest_ms": "ingestion", "pull_ms": "pull"}
LAG = {
    "sse_fleet_lag_ms": "SSE (fleet manager)",
    "sse_energy_lag_ms": "SSE (energy service)",
    "mqtt_lag_ms": "MQTT (insurer)",
    "webhook_ms": "webhook delivery",
}
CPU_GROUPS = (
    "api", "worker", "postgres", "postgres shared", "nginx", "mosquitto", "redis",
    "load: feed", "load: followers", "other work",
)  # fmt: skip


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _p99(series: dict[str, Any], name: str) -> float:
    found = series.get(name, {})
    return _num(found["p99"]) if found.get("count") else math.nan


def _num(value: float | None) -> float:
    """A figure as kept (JSON has no NaN: orjson writes null)."""
    return math.nan if value is None else float(value)


def _ms(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"


def plot_ramp(result: dict[str, Any], path: Path) -> None:
    """Over the ramp: the fleet and its points per second; ingestion and pull p99; the
    streams' and webhooks' p99; CPU by process group."""
    from bench._publish import _pyplot

    plt = _pyplot()
    timeline = result["timeline"]
    start = result["ramp_started_at"]
    fig, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    steps = result["steps"]
    # (a) the load
    ax = axes[0]
    for step in steps:
        t0, t1 = step["started"] - start, step["ended"] - start
        ax.hlines(step["vehicles"], t0, t1, color="#1f6feb", linewidth=3)
        ax.annotate(
            f"{step['vehicles']:,}" + ("" if step["held"] else " (broke)"),
            ((t0 + t1) / 2, step["vehicles"]), ha="center", va="bottom", fontsize=8,
        )  # fmt: skip
    ax.set_ylabel("vehicles (measured windows)")
    ax.set_ylim(0, max(s["vehicles"] for s in steps) * 1.25 if steps else 1)
    points = timeline["feed"].get("ingest_points", [])
    twin = ax.twinx()
    twin.plot(
        [b["t"] for b in points],
        [_num(b.get("sum")) / 10 for b in points],
        color="#8b949e", linewidth=0.8, label="points/s acknowledged",
    )  # fmt: skip
    twin.set_ylabel("points/s", color="#8b949e")
    ax.set_title(f"{BACKENDS[result['backend']]}: the ramp ({result['commit'][:40]})", fontsize=9)
    # (b) request latencies
    ax = axes[1]
    for name, label in LATENCY.items():
        buckets = timeline["feed"].get(name, [])
        ax.plot([b["t"] for b in buckets], [_num(b["p99"]) for b in buckets], label=f"{label} p99")
    ax.axhline(result["slo"]["ingest_p99_ms"], color="#d1242f", linestyle=":", label="250 ms")
    ax.axhline(result["slo"]["pull_p99_ms"], color="#bf8700", linestyle=":", label="50 ms")
    ax.set_yscale("log")
    ax.set_ylabel("ms (10 s buckets)")
    ax.legend(fontsize=7, loc="upper left")
    # (c) lag
    ax = axes[2]
    for name, label in LAG.items():
        buckets = timeline["followers"].get(name, [])
        if buckets:
            ax.plot(
                [b["t"] for b in buckets], [_num(b["p99"]) for b in buckets], label=f"{label} p99"
            )
    ax.axhline(result["slo"]["stream_lag_p99_ms"], color="#d1242f", linestyle=":", label="2 s")
    ax.axhline(result["slo"]["webhook_p99_ms"], color="#bf8700", linestyle=":", label="5 s")
    ax.set_yscale("log")
    ax.set_ylabel("lag, ms")
    ax.legend(fontsize=7, loc="upper left")
    # (d) CPU
    ax = axes[3]
    samples = timeline["samples"]
    ts = [s["t"] for s in samples]
    stacks = [[s["cpu"].get(g, 0.0) for s in samples] for g in CPU_GROUPS]
    ax.stackplot(ts, stacks, labels=CPU_GROUPS, alpha=0.85)
    ax.axhline(result["cores"], color="black", linewidth=0.8, linestyle="--")
    ax.set_ylabel("CPU cores")
    ax.set_xlabel("seconds since the ramp started")
    ax.legend(fontsize=6, loc="upper left", ncol=5)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_memory(result: dict[str, Any], path: Path) -> None:
    from bench._publish import _pyplot

    plt = _pyplot()
    samples = result["timeline"]["samples"]
    fig, (rss, fds) = plt.subplots(1, 2, figsize=(10, 3.8))
    groups = [g for g in result["memory"]["groups"]]
    for group in groups:
        ts = [s["t"] / 60 for s in samples if group in s["rss_mb"]]
        rss.plot(ts, [s["rss_mb"][group] for s in samples if group in s["rss_mb"]], label=group)
        fds.plot(ts, [s["fds"][group] for s in samples if group in s["fds"]], label=group)
    rss.set_ylabel("resident memory, MB")
    fds.set_ylabel("open files")
    for ax in (rss, fds):
        ax.set_xlabel("minutes")
        ax.grid(alpha=0.3)
    rss.legend(fontsize=7)
    fig.suptitle(
        f"{result['steps'][0]['vehicles']:,} vehicles held for "
        f"{result['steps'][0]['ended'] - result['steps'][0]['started']:.0f} s "
        f"({BACKENDS[result['backend']]})",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _load_average(step: dict[str, Any]) -> str:
    """The machine's 1-minute load average at the window's start and end: other work on
    a shared machine is part of every figure measured on it."""
    first, last = step.get("load1") or (math.nan, math.nan)
    return f"{first:.1f}–{last:.1f}"


def _steps_table(result: dict[str, Any]) -> list[str]:
    rows = [
        "| vehicles | points/s | ingestion p99 | pull p99 | stream lag p99 | webhook p99 "
        "| failed | machine CPU | load generator | other work | load average | held |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for step in result["steps"]:
        feed, fol = step["feed"]["series"], step["followers"]["series"]
        lag = max(
            (_p99(fol, n) for n in LAG if n != "webhook_ms" and fol.get(n, {}).get("count")),
            default=math.nan,
        )
        load = sum(v["cores"] for k, v in step["cpu"].items() if k.startswith("load"))
        failed = step["checks"]["failed requests"][0]
        rows.append(
            f"| {step['vehicles']:,} | {step['rates']['points']:,.0f} | "
            f"{_ms(_p99(feed, 'ingest_ms'))} | {_ms(_p99(feed, 'pull_ms'))} | {_ms(lag)} | "
            f"{_ms(_p99(fol, 'webhook_ms'))} | {failed:.2%} | "
            f"{step['cpu']['machine']['cores']:.2f} | {load:.2f} | "
            f"{step['cpu'].get('other work', {}).get('cores', 0.0):.2f} | "
            f"{_load_average(step)} | {'yes' if step['held'] else '**no**'} |"
        )
    return rows


def _what(phase: dict[str, Any]) -> str:
    """The operation a cost phase prices, as bench._soak_costs names it now (runs kept
    from before a rename say it their way)."""
    from bench._soak_costs import phases

    names = {p.name: p.what for p in phases(1, 1.0, 1.0, 1.0)}
    return str(names.get(phase["phase"], phase["what"]))


def _wal(per_op: float) -> str:
    """WAL bytes per operation; below zero, the difference of two phases was noise."""
    return f"{per_op:,.0f}" if per_op >= 0 else "– (below its base phase)"


def costs_vehicles(costs: dict[str, Any]) -> int:
    """The vehicles a `--costs` run cleared (runs before it was kept: its --hold, or 3,000)."""
    if costs.get("costs_vehicles"):
        return int(costs["costs_vehicles"])
    found = re.search(r"--hold[ =](\d+)", costs.get("command", ""))
    return int(found.group(1)) if found else 3000


def _model(costs: dict[str, Any]) -> list[str]:
    """The capacity model of docs/scaling.md from the cost phases: one vehicle of the mix,
    then 10,000 / 100,000 / 1,000,000 of them."""
    from bench._soak_costs import HEADROOM, model, per_vehicle

    vehicle = per_vehicle(costs["costs"], costs_vehicles(costs))
    rates, cpu = vehicle["rates"], vehicle["cpu_us"]
    fleets = [model(vehicle, n, None) for n in (10_000, 100_000, 1_000_000)]
    out = [
        "One vehicle of the mix a second: "
        f"{rates['deliveries']:.3f} deliveries, {rates['ingest']:.3f} points, "
        f"{rates['streams']:.3f} stream messages, {rates['pulls']:.3f} pulls, "
        f"{rates['commands']:.4f} commands, {rates['webhooks']:.4f} webhooks: "
        f"**{sum(cpu.values()):,.0f} µs of CPU** ("
        + ", ".join(f"{g} {v:,.0f}" for g, v in cpu.items() if v >= 0.5)
        + f"), {vehicle['pg']['rows']:.2f} PostgreSQL rows, "
        f"{vehicle['pg']['wal_bytes']:,.0f} WAL bytes, {vehicle['pg']['commits']:.3f} commits.",
        "",
        f"The capacity model (docs/scaling.md): those costs times the fleet, {HEADROOM - 1:.0%} "
        "headroom on the cores; a model from the measured costs, not a measurement.",
        "",
        "| | " + " | ".join(f"{f['fleet']:,} vehicles" for f in fleets) + " |",
        "|---|" + "---:|" * len(fleets),
    ]
    for name in fleets[0]["cores"]:
        out.append(f"| {name} cores | " + " | ".join(f"{f['cores'][name]:,.1f}" for f in fleets)
                   + " |")  # fmt: skip
    rows = (
        ("all cores", "cores_total", "{:,.1f}"),
        ("points/s", "points_s", "{:,.0f}"),
        ("stream messages/s", "messages_s", "{:,.0f}"),
        ("PostgreSQL rows written/s", "rows_s", "{:,.0f}"),
        ("PostgreSQL commits/s", "commits_s", "{:,.0f}"),
        ("WAL MB/s", "wal_mb_s", "{:,.1f}"),
    )
    for label, key, form in rows:
        out.append(f"| {label} | " + " | ".join(form.format(f[key]) for f in fleets) + " |")
    return [*out, ""]


def section(plots: Path) -> list[str]:
    """The fleet soak's section of docs/benchmarks.md, its plots written under `plots`."""
    ramps = {b: r for b in BACKENDS if (r := _load(f"fleet_soak_{b}.json")) and r.get("steps")}
    costs = _load("fleet_soak_postgresql_costs.json")
    memory = {b: r for b in BACKENDS if (r := _load(f"fleet_soak_{b}_memory.json"))}
    if not ramps and not costs and not memory:
        return []
    out = [
        "## How many vehicles one machine carries (`bench.fleet_soak`)",
        "",
        "The production topology of docs/operations.md on this machine under a fleet's mix,",
        "ramped in steps until a service level breaks (ingestion p99 < 250 ms, pull p99",
        "< 50 ms, stream lag p99 < 2 s, webhook p99 < 5 s, < 0.1 % failed, the offered load",
        "delivered); at the end every acknowledged point, message and event is counted.",
        "The capacity model built from these figures is [scaling.md](scaling.md). Server,",
        "PostgreSQL, broker and load generator share the machine's cores; the load",
        "generator's share and other work on the machine are columns of their own.",
        "",
    ]
    for backend, result in ramps.items():
        slug = f"fleet_soak_{backend}"
        plot_ramp(result, plots / f"{slug}.png")
        verdict = result.get("verification", {})
        last = result["steps"][-1]
        out += [
            f"### {BACKENDS[backend]}",
            "",
            f"`{result['command']}` — {_when(result['started_at'])}, commit "
            f"`{result['commit']}`; mix: {result['mix']}.",
            "",
            *_steps_table(result),
            "",
            f"Largest fleet held: **{result.get('largest_held', 0):,} vehicles**, "
            f"{result.get('vehicles_per_core', 0):,.0f} per core of the machine"
            + (
                f" ({result['vehicles_per_server_core']:,.0f} per core the deployment's "
                "own processes used)"
                if result.get("vehicles_per_server_core")
                else ""
            )
            + f". What saturated first ({last['vehicles']:,} vehicles): "
            + "; ".join(last["saturation"])
            + ".",
            "",
            f"Nothing lost: {verdict.get('points_acknowledged', 0):,} acknowledged points, "
            f"**{verdict.get('points_lost', 0):,} missing** from the history; "
            f"{verdict.get('webhooks_expected', 0):,} webhook events, "
            f"**{verdict.get('webhooks_missing', 0):,} missing**; stream messages missing: "
            + ", ".join(f"SSE {k} {c['missing']}" for k, c in verdict.get("sse", {}).items())
            + f", MQTT {verdict.get('mqtt', {}).get('missing', 0)}.",
            "",
            f"![the ramp]({plots.name}/{slug}.png)",
            "",
        ]
    if costs and costs.get("costs"):
        out += [
            "### CPU per operation (PostgreSQL)",
            "",
            f"`{costs['command']}` — {_when(costs['started_at'])}, commit `{costs['commit']}`:",
            "each operation alone at a known rate; the deployment's CPU (every process) over",
            "the baseline (or the phase named), divided by the operations done.",
            "",
            "| operation | CPU µs | API | worker | PostgreSQL | other processes | "
            "PostgreSQL rows | WAL bytes | load average (other work, cores) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for phase in costs["costs"]:
            if "us_per_op_total" not in phase:
                continue
            per = phase["us_per_op"]
            pg = per.get("postgres", 0.0) + per.get("postgres shared", 0.0)
            rest = phase["us_per_op_total"] - per.get("api", 0.0) - per.get("worker", 0.0) - pg
            out.append(
                f"| {_what(phase)} | {phase['us_per_op_total']:,.0f} | {per.get('api', 0):,.0f}"
                f" | {per.get('worker', 0):,.0f} | {pg:,.0f} | {rest:,.0f} | "
                + (
                    f"{phase['rows_per_op']:.2f} | {_wal(phase['wal_bytes_per_op'])} |"
                    if "rows_per_op" in phase
                    else "– | – |"
                )
                + (
                    f" {phase['load1']:.1f} ({phase.get('other_work', math.nan):.2f}) |"
                    if "load1" in phase
                    else " – |"
                )
            )
        out.append("")
        out += _model(costs)
    for backend, result in memory.items():
        slug = f"fleet_soak_{backend}_memory"
        if not result.get("memory"):
            continue
        plot_memory(result, plots / f"{slug}.png")
        out += [
            f"### Memory over {result['steps'][0]['ended'] - result['steps'][0]['started']:.0f}"
            f" s ({BACKENDS[backend]})",
            "",
            f"`{result['command']}` — {_when(result['started_at'])}, commit "
            f"`{result['commit']}`, load average {_load_average(result['steps'][0])}. "
            "Least-squares slope after the first fifth of the hold:",
            "",
            "| process group | RSS first -> last | per hour | open files first -> last "
            "| per hour |",
            "|---|---:|---:|---:|---:|",
        ]
        for group, figures in result["memory"]["groups"].items():
            rss, fds = figures.get("rss_mb", {}), figures.get("fds", {})
            out.append(
                f"| {group} | {rss.get('first', 0):,.1f} -> {rss.get('last', 0):,.1f} MB | "
                f"{rss.get('per_hour', 0):+,.1f} MB | {fds.get('first', 0)} -> "
                f"{fds.get('last', 0)} | {fds.get('per_hour', 0):+,.1f} |"
            )
        out += ["", f"![memory]({plots.name}/{slug}.png)", ""]
    return out
