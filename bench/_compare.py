"""`python -m bench compare BASE HEAD [NAME...] [--rounds N] [-- benchmark arguments]`:
two commits measured back to back, and the change of every figure.

Each commit is checked out in a worktree of its own (under the system's temporary
directory) and given this checkout's `bench/`, so that both are measured by the same
benchmark code; the benchmark runs there (`python -m bench NAME`, the server started
from that worktree's `autoport`). The runs alternate, BASE HEAD HEAD BASE for two rounds
(so a drift of the machine's load falls on both), each under the machine's bench lock;
the best figure of each commit's runs is compared, as the benchmarks keep the best of
their own rounds. Without names: `pull_live`.

    python -m bench compare main HEAD                      # pull_live, 2 rounds
    python -m bench compare 4a5edd6 HEAD oauth_tokens -- --seconds 8

A figure that got worse by more than `WORSE` is marked; the exit code is 1 when one did.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._figures import change, lower_is_better

WORSE = 0.10


def compare(argv: list[str]) -> int:
    from bench.__main__ import BENCHMARKS, RESULTS, _bench_lock, record_key

    extra: list[str] = []
    if "--" in argv:
        argv, extra = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    rounds = 2
    if "--rounds" in argv:
        at = argv.index("--rounds")
        rounds = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    refs, names = argv[:2], argv[2:] or ["pull_live"]
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    commits = [_resolve(ref) for ref in refs]
    order = [commits[0], commits[1]]
    for number in range(1, rounds):
        order += [commits[1], commits[0]] if number % 2 else [commits[0], commits[1]]
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        trees = {sha: _worktree(sha, Path(tmp) / sha[:12]) for sha in commits}
        try:
            for sha in order:
                for name in names:
                    print(f"== {sha[:12]}: bench {name} {' '.join(extra)}", flush=True)
                    with _bench_lock():
                        code = _run_in(trees[sha], name, extra)
                    record = trees[sha] / RESULTS / f"run-{record_key(name, extra)}.json"
                    if code != 0 or not record.exists():
                        print(f"bench {name} failed at {sha[:12]} (exit {code})", file=sys.stderr)
                        return 1
                    kept = json.loads(record.read_text())["figures"]
                    for figure, value in kept.items():
                        figures[name].setdefault(f"{figure}@{sha}", []).append(value)
        finally:
            for tree in trees.values():
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)],
                    capture_output=True,
                    check=False,
                )
    return _report(names, commits, refs, figures, rounds)


def _resolve(ref: str) -> str:
    return subprocess.run(
        ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _worktree(sha: str, path: Path) -> Path:
    """`sha` checked out at `path`, with this checkout's bench/ in place of its own."""
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(path), sha], capture_output=True, check=True
    )
    shutil.rmtree(path / "bench", ignore_errors=True)
    shutil.copytree(
        Path(__file__).resolve().parent,
        path / "bench",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return path


def _run_in(tree: Path, name: str, extra: list[str]) -> int:
    """`python -m bench NAME` in `tree`, importing that tree's autoport."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    check = subprocess.run(
        [sys.executable, "-c", "import autoport; print(autoport.__file__)"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not check.startswith(str(tree)):
        raise RuntimeError(f"autoport imported from {check}, not from {tree}")
    return subprocess.run(
        [sys.executable, "-m", "bench", name, *extra], cwd=tree, env=env, check=False
    ).returncode


def _best(name: str, values: list[float]) -> float:
    return min(values) if lower_is_better(name) else max(values)


def _report(
    names: list[str],
    commits: list[str],
    refs: list[str],
    figures: dict[str, dict[str, list[float]]],
    rounds: int,
) -> int:
    base, head = commits
    print(f"\nbench compare: {refs[0]} ({base[:12]}) -> {refs[1]} ({head[:12]}), {rounds} rounds")
    worse: list[str] = []
    table: dict[str, Any] = {}
    for name in names:
        print(f"\n{name}:")
        print(f"  {'figure':<40} {'base':>12} {'head':>12} {'change':>8}")
        kept = figures[name]
        for figure in sorted({key.rpartition("@")[0] for key in kept}):
            before, after = kept.get(f"{figure}@{base}"), kept.get(f"{figure}@{head}")
            if before is None or after is None:
                continue
            old, new = _best(figure, before), _best(figure, after)
            relative, verdict = change(figure, old, new)
            mark = ""
            if verdict == "worse" and abs(relative) > WORSE:
                mark = "  << worse"
                worse.append(f"{name} {figure}")
            print(f"  {figure:<40} {old:>12,.2f} {new:>12,.2f} {relative:>+8.1%} {verdict}{mark}")
            table[f"{name}.{figure}"] = {"base": old, "head": new, "change": relative}
    out = Path("var/bench-results") / f"compare-{base[:12]}-{head[:12]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"base": base, "head": head, "figures": table}, indent=1))
    print(f"\nload: {os.getloadavg()[0]:.2f}; kept in {out}")
    if worse:
        print(f"worse by more than {WORSE:.0%}: {', '.join(worse)}")
        return 1
    return 0
