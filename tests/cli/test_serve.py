"""`autoport serve` as a newcomer runs it: a real process on a free port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.helpers.servers import serve, serve_until_up, wait_until_up


def test_serve_on_a_fresh_data_dir(tmp_path: Path) -> None:
    process, base = serve_until_up(tmp_path, AUTOPORT_LOG_FORMAT="json", path="/healthz")
    try:
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
    # stdout is not a terminal: the admin token went to the 0600 file (tests/cli/test_start.py),
    # and the secrets never reach the log lines.
    assert "Admin token" in (tmp_path / "data" / "first-start-secrets.txt").read_text()
    assert "Admin token" not in output
    secrets_text = (tmp_path / "data" / "secrets.json").read_text()
    for name, value in json.loads(secrets_text).items():
        assert value not in output, f"{name} leaked into the output"
    # Request ids are in the (JSON) logs.
    assert missing.headers["x-request-id"] in output


def test_each_request_is_logged_once_in_json_by_default(tmp_path: Path) -> None:
    # As `make run` starts it, nothing set; stderr is a pipe, so every line is JSON.
    process, base = serve(tmp_path, AUTOPORT_SANDBOX_DEMO="false")
    ids = [f"once-{n}" for n in range(20)]
    try:
        wait_until_up(f"{base}/readyz", process)
        with httpx.Client(base_url=base) as client:
            for request_id in ids:
                path = "/v1/unknown" if request_id.endswith("7") else "/"
                client.get(path, headers={"X-Request-Id": request_id})
        # At once: the lines still held in the access log's buffer are written at shutdown.
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    lines = [json.loads(line) for line in stderr.decode().splitlines()]
    # uvicorn's own access logger ("127.0.0.1:60054 - "GET / HTTP/1.1" 200") stays silent.
    assert not [line for line in lines if line.get("logger") == "uvicorn.access"]
    requests = [
        line
        for line in lines
        if line["event"] == "request" and line["request_id"].startswith("once-")
    ]
    assert sorted(line["request_id"] for line in requests) == sorted(ids)
    for line in requests:
        assert line["level"] == "info"
        assert line["method"] == "GET"
        assert line["environment"] == "production"
        assert line["application"] is None
        assert line["ms"] >= 0
        assert line["timestamp"].endswith("Z")
        expected = (404, "/v1/unknown") if line["request_id"].endswith("7") else (200, "/")
        assert (line["status"], line["path"]) == expected


def test_sigterm_ends_open_sse_streams_at_once(tmp_path: Path) -> None:
    # An SSE stream never ends by itself: without the server telling the app it stops,
    # uvicorn would wait its whole grace period (10 s) for it.
    process, base = serve_until_up(tmp_path, AUTOPORT_SANDBOX_DEMO="false", path="/readyz")
    try:
        created = subprocess.run(
            [sys.executable, "-m", "autoport", "apps", "create", "--name", "streams",
             "--property", "charging.battery_level", "--json"],
            env={**os.environ, "AUTOPORT_DATA_DIR": str(tmp_path / "data")},
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        application = json.loads(created.stdout)
        token = httpx.post(
            f"{base}/v1/access_tokens",
            data={"grant_type": "client_credentials"},
            auth=(application["client_id"], application["client_secret"]),
        ).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.stream("GET", f"{base}/v1/stream", headers=headers, timeout=30) as stream:
            assert stream.status_code == 200
            chunks = stream.iter_bytes()
            assert next(chunks).startswith(b"retry:")
            started = time.monotonic()
            process.send_signal(signal.SIGTERM)
            rest = b"".join(chunks)  # the stream ends cleanly, no error
            ended = time.monotonic() - started
        process.wait(timeout=20)
        exited = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
        _, stderr = process.communicate(timeout=20)
    assert b"event:" not in rest
    assert ended < 3, f"the stream ended {ended:.1f} s after SIGTERM"
    assert exited < 5, f"serve exited {exited:.1f} s after SIGTERM"
    assert process.returncode in (0, -signal.SIGTERM)
    assert b"Application shutdown complete" in stderr


def test_workers_serve_from_several_processes_on_postgresql(
    tmp_path: Path, postgres_schema: tuple[str, str]
) -> None:
    url, schema = postgres_schema
    process, base = serve_until_up(
        tmp_path,
        "--workers",
        "2",
        AUTOPORT_DATABASE_URL=url,
        AUTOPORT_DATABASE_SCHEMA=schema,
        path="/readyz",
    )
    try:
        children = subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        # uvicorn's supervisor and its two workers (plus multiprocessing's resource
        # tracker, which is not a worker).
        workers = [pid for pid in children if _is_worker(pid)]
        assert len(workers) == 2, children
        for _ in range(10):
            assert httpx.get(f"{base}/healthz").status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode in (0, -signal.SIGTERM), stderr.decode()[-2000:]
    assert stderr.decode().count("Application shutdown complete") == 2


def _is_worker(pid: str) -> bool:
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    return b"resource_tracker" not in cmdline


def test_workers_are_refused_on_sqlite(tmp_path: Path) -> None:
    process, _ = serve(tmp_path, "--workers", "2")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert b"use PostgreSQL for more workers" in stderr
