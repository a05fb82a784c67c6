"""A benchmark's figures, kept for `python -m bench publish` and `python -m bench compare`.

A benchmark calls `keep({"push.rps": 9123.0, "push.p99_ms": 8.1, ...})` with what it
measured; the runner (`python -m bench NAME`) names the file through BENCH_FIGURES and
stores the figures with the run's output and the commit measured. Run directly
(`python -m bench.NAME`), a benchmark keeps nothing.

Names say their direction: a figure ending in `_ms`, `_us`, `_s` or `_bytes` (a time or
a size) is better lower, any other (a rate, a share) better higher.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

ENV = "BENCH_FIGURES"
LOWER_IS_BETTER = ("_ms", "_us", "_s", "_bytes", "_lost", "_errors")


def keep(figures: Mapping[str, float | int]) -> None:
    target = os.environ.get(ENV)
    if not target:
        return
    path = Path(target)
    kept = json.loads(path.read_text()) if path.exists() else {}
    kept.update({name: round(float(value), 4) for name, value in figures.items()})
    path.write_text(json.dumps(kept, indent=1, sort_keys=True))


def lower_is_better(name: str) -> bool:
    return name.endswith(LOWER_IS_BETTER)


def change(name: str, before: float, after: float) -> tuple[float, str]:
    """The relative change from `before` to `after` and whether it is better or worse."""
    if before == 0:
        return float("nan"), ""
    relative = (after - before) / abs(before)
    if abs(relative) < 0.005:
        return relative, ""
    better = relative < 0 if lower_is_better(name) else relative > 0
    return relative, "better" if better else "worse"
