"""Every benchmark's smoke mode runs and prints figures: how CI runs benchmarks (quick
only, one subprocess each, as `python -m bench.<name> --quick`). PostgreSQL legs use
AUTOPORT_TEST_POSTGRES_URL when it is set."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.__main__ import BENCHMARKS, SMOKE_FLAGS

# Each smoke run starts servers and loads them: never beside the other heavy tests, and
# all on one worker (the module's runs are started together, by one fixture).
pytestmark = pytest.mark.xdist_group("heavy")

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


# How many smoke runs at once: they mostly wait on their own servers and start-up, but
# each starts a server of its own, and on a 2-core machine a dozen starting together
# miss their start-up deadlines. Three at a time take about a third of their sum.
PARALLEL_RUNS = 3
RUN_TIMEOUT_SECONDS = 240


def _quick(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"bench.{name}", SMOKE_FLAGS.get(name, "--quick")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
    )


@pytest.fixture(scope="module")
def quick_runs() -> Iterator[dict[str, Future[subprocess.CompletedProcess[str]]]]:
    """Every smoke run, PARALLEL_RUNS at a time, started when the module's first test
    asks."""
    with ThreadPoolExecutor(max_workers=PARALLEL_RUNS) as pool:
        yield {name: pool.submit(_quick, name) for name in BENCHMARKS}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_quick_mode_exits_cleanly_and_prints_figures(
    name: str, quick_runs: dict[str, Future[subprocess.CompletedProcess[str]]]
) -> None:
    done = quick_runs[name].result()
    assert done.returncode == 0, done.stderr[-2000:]
    assert FIGURE.search(done.stdout), done.stdout[-2000:]
