"""`python -m bench` lists the benchmarks; `python -m bench <name>... [args]` runs those,
`python -m bench all --quick` runs every one in smoke mode (what CI runs).

Each benchmark runs in its own process (`python -m bench.<name>`), as it would alone:
one's servers, event loops and databases never leak into the next. Its output is kept
under var/bench-results/ (one file per benchmark and arguments, the latest run), from
which `python -m bench publish` (or `--publish` after a run) writes docs/benchmarks.md
and its plots (bench/_publish.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path("var/bench-results")

# Every benchmark module, in the order `all` runs them (quickest first).
BENCHMARKS: dict[str, str] = {
    "simulator": "the sandbox vehicle simulator: ticks per second",
    "consent": "consent pages: render and approve",
    "console": "developer console pages with 1,000 apps and 10,000 fleet vehicles (p95)",
    "fleet": "fleet clearance and eligibility checks",
    "webhooks": "outbox -> deliveries -> signed HTTP posts",
    "streaming": "ingest -> stream log -> SSE/MQTT latency",
    "ingest": "POST /v1/ingest and the ingestion service",
    "oauth_tokens": "token endpoint (HTTP load)",
    "vehicle_data_pull": "GET vehicle data (HTTP load)",
    "pull_live": "GET vehicle data from the real `autoport serve`, live (HTTP load)",
    "commands": "vehicle commands on the real `autoport serve`: accepted/s, p99 to executed",
    "retention": "disk use per vehicle-day at 1 Hz; ingestion during a history prune",
    "fuzz": "schemathesis against /openapi.json (>= 20,000 cases; --quick: a few)",
}


def _usage() -> str:
    lines = [
        "usage: python -m bench [all | NAME...] [--quick] [--publish] [other arguments]",
        "       python -m bench publish    # docs/benchmarks.md from the latest runs",
        "",
    ]
    lines += [f"  {name:<18} {what}" for name, what in BENCHMARKS.items()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    # Names first, then the arguments for each benchmark (values too: `--workers 2`).
    first_option = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names, extra = argv[:first_option], argv[first_option:]
    if names == ["publish"]:
        from bench._publish import publish

        publish()
        return 0
    publishing = "--publish" in extra
    extra = [arg for arg in extra if arg != "--publish"]
    if not names or "-h" in extra or "--help" in extra:
        print(_usage())
        return 0
    if names == ["all"]:
        names = list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}\n\n{_usage()}", file=sys.stderr)
        return 2
    failed: list[str] = []
    for name in names:
        print(f"== bench.{name} {' '.join(extra)}", flush=True)
        started = time.monotonic()
        code, output = _run(name, extra)
        elapsed = time.monotonic() - started
        print(f"== bench.{name}: exit {code} in {elapsed:.1f} s", flush=True)
        _record(name, extra, code, elapsed, output)
        if code != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    if publishing:
        from bench._publish import publish

        publish()
    return 1 if failed else 0


def _run(name: str, extra: list[str]) -> tuple[int, str]:
    """Run one benchmark, its output shown as it comes and kept."""
    process = subprocess.Popen(
        [sys.executable, "-m", f"bench.{name}", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    return process.wait(), "".join(lines)


def _record(name: str, extra: list[str], code: int, elapsed: float, output: str) -> None:
    """The latest run of `name` with these arguments, for `python -m bench publish`
    (addresses are shown as URL: they may hold credentials)."""
    shown = ["URL" if "://" in arg else arg for arg in extra]
    key = re.sub(r"[^A-Za-z0-9]+", "-", " ".join([name, *shown])).strip("-")
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {
        "benchmark": name,
        "command": " ".join(["python -m bench", name, *shown]),
        "quick": "--quick" in extra,
        "exit": code,
        "seconds": round(elapsed, 1),
        "finished_at": time.time(),
        "output": output,
    }
    (RESULTS / f"run-{key}.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
