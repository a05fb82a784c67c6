"""`python -m bench publish` writes docs/benchmarks.md from the runs under
var/bench-results/; a benchmark with no run there keeps its previously published section
(results are kept per checkout) instead of being dropped."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bench import _publish

PREVIOUS = """# Benchmarks

## Every benchmark's latest run

### simulator: the sandbox vehicle simulator: ticks per second

`python -m bench simulator` — 2026-11-24 23:59 UTC, exit 0, 5.7 s.

```
driving / electric 123456 ticks/s
```

### fuzz: schemathesis

No run recorded yet: `python -m bench fuzz`.
"""


def test_publish_keeps_sections_of_benchmarks_without_a_run_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "benchmarks.md").write_text(PREVIOUS)
    results = tmp_path / "var" / "bench-results"
    results.mkdir(parents=True)
    (results / "run-consent.json").write_text(
        json.dumps(
            {
                "benchmark": "consent",
                "command": "python -m bench consent",
                "quick": False,
                "exit": 0,
                "seconds": 3.0,
                "finished_at": time.time(),
                "output": "consent pages: 4321 renders/s",
            }
        )
    )
    _publish.publish()
    text = (tmp_path / "docs" / "benchmarks.md").read_text()
    sections = _publish.previous_runs(text)
    # The new run, the kept one (marked as such), and no figure for what never ran.
    assert "consent pages: 4321 renders/s" in "\n".join(sections["consent"])
    assert sections["simulator"][0] == _publish.KEPT
    assert "driving / electric 123456 ticks/s" in sections["simulator"]
    assert "fuzz" not in sections
    assert "No run recorded yet: `python -m bench fuzz`." in text

    # Published again: kept once more, marked once.
    _publish.publish()
    again = _publish.previous_runs((tmp_path / "docs" / "benchmarks.md").read_text())
    assert again["simulator"] == sections["simulator"]


def _run_record(results: Path, command: str, commit: str, figures: dict[str, float]) -> None:
    key = command.replace("python -m bench ", "").replace(" ", "-")
    (results / f"run-{key}.json").write_text(
        json.dumps(
            {
                "benchmark": command.split()[3],
                "command": command,
                "quick": False,
                "exit": 0,
                "seconds": 30.0,
                "finished_at": time.time(),
                "commit": commit,
                "load": 1.5,
                "figures": figures,
                "output": "figures",
            }
        )
    )


def test_publish_keeps_every_run_s_figures_per_commit_and_shows_their_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "var" / "bench-results"
    results.mkdir(parents=True)
    _run_record(results, "python -m bench oauth_tokens", "a" * 40, {"x_rps": 1000, "y_ms": 10})
    _publish.publish()
    runs = tmp_path / "docs" / "benchmarks" / "runs"
    first = json.loads((runs / f"{'a' * 40}.json").read_text())
    assert first["runs"]["python -m bench oauth_tokens"]["figures"] == {"x_rps": 1000, "y_ms": 10}

    # The next commit: slower and later; the page shows both changes as worse.
    _run_record(results, "python -m bench oauth_tokens", "b" * 40, {"x_rps": 800, "y_ms": 12})
    _publish.publish()
    assert (runs / f"{'a' * 40}.json").exists()  # kept
    text = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert "| x_rps | 800.00 | 1,000.00 | -20.0% worse |" in text
    assert "| y_ms | 12.00 | 10.00 | +20.0% worse |" in text


def test_a_figure_s_direction_follows_its_name() -> None:
    from bench._figures import change

    assert change("push.rps", 100, 110)[1] == "better"
    assert change("push.p99_ms", 10, 11)[1] == "worse"
    assert change("share_of_bare_floor", 0.8, 0.7)[1] == "worse"
    assert change("points_lost", 0, 5)[1] == ""  # from nothing: no ratio
    assert change("push.rps", 1000, 1001)[1] == ""  # within half a percent


def test_the_benchmarks_serve_with_make_run_s_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench._serve import Changed, environment

    # Whatever the shell exports is not make run's: only what the benchmark names stays.
    monkeypatch.setenv("AUTOPORT_ACCESS_LOG", "false")
    monkeypatch.setenv("AUTOPORT_LOG_LEVEL", "warning")
    limit = Changed("AUTOPORT_VEHICLE_DATA_RATE_LIMIT", "100000000/minute", "never refuses")
    env = environment(Path("/data"), 8123, [limit], {"AUTOPORT_DATABASE_URL": "sqlite:///x"})
    autoport = {
        key: value
        for key, value in env.items()
        if key.startswith("AUTOPORT_") and key != "AUTOPORT_TEST_POSTGRES_URL"  # the suite's
    }
    assert autoport == {
        "AUTOPORT_DATA_DIR": "/data",
        "AUTOPORT_PORT": "8123",
        "AUTOPORT_DATABASE_URL": "sqlite:///x",
        "AUTOPORT_VEHICLE_DATA_RATE_LIMIT": "100000000/minute",
    }


def test_publish_keeps_sections_of_figures_it_has_no_results_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another checkout published the pull's section; publishing here without those
    results keeps it, once marked, through any number of publications."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    pull = "## The pull under live conditions (`bench.pull_live`)"
    (tmp_path / "docs" / "benchmarks.md").write_text(
        PREVIOUS.replace(
            "## Every benchmark's latest run",
            f"## The machine\n\n- CPU: old\n\n{pull}\n\n| push | 9,000 req/s |\n\n"
            "## Every benchmark's latest run",
        )
    )
    for _ in range(2):
        _publish.publish()
    text = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert text.count(pull) == 1 and text.count("| push | 9,000 req/s |") == 1
    assert text.count(_publish.KEPT) >= 1
    kept = text.split(pull, 1)[1].split("## Every benchmark", 1)[0]
    assert kept.count(_publish.KEPT) == 1
    assert "- CPU: old" not in text  # the machine is this one's


def test_pull_section_names_the_changed_settings_and_the_cpu_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    results = tmp_path / "var" / "bench-results"
    results.mkdir(parents=True)

    def side(rps: float, cpu: float | None) -> dict[str, float]:
        figures = {"rps": rps, "bytes": 7845.0, "p50_ms": 4.0, "p99_ms": 9.0}
        if cpu is not None:
            figures["cpu_us_per_request"] = cpu
        return figures

    summary = {
        "command": "python -m bench pull_live",
        "started_at": time.time(),
        "seconds": 8,
        "workers": 1,
        "load": {"start": 1.5, "end": 2.5, "cores": 2},
        "changed": [
            {"name": "AUTOPORT_VEHICLE_DATA_RATE_LIMIT", "value": "1/minute", "why": "because"}
        ],
        "ingestion": {"acknowledged": 10, "stored": 10, "lost": 0, "failed_requests": 0},
        "targets": {
            "push": {
                "subject": side(8000.0, 110.0),
                "floor": side(9000.0, 95.0),
                "bare": side(10000.0, None),
                "share": 0.8,
                "share_live": 0.89,
                "target": ">= 75% of the bare floor",
                "met": True,
            }
        },
        "sweep": {},
    }
    (results / "pull_live.json").write_text(json.dumps(summary))
    _publish.publish()
    text = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert (
        "Settings: `make run`'s (logging on), except `AUTOPORT_VEHICLE_DATA_RATE_LIMIT=1/minute` "
        "(because)." in text
    )
    assert "| CPU/request |" in text
    assert "| 110 µs |" in text  # the server's
    assert "load average 1.5 at the start, 2.5 at the end" in text
