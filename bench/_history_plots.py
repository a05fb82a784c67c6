"""The history storage's part of docs/benchmarks.md (`python -m bench publish`): the plot
of bytes per point against points stored and the table of every figure, from the last
full run of `python -m bench history` (var/bench-results/history.json)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path("var/bench-results/history.json")
PLOT = "history_bytes_per_point.png"
COLORS = ("#1f6feb", "#8250df")
PART_NAMES = {
    "bytes": "bytes at rest",
    "ingest": "ingestion over HTTP",
    "page": "history pages",
    "retention": "retention",
    "move": "moving an old table",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot(summary: dict[str, Any], path: Path) -> None:
    """Bytes per point at rest against points stored, one line per backend."""
    from bench.history import TARGET_BYTES_PER_POINT

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    stores = summary["bytes"]["stores"]
    for (name, found), color in zip(stores.items(), COLORS, strict=False):
        curve = found["curve"]
        ax.plot(
            [point["points"] for point in curve],
            [point["bytes_per_point"] for point in curve],
            marker="o",
            color=color,
            label=name,
        )
    ax.axhline(TARGET_BYTES_PER_POINT, color="#d1242f", linestyle=":", label="target (at most)")
    ax.set_xscale("log")
    ax.set_xlabel("points stored")
    ax.set_ylabel("bytes per point at rest")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(
        "The history at rest: tables, indexes, TOAST, page overhead (bench.history)",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _row(label: str, values: dict[str, str], backends: list[str]) -> str:
    return f"| {label} | " + " | ".join(values.get(b, "") for b in backends) + " |"


def section(plots: Path) -> list[str]:
    """The section, its plot written under `plots`; nothing without a full run here."""
    if not RESULTS.exists():
        return []
    summary = json.loads(RESULTS.read_text())
    plot(summary, plots / PLOT)
    sizes = summary["bytes"]
    backends = list(sizes["stores"])
    when = datetime.fromtimestamp(summary["started_at"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    run = (
        f"{when}; load average {summary['load_start']:.1f} at the start, "
        f"{summary['load_end']:.1f} at the end ({summary['cores']} cores)"
    )
    if summary.get("parts"):
        run = f"each part's time and load average in the table below ({summary['cores']} cores)"
    out = [
        "## The history's storage (`bench.history`)",
        "",
        f"`{summary['command']}` — {run}. How each "
        "figure is taken: bench/history.py. The mix: the simulator's physics, a driving EV, "
        "a charging hybrid and a parked car every second and ten of each every 30 s "
        f"({sizes['vehicle_days']:.0f} vehicle-days, {sizes['offered_points']:,} points), "
        "sealed as the history worker seals; at rest after the last seal.",
        "",
        f"![bytes per point against points stored](benchmarks/{PLOT})",
    ]
    stores = sizes["stores"]
    parts = summary.get("parts", {})
    if parts:
        # Parts may be run apart (--only): each with its own time and load average.
        out += [
            "",
            "| part of the run | when | load average (start, end) | took |",
            "|---|---|---|---:|",
        ]
        for name, part in parts.items():
            at = datetime.fromtimestamp(part["started_at"], UTC).strftime("%Y-%m-%d %H:%M UTC")
            out.append(
                f"| {PART_NAMES.get(name, name)} | {at} | {part['load_start']:.1f}, "
                f"{part['load_end']:.1f} | {part['seconds'] / 60:.1f} min |"
            )
    out += ["", "| figure | " + " | ".join(backends) + " |", "|---|" + "---:|" * len(backends)]
    out.append(
        _row(
            "bytes per point at rest (target <= 8)",
            {b: f"{stores[b]['bytes_per_point']:.2f}" for b in backends},
            backends,
        )
    )
    out.append(
        _row(
            "points, chunks, series",
            {
                b: f"{stores[b]['points']:,}, {stores[b]['chunks']:,}, {stores[b]['series']:,}"
                for b in backends
            },
            backends,
        )
    )
    out.append(
        _row(
            "hot table allocated (the last hour, reused)",
            {b: f"{stores[b]['hot_bytes'] / 1e6:.1f} MB" for b in backends},
            backends,
        )
    )
    ingest: dict[str, dict[str, str]] = {}
    for label, figures in summary.get("ingest", {}).items():
        tree, _, backend = label.rpartition(" ")
        ingest.setdefault(tree, {})[backend] = (
            f"{figures['points_per_second']:,.0f} points/s ({figures['rps']:,.0f} req/s, "
            f"p99 {figures['p99_ms']:.0f} ms)"
        )
    for tree, values in ingest.items():
        name = "this commit" if tree == "now" else f"the row-per-point storage ({tree})"
        out.append(_row(f"ingestion over HTTP, {name}", values, backends))
    for kind, label in (("newest", "newest first"), ("cursor", "from a cursor")):
        out.append(
            _row(
                f"page of 1,000 points {label}, p50 / p99 (target p99 < 20 ms)",
                {
                    b: f"{p[kind]['p50_ms']:.1f} / {p[kind]['p99_ms']:.1f} ms"
                    for b, p in summary.get("page", {}).items()
                },
                backends,
            )
        )
    points = {b: f"{p['points']:,}" for b, p in summary.get("page", {}).items()}
    out.append(_row("points of that vehicle", points, backends))
    out.append(
        _row(
            "retention of a 1,000-car day (target < 1 s)",
            {
                b: f"{r['seconds'] * 1000:,.0f} ms ({r['points']:,} points)"
                for b, r in summary.get("retention", {}).items()
            },
            backends,
        )
    )
    out.append(
        _row(
            "ingestion during it / just before (req/s, max latency)",
            {
                b: f"{r['during']['rps']:,.0f} / {r['quiet']['rps']:,.0f} "
                f"({r['during'].get('max_ms', 0):.0f} / {r['quiet'].get('max_ms', 0):.0f} ms)"
                for b, r in summary.get("retention", {}).items()
            },
            backends,
        )
    )
    if not summary.get("move"):
        return [*out, ""]
    out.append(
        _row(
            "moving an old table",
            {
                b: f"{m['points_per_second']:,.0f} points/s"
                for b, m in summary.get("move", {}).items()
            },
            backends,
        )
    )
    return [*out, ""]
