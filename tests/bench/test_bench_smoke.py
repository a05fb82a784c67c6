"""Every benchmark's smoke mode runs and prints figures: how CI runs benchmarks (quick
only, one subprocess each, as `python -m bench.<name> --quick`). PostgreSQL legs use
AUTOPORT_TEST_POSTGRES_URL when it is set."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.__main__ import BENCHMARKS

ROOT = Path(__file__).resolve().parents[2]
# A figure: a number followed by a unit of time or of rate (µs, ms, s, req/s, points/s).
FIGURE = re.compile(r"\d[\d.,]*\s*(?:[A-Za-z]*/s|µs|us|ms|s)(?![A-Za-z])")


def test_every_benchmark_module_is_listed() -> None:
    modules = {p.stem for p in (ROOT / "bench").glob("*.py") if not p.stem.startswith("_")}
    assert modules == set(BENCHMARKS)


def test_bench_without_arguments_lists_the_benchmarks() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench"], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    for name in BENCHMARKS:
        assert name in done.stdout


@pytest.fixture(scope="module")
def quick_runs() -> Iterator[dict[str, subprocess.Popen[str]]]:
    """Start every smoke run at once: they mostly wait on their own servers and
    start-up, so together they take about as long as the slowest, not their sum."""
    runs = {
        name: subprocess.Popen(
            [sys.executable, "-m", f"bench.{name}", "--quick"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in BENCHMARKS
    }
    yield runs
    for run in runs.values():
        if run.poll() is None:
            run.kill()
            run.communicate()


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_quick_mode_exits_cleanly_and_prints_figures(
    name: str, quick_runs: dict[str, subprocess.Popen[str]]
) -> None:
    stdout, stderr = quick_runs[name].communicate(timeout=120)
    assert quick_runs[name].returncode == 0, stderr[-2000:]
    assert FIGURE.search(stdout), stdout[-2000:]
