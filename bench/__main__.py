"""`python -m bench` lists the benchmarks; `python -m bench <name>... [args]` runs those,
`python -m bench all --quick` runs every one in smoke mode (what CI runs).

Each benchmark runs in its own process (`python -m bench.<name>`), as it would alone:
one's servers, event loops and databases never leak into the next. Its output and its
figures (bench._figures) are kept under var/bench-results/ (one file per benchmark and
arguments, the latest run, with the commit measured), from which:

- `python -m bench publish` (or `--publish` after a run) writes docs/benchmarks.md, its
  plots, and the figures of every run to docs/benchmarks/runs/<commit>.json
  (bench._publish);
- `python -m bench publish --run` first runs every published benchmark (`PUBLISHED`),
  under the machine's bench lock: the one command that republishes every figure;
- `python -m bench compare BASE HEAD [NAME...] [-- args]` measures two commits back to
  back and prints the change of every figure (bench._compare).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path("var/bench-results")
LOCK = "/work/.bench.lock"

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
    "fleet_soak": "vehicles one machine carries at a fleet's mix, until a service level breaks",
    "history": "history storage: bytes per point, ingestion, 10M-point pages, retention, move",
}

# What `publish --run` measures: every benchmark with the arguments of its published
# figures (PostgreSQL legs use AUTOPORT_TEST_POSTGRES_URL, and are left out without it).
PUBLISHED: list[list[str]] = [
    ["simulator"],
    ["consent"],
    ["console"],
    ["fleet"],
    ["webhooks"],
    ["streaming", "--rate", "2000"],
    ["ingest"],
    ["oauth_tokens"],
    ["vehicle_data_pull"],
    ["pull_live", "--sweep"],
    ["pull_live", "--workers", "2", "--sweep"],
    ["commands"],
    ["retention"],
    ["history"],
    ["fuzz"],
]
NEEDS_POSTGRES = {("pull_live", "--workers", "2", "--sweep")}

# The smoke mode of the benchmarks whose --quick takes minutes (fleet_soak's short ramp):
# what `all --quick` and CI run for them instead.
SMOKE_FLAGS: dict[str, str] = {"fleet_soak": "--smoke"}


def _usage() -> str:
    lines = [
        "usage: python -m bench [all | NAME...] [--quick] [--publish] [other arguments]",
        "       python -m bench publish [--run]    # docs/benchmarks.md (--run: measure first)",
        "       python -m bench compare BASE HEAD [NAME...] [-- arguments]",
        "",
    ]
    lines += [f"  {name:<18} {what}" for name, what in BENCHMARKS.items()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["compare"]:
        from bench._compare import compare

        return compare(argv[1:])
    if argv[:1] == ["publish"]:
        if "--run" in argv[1:]:
            code = publish_run()
            if code:
                return code
        from bench._publish import publish

        publish()
        return 0
    # Names first, then the arguments for each benchmark (values too: `--workers 2`).
    first_option = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names, extra = argv[:first_option], argv[first_option:]
    publishing = "--publish" in extra
    extra = [arg for arg in extra if arg != "--publish"]
    if not names or "-h" in extra or "--help" in extra:
        print(_usage())
        return 0
    smoke_all = names == ["all"] and "--quick" in extra
    if names == ["all"]:
        names = list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}\n\n{_usage()}", file=sys.stderr)
        return 2
    failed: list[str] = []
    for name in names:
        args = extra
        if smoke_all and name in SMOKE_FLAGS:
            args = [SMOKE_FLAGS[name] if arg == "--quick" else arg for arg in extra]
        if run_one(name, args) != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    if publishing:
        from bench._publish import publish

        publish()
    return 1 if failed else 0


def run_one(name: str, extra: list[str]) -> int:
    """Run one benchmark and keep its output and figures; its exit code."""
    print(f"== bench.{name} {' '.join(extra)}", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-figures-") as tmp:
        figures_file = Path(tmp) / "figures.json"
        code, output = _run(name, extra, figures_file)
        figures = json.loads(figures_file.read_text()) if figures_file.exists() else {}
    elapsed = time.monotonic() - started
    print(f"== bench.{name}: exit {code} in {elapsed:.1f} s", flush=True)
    _record(name, extra, code, elapsed, output, figures)
    return code


def publish_run() -> int:
    """Every published benchmark, one after the other, each under the machine's bench
    lock (taken per benchmark, so that others' runs may come in between: the shares are
    taken within a run)."""
    postgres = os.environ.get("AUTOPORT_TEST_POSTGRES_URL")
    failed = []
    for command in PUBLISHED:
        if tuple(command) in NEEDS_POSTGRES and not postgres:
            print(f"== skipped (no AUTOPORT_TEST_POSTGRES_URL): {' '.join(command)}")
            continue
        with _bench_lock():
            if run_one(command[0], command[1:]) != 0:
                failed.append(" ".join(command))
    if failed:
        print(f"failed: {'; '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


class _bench_lock:
    """The machine's bench lock (flock), when the machine has one and no process of ours
    holds it already (`flock /work/.bench.lock python -m bench ...`: waiting for it
    there would wait forever)."""

    def __enter__(self) -> None:
        self.handle = None
        if not Path(LOCK).exists() or _held_by_us(Path(LOCK)):
            return
        import fcntl

        self.handle = open(LOCK)
        fcntl.flock(self.handle, fcntl.LOCK_EX)

    def __exit__(self, *_: object) -> None:
        if self.handle is not None:
            self.handle.close()


def _held_by_us(path: Path) -> bool:
    """Whether this process or one of its ancestors holds a flock on `path`."""
    inode = path.stat().st_ino
    holders = set()
    try:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].endswith(f":{inode}"):
                holders.add(int(fields[4]))
    except OSError:
        return False
    pid = os.getpid()
    while pid > 1:
        if pid in holders:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rpartition(")")[2].split()[1])
    return False


def _run(name: str, extra: list[str], figures: Path) -> tuple[int, str]:
    """Run one benchmark, its output shown as it comes and kept."""
    process = subprocess.Popen(
        [sys.executable, "-m", f"bench.{name}", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "BENCH_FIGURES": str(figures)},
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    return process.wait(), "".join(lines)


def commit() -> str:
    """The commit measured (with `+dirty` when the tree has changes)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "autoport", "bench"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def record_key(name: str, extra: list[str]) -> str:
    shown = ["URL" if "://" in arg else arg for arg in extra]
    return re.sub(r"[^A-Za-z0-9]+", "-", " ".join([name, *shown])).strip("-")


def _record(
    name: str, extra: list[str], code: int, elapsed: float, output: str, figures: dict[str, float]
) -> None:
    """The latest run of `name` with these arguments, for `python -m bench publish`
    (addresses are shown as URL: they may hold credentials)."""
    shown = ["URL" if "://" in arg else arg for arg in extra]
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {
        "benchmark": name,
        "command": " ".join(["python -m bench", name, *shown]),
        "quick": "--quick" in extra or "--smoke" in extra,
        "exit": code,
        "seconds": round(elapsed, 1),
        "finished_at": time.time(),
        "commit": commit(),
        "load": os.getloadavg()[0],
        "figures": figures,
        "output": output,
    }
    (RESULTS / f"run-{record_key(name, extra)}.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
