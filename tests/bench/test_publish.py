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
