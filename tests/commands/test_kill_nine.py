"""At most once across a crash: `autoport serve` is killed with SIGKILL while a command is
`sent` (the car is slow to answer); after a restart the command is timed_out and never
reaches the car, even though the car now answers at once (a real process, SQLite)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.ports import free_port
from tests.helpers.servers import wait_until_up
from tests.sandbox.test_serve_demo import read_demo

ADMIN = {"authorization": "Bearer kill-nine-admin"}


def _serve(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "autoport", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _poll(fetch: Any, until: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if until(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


# The restarted server must come back well before the command's deadline (wall clock):
# not beside the tests that load the machine.
@pytest.mark.xdist_group("heavy")
def test_kill_nine_between_sent_and_the_answer_never_executes_twice(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(tmp_path / "data"),
        "AUTOPORT_PORT": str(port),
        "AUTOPORT_ADMIN_TOKEN": "kill-nine-admin",
        "AUTOPORT_VEHICLE_COMMAND_TIMEOUT_SECONDS": "15",
    }
    base = f"http://127.0.0.1:{port}"
    process = _serve(env)
    try:
        wait_until_up(f"{base}/healthz", process)
        demo = read_demo(tmp_path / "data")
        vin = demo["parked"]
        car = f"{base}/admin/v1/sandbox/vehicles/{vin}"
        slow = httpx.patch(f"{car}/behaviour", headers=ADMIN, json={"latency_seconds": 60})
        assert slow.status_code == 200, slow.text
        before = httpx.get(car, headers=ADMIN).json()
        locked = before["data"]["doors"]["locks_state"]["data"]
        wanted = "unlocked" if locked == "locked" else "locked"
        token = httpx.post(
            f"{base}/sandbox/v1/access_tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": demo["client_id"],
                "client_secret": demo["client_secret"],
            },
        ).json()
        bearer = {"authorization": f"Bearer {token['access_token']}"}
        # The demo application registered every command the simulator obeys.
        assert "doors.set.locks_state" in token["scope"].split()
        sent = httpx.post(
            f"{base}/sandbox/v1/vehicle-commands/autoapi-13/{vin}",
            headers=bearer,
            json={
                "capability": "doors",
                "command": "lock_unlock_doors",
                "arguments": {"locks_state": wanted},
            },
        )
        assert sent.status_code == 202, sent.text
        url = f"{base}/sandbox/v1/vehicle-commands/{sent.json()['id']}"
        status = _poll(lambda: httpx.get(url, headers=bearer).json()["status"], "sent".__eq__, 10)
        assert status == "sent"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    # Restarted well before the command's deadline: the car now answers at once, so a
    # re-send would execute.
    process = _serve(env)
    try:
        wait_until_up(f"{base}/healthz", process)
        fast = httpx.patch(f"{car}/behaviour", headers=ADMIN, json={"latency_seconds": 0})
        assert fast.status_code == 200
        bearer = {
            "authorization": "Bearer "
            + httpx.post(
                f"{base}/sandbox/v1/access_tokens",
                data={
                    "grant_type": "client_credentials",
                    "client_id": demo["client_id"],
                    "client_secret": demo["client_secret"],
                },
            ).json()["access_token"]
        }
        done = _poll(
            lambda: httpx.get(url, headers=bearer).json(),
            lambda c: c["status"] != "sent",
            40,
        )
        assert done["status"] == "timed_out", done
        assert done["failure"]["reason"] == "execution_timeout"
        assert "not sent again" in done["failure"]["description"]
        time.sleep(1.0)
        after = httpx.get(car, headers=ADMIN).json()
        assert after["commands"]["executed"] == 0
        assert after["data"]["doors"]["locks_state"]["data"] == locked
        # The car takes a new command at once: nothing is stuck in flight.
        again = httpx.post(
            f"{base}/sandbox/v1/vehicle-commands/autoapi-13/{vin}",
            headers={**bearer, "Prefer": "wait=10"},
            json={
                "capability": "doors",
                "command": "lock_unlock_doors",
                "arguments": {"locks_state": wanted},
            },
        )
        assert again.status_code == 200, again.text
        assert again.json()["status"] == "executed"
        final = httpx.get(car, headers=ADMIN).json()
        assert final["commands"]["executed"] == 1
        assert final["data"]["doors"]["locks_state"]["data"] == wanted
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
