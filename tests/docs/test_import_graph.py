"""docs/development.md's import graph is the code's (scripts/import_graph.py draws it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_import_graph_is_drawn_from_the_code() -> None:
    checked = subprocess.run(
        [sys.executable, "scripts/import_graph.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr
