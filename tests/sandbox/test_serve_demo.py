"""`autoport serve` on a fresh data directory shows a living sandbox (a real process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.helpers.ports import free_port
from tests.helpers.servers import wait_until_up


def read_demo(data_dir: Path) -> dict[str, Any]:
    """The credentials and VINs `autoport serve` handed over for the demo (stdout is not
    a terminal here: in the one-time secrets file)."""
    path = data_dir / "first-start-secrets.txt"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if "sandbox API:" in text:
            break
        time.sleep(0.1)
    found: dict[str, Any] = {"vins": []}
    for line in text.splitlines():
        words = line.split()
        if line.strip().startswith("client_id:"):
            found["client_id"] = words[1]
        elif line.strip().startswith("client_secret:"):
            found["client_secret"] = words[1]
        elif line.strip().startswith("vehicle "):
            found["vins"].append(words[1])
            found[words[2]] = words[1]
        elif line.strip().startswith("sandbox API:"):
            return found
    raise AssertionError(f"no demo handed over: {found}")


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
        printed = read_demo(tmp_path / "data")
        driving = printed["driving"]
        token_response = httpx.post(
            f"{base}/sandbox/v1/access_tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": printed["client_id"],
                "client_secret": printed["client_secret"],
            },
        )
        assert token_response.status_code == 200, token_response.text
        bearer = {"authorization": f"Bearer {token_response.json()['access_token']}"}
        pull = f"{base}/sandbox/v1/vehicle-data/autoapi-13/{driving}"
        first = httpx.get(pull, headers=bearer)
        assert first.status_code == 200, first.text
        time.sleep(2.5)
        later = httpx.get(pull, headers=bearer).json()
        before = first.json()
        assert (
            later["diagnostics"]["odometer"]["data"]["value"]
            > before["diagnostics"]["odometer"]["data"]["value"]
        )
        assert (
            later["vehicle_location"]["coordinates"]["data"]
            != before["vehicle_location"]["coordinates"]["data"]
        )
        with httpx.stream("GET", f"{base}/sandbox/v1/stream", headers=bearer, timeout=15) as stream:
            assert stream.status_code == 200
            # The first event is the stream's start position; the next one a message.
            data = (line for line in stream.iter_lines() if line.startswith("data:"))
            assert "after" in orjson.loads(next(data)[5:])
            message = next(data)
        assert orjson.loads(message[5:])["vin"] in printed["vins"]
        vehicles = httpx.get(f"{base}/admin/v1/sandbox/vehicles", headers=headers).json()
        assert len(vehicles["vehicles"]) == 3
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
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
