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
from bench.pull_live import TARGET_P99_MS, TARGET_PG_P99_MS, TARGET_PG_RPS, TARGET_SHARE

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


def kept_sections(text: str, made: list[str]) -> list[str]:
    """The sections of figures (`## ...` before the runs) of a published
    docs/benchmarks.md that this publication has no results for, as they were (their
    plots stay under docs/benchmarks/): results are kept per checkout, and one
    publishing its own figures must not drop another's."""
    head, _, _ = text.partition(_RUNS_HEADING)
    have = {line for line in made if line.startswith("## ")}
    out: list[str] = []
    keeping = False
    for line in head.splitlines():
        if line.startswith("## "):
            keeping = line not in have and line != "## The machine"
            if keeping:
                out += [line, "", KEPT, ""]
                continue
        if keeping and line != KEPT:
            out.append(line)
    return out


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
    """req/s of autoport and of its floors, per pull scenario, with the target: a share of
    the bare floor on SQLite, an absolute rate with several PostgreSQL workers."""
    plt = _pyplot()
    labels, subject, bare, live, aims = [], [], [], [], []
    for title, summary in pulls.items():
        for target, figures in summary["targets"].items():
            labels.append(f"{target}\n{title}")
            subject.append(figures["subject"]["rps"])
            live.append(figures["floor"]["rps"])
            bare.append(figures["bare"]["rps"] if "bare" in figures else 0.0)
            aims.append(
                TARGET_SHARE * figures["bare"]["rps"]
                if "bare" in figures
                else (TARGET_PG_RPS if summary.get("workers", 1) > 1 else float("nan"))
            )
    fig, ax = plt.subplots(figsize=(9, 4.4))
    xs = range(len(labels))
    width = 0.27
    ax.bar([x - width for x in xs], bare, width, label="bare floor", color="#d0d7de")
    ax.bar(list(xs), live, width, label="live floor", color="#8b949e")
    bars = ax.bar([x + width for x in xs], subject, width, label="autoport", color="#1f6feb")
    ax.scatter(
        [x + width for x in xs],
        aims,
        marker="_",
        s=700,
        color="#d1242f",
        label=f"target ({TARGET_SHARE:.0%} of the bare floor; {TARGET_PG_RPS:,} req/s)",
        zorder=3,
    )
    for bar, value, base, other in zip(bars, subject, bare, live, strict=True):
        share = f"{value / base:.0%}" if base else f"{value / other:.0%} of live"
        ax.annotate(
            f"{value:,.0f}\n{share}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylabel("requests per second")
    ax.set_title("The vehicle data pull, logging on: autoport against its floors (64 connections)")
    ax.set_ylim(0, max([*bare, *live, *subject]) * 1.3)
    ax.legend(fontsize=7)
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
        for side, color, label in (
            ("bare", "#d0d7de", "bare floor"),
            ("floor", "#8b949e", "live floor"),
            ("subject", "#1f6feb", "autoport"),
        ):
            if side not in figures:
                continue
            values = [figures[side].get(f"{p}_ms") for p in PERCENTILES]
            points = [(p, v) for p, v in zip(PERCENTILES, values, strict=True) if v is not None]
            ax.plot(
                [p for p, _ in points], [v for _, v in points], marker="o", color=color, label=label
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


PULL_SIDES = (("bare", "bare floor"), ("floor", "live floor"), ("subject", "autoport serve"))


def _settings_line(summary: dict[str, Any]) -> str:
    """What the server measured ran with: make run's settings but those the run changed
    (bench._serve), as its output printed them."""
    changed = summary.get("changed")
    if changed is None:
        return "Settings: not recorded by this run."
    logs = "off" if any(c["why"] == "--logs off" for c in changed) else "on"
    text = f"Settings: `make run`'s (logging {logs})"
    if not changed:
        return text + "."
    return (
        text
        + ", except "
        + "; ".join(f"`{c['name']}={c['value']}` ({c['why']})" for c in changed)
        + "."
    )


def _pull_table(summary: dict[str, Any]) -> list[str]:
    rows = [
        "| scenario | side | req/s | p50 | p75 | p90 | p99 | CPU/request | share | target | |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for target, figures in summary["targets"].items():
        for side, label in PULL_SIDES:
            if side not in figures:
                continue
            f = figures[side]
            cells = [f"{f.get(f'{p}_ms', float('nan')):.2f} ms" for p in PERCENTILES]
            # The server's CPU per answer (bench.pull_live: its processes, background work
            # included); runs before it was measured have none.
            cpu = f.get("cpu_us_per_request")
            cells.append(f"{cpu:,.0f} µs" if cpu is not None else "")
            share = _shares(figures) if side == "subject" else ""
            verdict = ("met" if figures["met"] else "**not met**") if side == "subject" else ""
            aim = figures.get("target", "") if side == "subject" else ""
            rows.append(
                f"| {target} ({f['bytes']:.0f} B) | {label} | {f['rps']:,.0f} | "
                + " | ".join(cells)
                + f" | {share} | {aim} | {verdict} |"
            )
    return rows


def _shares(figures: dict[str, Any]) -> str:
    """The subject's share of the bare floor (the target's) and of the live floor."""
    if "bare" in figures:
        return f"{figures['share']:.0%} (live {figures.get('share_live', 0):.0%})"
    return f"{figures['share']:.0%}"


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
        "What is measured is what `make run` runs: every HTTP benchmark starts the real",
        "`autoport serve` with `make run`'s settings (`bench/_serve.py`): logging at info",
        "with one JSON access line per request written to a file, the background workers",
        "and the demo sandbox on. A setting a benchmark changes is printed at the top of its",
        "output (below), with the reason: the rate limits are raised so that the limiters",
        "run but never refuse a benchmark's one client. `--logs off` measures without the",
        "access line (warnings only) and says so. The server runs on core 0, the load",
        "generator on core 1; a floor runs on core 0 like the server.",
        "",
        "The machine is shared and its load drifts, so the pull benchmarks measure floors",
        "(minimal Starlette apps with the same database driver) in the same run, alternating",
        "rounds, and judge autoport by its share of them: the bare floor (a token lookup and",
        "autoport's answer served as stored: a user's quickest app) and the live floor (the",
        "token's HMAC looked up in autoport's table, the answer assembled from the stored",
        "document). The floors run under plain uvicorn without logs, which writes a response's",
        "head and body as two sends; `autoport serve` sends them as one",
        "(`kit.server.CoalescedWrites`). The PostgreSQL floor asks the database twice on",
        "every request (the token, the vehicle), where autoport serves from its caches.",
        "",
        "Every publication keeps its figures in `docs/benchmarks/runs/<commit>.json`;",
        "`python -m bench compare BASE HEAD [NAME...]` measures two commits back to back and",
        "prints the change of every figure. The figures of this page are retaken with",
        "`python -m bench publish --run` (each benchmark under the machine's bench lock).",
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
                _settings_line(summary),
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
    from bench._history_plots import section as history_section
    from bench._soak_plots import section as fleet_soak_section

    out += fleet_soak_section(PLOTS)
    out += history_section(PLOTS)
    out += kept_sections(DOCS.read_text() if DOCS.exists() else "", out)
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
    published, earlier = keep_runs()
    if published:
        out += _changes(published, earlier)
    DOCS.write_text("\n".join(out).rstrip() + "\n")
    print(f"wrote {DOCS} and {len(list(PLOTS.glob('*.png')))} plots under {PLOTS}/")


RUNS = PLOTS / "runs"


def _records() -> list[dict[str, Any]]:
    """The latest full run of each benchmark command that kept figures."""
    latest: dict[str, dict[str, Any]] = {}
    for path in sorted(RESULTS.glob("run-*.json")):
        record = json.loads(path.read_text())
        if record["quick"] or not record.get("figures") or record["exit"] != 0:
            continue
        known = latest.get(record["command"])
        if known is None or known["finished_at"] < record["finished_at"]:
            latest[record["command"]] = record
    return list(latest.values())


def keep_runs() -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The figures of the latest runs, kept in docs/benchmarks/runs/<commit>.json (one
    file per commit measured, added to when runs of the same commit are published
    again); the file written and the one published before it (by date), if any."""
    records = _records()
    if not records:
        return None, None
    RUNS.mkdir(parents=True, exist_ok=True)
    written: dict[str, Any] | None = None
    for record in sorted(records, key=lambda r: r["finished_at"]):
        commit = record.get("commit", "unknown")
        path = RUNS / f"{commit}.json"
        kept = (
            json.loads(path.read_text())
            if path.exists()
            else {"commit": commit, "machine": machine(), "runs": {}}
        )
        kept["runs"][record["command"]] = {
            "finished_at": _when(record["finished_at"]),
            "load": round(record.get("load", 0.0), 2),
            "seconds": record["seconds"],
            "figures": record["figures"],
        }
        kept["published_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        path.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
        written = kept
    assert written is not None
    others = [
        json.loads(path.read_text())
        for path in RUNS.glob("*.json")
        if path.stem != written["commit"]
    ]
    earlier = max(others, key=lambda kept: kept.get("published_at", ""), default=None)
    return written, earlier


def _changes(kept: dict[str, Any], earlier: dict[str, Any] | None) -> list[str]:
    """Every figure of this publication, and its change from the one before."""
    from bench._figures import change

    since = (
        f"against `{earlier['commit'][:12]}` (published {earlier.get('published_at', '?')})"
        if earlier
        else "(no earlier publication kept)"
    )
    out = [
        "## Every figure, and its change since the previous publication",
        "",
        f"Commit `{kept['commit'][:12]}` {since}; from `docs/benchmarks/runs/`. A change",
        "measured on another day may be the machine's: `python -m bench compare` measures",
        "two commits back to back.",
        "",
    ]
    for command, run in sorted(kept["runs"].items()):
        before = (earlier or {}).get("runs", {}).get(command, {}).get("figures", {})
        out += [
            f"`{command}` ({run['finished_at']}, load {run['load']}):",
            "",
            "| figure | value | before | change |",
            "|---|---:|---:|---:|",
        ]
        for figure, value in sorted(run["figures"].items()):
            old = before.get(figure)
            if old is None:
                out.append(f"| {figure} | {value:,.2f} | | |")
                continue
            relative, verdict = change(figure, old, value)
            out.append(f"| {figure} | {value:,.2f} | {old:,.2f} | {relative:+.1%} {verdict} |")
        out.append("")
    return out
