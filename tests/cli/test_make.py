"""The README's `make run` with an interpreter given by hand (issue #38): `make run
PYTHON=python3.10` skipped the version check and failed deep inside pip. A Python that is
too old, or does not run, is one clear line and exit code 2, before any virtual
environment is made.

No Python 3.10 is installed here: the stand-in is a script that answers `-c` as
Python 3.10.12 would (the real interpreter with `sys.version_info` set back) and refuses
anything else, so a Makefile that went past the check fails this test rather than
installing anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = f"""#!/bin/sh
if [ "$1" = "-c" ]; then
  exec {sys.executable} -c 'import sys; sys.version_info = (3, 10, 12, "final", 0); \
sys.version = "3.10.12"; code = sys.argv[1]; del sys.argv[1]; exec(code)' "$2"
fi
echo "python3.10 stand-in: only -c" >&2
exit 1
"""


def make_run(tmp_path: Path, python: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    return subprocess.run(
        ["make", "--no-print-directory", "run", f"PYTHON={python}", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_old_python_given_by_hand_is_one_clear_line(tmp_path: Path) -> None:
    python = tmp_path / "python3.10"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    result = make_run(tmp_path, str(python))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"PYTHON={python} is Python 3.10.12; autoport needs 3.11 or newer" in result.stderr
    assert "pip" not in result.stdout + result.stderr
    assert not (tmp_path / "venv").exists()


def test_a_python_that_does_not_run_is_one_clear_line(tmp_path: Path) -> None:
    result = make_run(tmp_path, "python3.0-missing")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "PYTHON=python3.0-missing does not run. autoport needs Python 3.11" in result.stderr
    assert not (tmp_path / "venv").exists()
