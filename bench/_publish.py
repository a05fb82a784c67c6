"""`python -m bench publish`: docs/benchmarks.md and its plots, from the latest runs.

Every run through `python -m bench NAME [args]` leaves its output under
var/bench-results/ (`run-*.json`); the pull benchmarks also leave their figures
(`vehicle_data_pull.json`, `pull_live.json`, `pull_live_pg_w2.json`). This writes, from
those alone (nothing is typed in by hand):

- docs/benchmarks.md: the machine, then each benchmark's latest figures, when they were
  measured and the command that reproduces them;
- docs/benchmarks/*.png (matplotlib): throughput and latency percentiles of autoport
  against the floor, and latency under rising connections.
"""

from __future__ import annotations

import json
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.__main__ import BENCHMARKS, RESULTS
from bench.pull_live import TARGET_P99_MS, TARGET_PG_P99_MS, TARGET_SHARE

DOCS = Path("docs/benchmarks.md")
PLOTS = Path("docs/benchmarks")
PERCENTILES = ("p50", "p75", "p90", "p99")
# Pull benchmarks with figures of their own, in the order they are shown.
PULL_FILES = {
    "pull_live.json": "SQLite, one process",
    "pull_live_pg_w2.json": "PostgreSQL, 2 workers",
}


def machine() -> list[str]:
    """What the figures were measured on: CPU, cores, Python, kernel, PostgreSQL."""
    lines = []
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        fields = dict(
            (key.strip(), value.strip())
            for key, _, value in (line.partition(":") for line in lscpu.splitlines())
        )
        lines.append(
            f"CPU: {fields.get('Model name', '?')}, {fields.get('CPU(s)', '?')} cores "
            f"({fields.get('Thread(s) per core', '?')} thread per core), "
            f"{fields.get('Hypervisor vendor', 'no')} hypervisor"
        )
    except (OSError, subprocess.CalledProcessError):
        lines.append("CPU: lscpu not available")
    lines.append(f"Python {platform.python_version()} ({platform.python_implementation()})")
    lines.append(f"Linux {platform.release()}")
    try:
        version = subprocess.run(
            ["psql", "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
        lines.append(version)
    except (OSError, subprocess.CalledProcessError):
        pass
    return lines


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def _runs() -> dict[str, dict[str, Any]]:
    """The latest recorded run of each benchmark: a full run before a smoke run."""
    latest: dict[str, dict[str, Any]] = {}
    for path in sorted(RESULTS.glob("run-*.json")):
        record = json.loads(path.read_text())
        name = record["benchmark"]
        known = latest.get(name)
        better = known is None or (known["quick"], -known["finished_at"]) > (
            record["quick"],
            -record["finished_at"],
        )
        if better:
            latest[name] = record
    return latest


def _load_text(summary: dict[str, Any]) -> str:
    """The machine's 1-minute load average during the run (other work on a shared
    machine takes cores from both sides: the shares stand, absolute figures drop)."""
    load = summary.get("load")
    if not load:
        return "load not recorded"
    return (
        f"load average {load['start']:.1f} at the start, {load['end']:.1f} at the end "
        f"({load['cores']} cores)"
    )


KEPT = "From the previous publication (no run of it under `var/bench-results/` here)."
_RUNS_HEADING = "## Every benchmark's latest run"


def previous_runs(text: str) -> dict[str, list[str]]:
    """The body of each benchmark's section under "Every benchmark's latest run" of a
    published docs/benchmarks.md, by name: what a checkout without that run republishes
    instead of dropping it. Sections saying no run was recorded are left out."""
    _, found, rest = text.partition(_RUNS_HEADING)
    if not found:
        return {}
    sections: dict[str, list[str]] = {}
    name: str | None = None
    for line in rest.splitlines():
        if line.startswith("## "):
            break
        if line.startswith("### "):
            name = line[4:].split(":", 1)[0]
            sections[name] = []
        elif name is not None:
            sections[name].append(line)
    bodies = {key: _strip_blank(lines) for key, lines in sections.items()}
    return {
        key: body
        for key, body in bodies.items()
        if body and not body[0].startswith("No run recorded yet")
    }


def _strip_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _figure_lines(output: str) -> str:
    """A run's output without the runner's own lines and Python's noise."""
    kept = [
        line
        for line in output.splitlines()
        if line.strip() and not line.startswith("== ") and "Warning" not in line
    ]
    return "\n".join(kept[-60:])


# --------------------------------------------------------------------------- plots


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_throughput(pulls: dict[str, dict[str, Any]], path: Path) -> None:
    """req/s of autoport and of the floor, per pull scenario, with the share."""
    plt = _pyplot()
    labels, subject, floor = [], [], []
    for title, summary in pulls.items():
        for target, figures in summary["targets"].items():
            labels.append(f"{target}\n{title}")
            subject.append(figures["subject"]["rps"])
            floor.append(figures["floor"]["rps"])
    fig, ax = plt.subplots(figsize=(8, 4.2))
    xs = range(len(labels))
    width = 0.38
    ax.bar([x - width / 2 for x in xs], floor, width, label="floor", color="#b0b7c3")
    bars = ax.bar([x + width / 2 for x in xs], subject, width, label="autoport", color="#1f6feb")
    ax.scatter(
        [x + width / 2 for x in xs],
        [TARGET_SHARE * base for base in floor],
        marker="_",
        s=900,
        color="#d1242f",
        label=f"{TARGET_SHARE:.0%} of the floor",
        zorder=3,
    )
    for bar, value, base in zip(bars, subject, floor, strict=True):
        ax.annotate(
            f"{value:,.0f}\n{value / base:.0%}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylabel("requests per second")
    ax.set_title("The vehicle data pull: autoport against the floor (64 connections)")
    ax.set_ylim(0, max([*floor, *subject]) * 1.25)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_latency(pulls: dict[str, dict[str, Any]], path: Path) -> None:
    """Latency percentiles of autoport and of the floor, per pull scenario."""
    plt = _pyplot()
    panels = [
        (f"{target} ({title})", figures, summary["workers"])
        for title, summary in pulls.items()
        for target, figures in summary["targets"].items()
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, figures, workers) in zip(axes[0], panels, strict=True):
        limit = TARGET_PG_P99_MS if workers > 1 else TARGET_P99_MS
        ax.axhline(limit, color="#d1242f", linestyle=":", label=f"p99 target {limit:.0f} ms")
        for side, color in (("floor", "#b0b7c3"), ("subject", "#1f6feb")):
            values = [figures[side].get(f"{p}_ms") for p in PERCENTILES]
            points = [(p, v) for p, v in zip(PERCENTILES, values, strict=True) if v is not None]
            ax.plot(
                [p for p, _ in points],
                [v for _, v in points],
                marker="o",
                color=color,
                label="autoport" if side == "subject" else "floor",
            )
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("ms")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Latency percentiles at 64 connections", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(summary: dict[str, Any], title: str, path: Path) -> None:
    """p50 and p99 (and req/s) against the number of connections."""
    plt = _pyplot()
    sweep = summary["sweep"]
    fig, axes = plt.subplots(1, len(sweep), figsize=(5 * len(sweep), 3.8), squeeze=False)
    for ax, (target, sides) in zip(axes[0], sweep.items(), strict=True):
        for side, color in (("floor", "#8b949e"), ("subject", "#1f6feb")):
            runs = sides[side]
            conns = [run["connections"] for run in runs]
            label = "autoport" if side == "subject" else "floor"
            ax.plot(
                conns, [r["p99_ms"] for r in runs], marker="o", color=color, label=f"{label} p99"
            )
            ax.plot(
                conns,
                [r["p50_ms"] for r in runs],
                marker=".",
                linestyle="--",
                color=color,
                label=f"{label} p50",
            )
        ax.set_xscale("log", base=2)
        ax.set_xticks(conns, [str(int(c)) for c in conns])
        ax.set_xlabel("connections")
        ax.set_ylabel("latency (ms)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        rps = ", ".join(
            f"{int(r['connections'])}: {r['rps'] / 1000:.1f}k" for r in sides["subject"]
        )
        ax.set_title(f"{target}\nautoport req/s {rps}", fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(f"Latency under rising connections ({title})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------- document


def _pull_table(summary: dict[str, Any]) -> list[str]:
    rows = [
        "| scenario | side | req/s | p50 | p75 | p90 | p99 | share | target | |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for target, figures in summary["targets"].items():
        for side, label in (("floor", "floor"), ("subject", "autoport serve")):
            f = figures[side]
            cells = [f"{f.get(f'{p}_ms', float('nan')):.2f} ms" for p in PERCENTILES]
            share = f"{figures['share']:.0%}" if side == "subject" else ""
            verdict = ("met" if figures["met"] else "**not met**") if side == "subject" else ""
            aim = figures.get("target", "") if side == "subject" else ""
            rows.append(
                f"| {target} ({f['bytes']:.0f} B) | {label} | {f['rps']:,.0f} | "
                + " | ".join(cells)
                + f" | {share} | {aim} | {verdict} |"
            )
    return rows


def publish() -> None:
    PLOTS.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "# Benchmarks",
        "",
        f"Generated by `python -m bench publish` on {now} from the latest runs kept under",
        "`var/bench-results/` (each benchmark run through `python -m bench NAME` keeps its",
        "output there). Do not edit by hand: run the commands below, then publish.",
        "",
        "## The machine",
        "",
        *[f"- {line}" for line in machine()],
        "",
        "The machine is shared and its load drifts, so the pull benchmarks measure a floor",
        "(a minimal Starlette app doing the same work with the same database driver) in the",
        "same run, alternating rounds, and judge autoport by its share of the floor.",
        "The floor runs under plain uvicorn, which writes a response's head and body as two",
        "sends; `autoport serve` sends them as one (`kit.server.CoalescedWrites`), which is",
        "part of its lead in the live pull. The PostgreSQL floor asks the database twice on",
        "every request (the token, the vehicle), where autoport serves from its caches.",
        "",
    ]
    pulls = {title: s for name, title in PULL_FILES.items() if (s := _load(name)) is not None}
    if pulls:
        out += ["## The pull under live conditions (`bench.pull_live`)", ""]
        out += [
            "The real `autoport serve` with its background work on (sandbox simulator, stream,",
            "webhook and fleet workers) while a provider ingests 1,000 points/s through",
            "`POST /v1/ingest`; wrk loads (a) `push`, a push-fed vehicle with ~100 properties,",
            "and (b) `sandbox`, the demo EV (a brand with a data source behind the freshness",
            "window). Figures are the best of the rounds.",
            "",
        ]
        plot_throughput(pulls, PLOTS / "pull_throughput.png")
        plot_latency(pulls, PLOTS / "pull_latency.png")
        out += [
            "![throughput against the floor](benchmarks/pull_throughput.png)",
            "",
            "![latency percentiles](benchmarks/pull_latency.png)",
            "",
        ]
        for name, title in PULL_FILES.items():
            summary = _load(name)
            if summary is None:
                continue
            ingestion = summary["ingestion"]
            out += [
                f"### {title}",
                "",
                f"`{summary['command']}` — {_when(summary['started_at'])}, "
                f"{summary['seconds']} s per run; {_load_text(summary)}.",
                "",
                *_pull_table(summary),
                "",
                f"Ingestion meanwhile: {ingestion['acknowledged']:,} points acknowledged, "
                f"{ingestion['stored']:,} in the history, **{ingestion['lost']} lost**, "
                f"{ingestion['failed_requests']} failed requests.",
                "",
            ]
            if summary.get("sweep"):
                slug = name.removesuffix(".json")
                plot_sweep(summary, title, PLOTS / f"{slug}_connections.png")
                out += [
                    f"![latency under rising connections](benchmarks/{slug}_connections.png)",
                    "",
                ]
    direct = _load("vehicle_data_pull.json")
    if direct is not None:
        out += [
            "## The pull of an idle app (`bench.vehicle_data_pull`)",
            "",
            f"`{direct['command']}` — {_when(direct['started_at'])}: the app without background",
            f"work, one vehicle of {direct['properties']} properties ({direct['bytes']} bytes), "
            f"{direct['connections']} connections, {direct['seconds']} s.",
            "",
            "| server | req/s | p50 | p99 |",
            "|---|---:|---:|---:|",
        ]
        for label, key in (
            ("floor (Starlette + sqlite3)", "floor"),
            ("autoport", "subject"),
            ("autoport /healthz (a FastAPI route)", "fastapi_route"),
        ):
            f = direct[key]
            out.append(
                f"| {label} | {f['rps']:,.0f} | {f['p50_ms']:.2f} ms | {f['p99_ms']:.2f} ms |"
            )
        us = direct["in_process_us"]
        out += [
            "",
            f"Share of the floor: {direct['share']:.0%}. In process (ASGI calls, no network): "
            f"autoport {us['autoport']:.1f} µs per pull, floor {us['floor']:.1f} µs.",
            "",
        ]
    runs = _runs()
    previous = previous_runs(DOCS.read_text()) if DOCS.exists() else {}
    out += ["## Every benchmark's latest run", ""]
    for name, what in BENCHMARKS.items():
        record = runs.get(name)
        out += [f"### {name}: {what}", ""]
        if record is None and name in previous:
            # Measured elsewhere (results are kept per checkout): republished as it was.
            kept = previous[name]
            if kept[0] != KEPT:
                kept = [KEPT, "", *kept]
            out += [*kept, ""]
            continue
        if record is None:
            out += [f"No run recorded yet: `python -m bench {name}`.", ""]
            continue
        mode = " (smoke mode: a few seconds, not a measurement)" if record["quick"] else ""
        out += [
            f"`{record['command']}` — {_when(record['finished_at'])}, "
            f"exit {record['exit']}, {record['seconds']} s{mode}.",
            "",
            "```",
            _figure_lines(record["output"]),
            "```",
            "",
        ]
    DOCS.write_text("\n".join(out).rstrip() + "\n")
    print(f"wrote {DOCS} and {len(list(PLOTS.glob('*.png')))} plots under {PLOTS}/")
