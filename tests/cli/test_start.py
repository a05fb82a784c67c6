"""Starting autoport as a newcomer does, in real processes: a busy port, one-time secrets
that must not reach the log stream, JSON logs, the demo's credentials again, and the
address the other commands learn from the running server."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import socket
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.helpers.ports import free_port
from tests.helpers.servers import serve, wait_until_up


def autoport(tmp_path: Path, *args: str, **env_vars: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUTOPORT_DATA_DIR": str(tmp_path / "data"), **env_vars}
    return subprocess.run(
        [sys.executable, "-m", "autoport", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_busy_port_fails_before_any_secret_and_names_the_setting(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        process = subprocess.run(
            [sys.executable, "-m", "autoport", "serve"],
            env={
                **os.environ,
                "AUTOPORT_DATA_DIR": str(tmp_path / "data"),
                "AUTOPORT_PORT": str(port),
            },
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert process.returncode == 2
    assert process.stdout == ""
    assert process.stderr.splitlines() == [
        f"error: port {port} is in use on 127.0.0.1 (another autoport?): choose a free one "
        "with AUTOPORT_PORT or --port"
    ]
    # Nothing was created, so nothing was shown once and lost.
    assert not (tmp_path / "data").exists()


def test_first_start_without_a_terminal_keeps_secrets_out_of_the_logs(tmp_path: Path) -> None:
    """stdout is a pipe (systemd, Docker): the admin token and the demo secret go to a
    0600 file, the log says where, and every log line is JSON (alembic's and uvicorn's
    too); health probes are not access-logged at info."""
    data = tmp_path / "data"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "serve"],
        env={
            **os.environ,
            "AUTOPORT_DATA_DIR": str(data),
            "AUTOPORT_PORT": str(port),
            "AUTOPORT_LOG_FORMAT": "json",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(f"{base}/healthz", process)
        assert httpx.get(f"{base}/metrics").status_code == 200
        assert httpx.get(f"{base}/v1/nothing").status_code == 404
        handover = data / "first-start-secrets.txt"
        deadline = time.monotonic() + 20
        while "client_secret" not in (handover.read_text() if handover.exists() else ""):
            assert time.monotonic() < deadline, "the demo was not handed over"
            time.sleep(0.2)
        # A second start on the same port says who holds it.
        again = autoport(tmp_path, "serve", AUTOPORT_PORT=str(port))
        assert again.returncode == 2
        assert f"autoport (pid {process.pid}) already serves this data directory" in again.stderr
        # The other commands learn the server's address from its state file.
        created = autoport(tmp_path, "apps", "create", "--name", "x", "-e", "sandbox", "--json")
        assert created.returncode == 0, created.stderr
        assert json.loads(created.stdout)["token_uri"] == f"{base}/sandbox/v1/access_tokens"
        # The demo's credentials again: a new secret, which the server accepts.
        demo = autoport(tmp_path, "demo", "--json")
        assert demo.returncode == 0, demo.stderr
        shown = json.loads(demo.stdout)
        assert shown["token_uri"] == f"{base}/sandbox/v1/access_tokens"
        token = httpx.post(
            shown["token_uri"],
            data={"grant_type": "client_credentials"},
            auth=(shown["client_id"], shown["client_secret"]),
        )
        assert token.status_code == 200, token.text
    finally:
        process.send_signal(signal.SIGTERM)
        stdout, stderr_bytes = process.communicate(timeout=30)
    stderr = stderr_bytes.decode()
    text = handover.read_text()
    assert stat.S_IMODE(handover.stat().st_mode) == 0o600
    admin_token = text.split("Admin token (shown once, keep it): ")[1].split()[0]
    demo_secret = text.split("client_secret:  ")[1].split()[0]
    assert shown["client_id"] in text
    for secret in (admin_token, demo_secret):
        assert secret not in stderr
        assert secret not in stdout.decode()
    lines = [json.loads(line) for line in stderr.splitlines()]  # every line is JSON
    loggers = {line.get("logger", "") for line in lines}
    assert any(name.startswith("alembic") for name in loggers), loggers
    assert any(name.startswith("uvicorn") for name in loggers), loggers
    assert [line for line in lines if line.get("path") == "/v1/nothing"]
    assert not [line for line in lines if line.get("path") in ("/healthz", "/metrics")]
    where = [line for line in lines if "one-time secret" in line["event"]]
    assert len(where) == 2 and where[0]["path"] == str(handover.resolve())
    # Stopped: the state file is gone, links fall back to the settings.
    assert not (data / "server.json").exists()


def test_first_start_on_a_terminal_shows_secrets_there(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "init"],
        env={**os.environ, "AUTOPORT_DATA_DIR": str(tmp_path / "data")},
        stdout=secondary,
        stderr=subprocess.PIPE,
    )
    os.close(secondary)
    seen = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    _, stderr = process.communicate(timeout=30)
    os.close(primary)
    assert process.returncode == 0, stderr.decode()
    assert b"Admin token (shown once, keep it): ap_admin_" in seen
    assert b"ap_admin_" not in stderr
    assert not (tmp_path / "data" / "first-start-secrets.txt").exists()


def test_serve_on_an_unmigrated_postgresql_is_one_line(
    tmp_path: Path, postgres_schema: tuple[str, str]
) -> None:
    url, _ = postgres_schema
    process, _ = serve(
        tmp_path,
        AUTOPORT_DATABASE_URL=url,
        AUTOPORT_DATABASE_SCHEMA=f"autoport_empty_{uuid.uuid4().hex[:8]}",
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    [line] = stderr.decode().splitlines()
    assert line.endswith("run `autoport migrate`"), line
    assert not (tmp_path / "data" / "secrets.json").exists()


def test_serve_on_an_unreachable_postgresql_is_one_line(tmp_path: Path) -> None:
    process, _ = serve(tmp_path, AUTOPORT_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    [line] = stderr.decode().splitlines()
    assert "127.0.0.1:1/none (AUTOPORT_DATABASE_URL)" in line, line


@pytest.mark.parametrize("log_format", ["console", "json"])
def test_a_bad_setting_stops_serve_in_one_line(tmp_path: Path, log_format: str) -> None:
    process, _ = serve(tmp_path, AUTOPORT_LOG_FORMAT=log_format, AUTOPORT_LOG_LEVEL="loud")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    [line] = stderr.decode().splitlines()
    if log_format == "json":  # a log collector parses every line, this one too
        parsed = json.loads(line)
        assert parsed["level"] == "error"
        line = parsed["event"]
    assert line.startswith("configuration error: AUTOPORT_LOG_LEVEL: Input should be ")
