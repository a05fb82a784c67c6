"""The TypeScript client's own suite (clients/typescript, vitest) as one test of `make
test`: its tools installed from the committed lockfile (`make ts-install`, `npm ci` when
the lockfile changed), then `npm test`, which starts real `autoport serve` processes of
this venv, Chromium and Mosquitto (clients/typescript/README.md, "Development")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import service_missing

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"


@pytest.mark.browser
@pytest.mark.mqtt
@pytest.mark.timeout(900)
def test_typescript_client_suite() -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        service_missing("the TypeScript client's tests need Node.js 20+ and npm on PATH")
    installed = subprocess.run(
        ["make", "--no-print-directory", "ts-install"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    env = {
        **os.environ,
        "AUTOPORT_BIN": str(Path(sys.executable).parent / "autoport"),
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
    }
    done = subprocess.run(
        ["npm", "test", "--silent"],
        cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-12000:]
