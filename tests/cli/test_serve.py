"""`autoport serve` as a newcomer runs it: a real process on a free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"serve exited early with {process.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer in {timeout}s")


def test_serve_on_a_fresh_data_dir(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(tmp_path / "data"),
        "AUTOPORT_PORT": str(port),
        "AUTOPORT_LOG_FORMAT": "json",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(f"{base}/healthz", process)
        assert httpx.get(f"{base}/readyz").status_code == 200
        assert httpx.get(f"{base}/").json()["environment"] == "production"
        assert httpx.get(f"{base}/sandbox/").json()["environment"] == "sandbox"
        missing = httpx.get(f"{base}/v1/unknown")
        assert missing.status_code == 404
        assert missing.json()["request_id"] == missing.headers["x-request-id"]
        metrics = httpx.get(f"{base}/metrics").text
        assert 'autoport_http_requests_total{method="GET",route="/healthz",status="200"}' in metrics
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    output = stderr.decode()
    # Graceful shutdown on SIGTERM: the lifespan finished (uvicorn then re-raises the
    # signal, so the exit status is the signal's).
    assert process.returncode in (0, -signal.SIGTERM), output[-2000:]
    assert "Application shutdown complete" in output
    # The admin token is shown once on the terminal; the secrets never reach the log lines.
    token_lines = [line for line in output.splitlines() if "Admin token" in line]
    assert len(token_lines) == 1
    secrets_text = (tmp_path / "data" / "secrets.json").read_text()
    import json

    for name, value in json.loads(secrets_text).items():
        assert value not in output, f"{name} leaked into the output"
    # Request ids are in the (JSON) logs.
    assert missing.headers["x-request-id"] in output
