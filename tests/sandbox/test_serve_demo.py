"""`autoport serve` on a fresh data directory shows a living sandbox (a real process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.cli.test_serve import free_port, wait_until_up


def test_serve_creates_a_living_demo_sandbox(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(tmp_path / "data"),
        "AUTOPORT_PORT": str(port),
        "AUTOPORT_ADMIN_TOKEN": "serve-demo-admin",
        "AUTOPORT_SANDBOX_TICK_SECONDS": "0.2",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    headers = {"authorization": "Bearer serve-demo-admin"}
    try:
        wait_until_up(f"{base}/healthz", process)
        vehicles = httpx.get(f"{base}/admin/v1/sandbox/vehicles", headers=headers).json()
        by_scenario = {v["simulation"]["scenario"]: v for v in vehicles["vehicles"]}
        assert sorted(by_scenario) == ["charging", "driving", "parked"]
        driving = by_scenario["driving"]["vin"]
        first = httpx.get(f"{base}/admin/v1/sandbox/vehicles/{driving}", headers=headers).json()
        time.sleep(2.5)
        later = httpx.get(f"{base}/admin/v1/sandbox/vehicles/{driving}", headers=headers).json()
        assert later["simulation"]["step"] > first["simulation"]["step"]
        odometer = later["data"]["diagnostics"]["odometer"]["data"]["value"]
        assert odometer > first["data"]["diagnostics"]["odometer"]["data"]["value"]
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    output = stderr.decode()
    assert "Demo sandbox created" in output
    assert driving in output
    # A second start on the same data directory keeps the vehicles and prints nothing new.
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_up(f"{base}/healthz", process)
        vehicles = httpx.get(f"{base}/admin/v1/sandbox/vehicles", headers=headers).json()
        assert len(vehicles["vehicles"]) == 3
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    assert "Demo sandbox created" not in stderr.decode()
