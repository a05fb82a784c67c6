"""`autoport admin-token --rotate` applies to a running server at once: the old token
stops working and the new one works, in every worker process, on SQLite and PostgreSQL
(a real `autoport serve` and the real CLI)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers.servers import serve_until_up


def rotate(env: dict[str, str], base: str, in_use: str) -> str:
    """`admin-token --rotate`, while the server keeps answering requests with the token
    `in_use`: whatever each worker process holds of the token is fresh up to the moment
    the command returns (a cache kept for a while would still hold the old token then)."""
    command = subprocess.Popen(
        [sys.executable, "-m", "autoport", "admin-token", "--rotate"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    while command.poll() is None:
        statuses(base, in_use, 2)
        time.sleep(0.02)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    token = out.strip()
    assert token.startswith("ap_admin_")
    return token


def statuses(base: str, token: str, count: int) -> set[int]:
    """Status of `count` admin requests, each on a new connection (so that the worker
    processes share them)."""
    headers = {"Authorization": f"Bearer {token}"}
    # No keep-alive: a new connection each time. One client, not httpx.get each time (a
    # new TLS context each, most of a request's CPU, which the rotation command needs).
    no_keepalive = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(limits=no_keepalive, timeout=10) as client:
        return {
            client.get(f"{base}/admin/v1/accounts", headers=headers).status_code
            for _ in range(count)
        }


def rounds_until(base: str, token: str, status: int, timeout: float = 30.0) -> int:
    """Rounds of 20 requests until `token` gets `status` on every one of a round: how many
    rounds did not (0 when the first did). Counted, not timed: how long a round takes
    depends on how busy the machine is, how many rounds it takes does not."""
    deadline = time.monotonic() + timeout
    missed = 0
    while statuses(base, token, 20) != {status}:
        assert time.monotonic() < deadline, f"token not {status} after {timeout}s"
        missed += 1
        time.sleep(0.05)
    return missed


# Two start-ups and two CLI runs: on a busy machine more than the suite's 120 s.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_rotation_reaches_the_running_server(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    env = {**os.environ, "AUTOPORT_DATA_DIR": str(tmp_path / "data")}
    extra = {"AUTOPORT_SANDBOX_DEMO": "false", "AUTOPORT_ACCESS_LOG": "false"}
    args: list[str] = []
    if backend == "postgresql":
        url, schema = request.getfixturevalue("postgres_schema")
        extra |= {"AUTOPORT_DATABASE_URL": url, "AUTOPORT_DATABASE_SCHEMA": schema}
        args = ["--workers", "2"]
    process, base = serve_until_up(tmp_path, *args, **extra, path="/readyz")
    try:
        first = rotate(env, base, "ap_admin_guessed")
        rounds_until(base, first, 200)
        second = rotate(env, base, first)
        # The new token works and the old one is refused, in every process, at once: each
        # request reads the secrets file again when it changed, so the first round after
        # the command returns is already all 200 (no interval to wait out, on a machine
        # however busy).
        assert rounds_until(base, second, 200) == 0
        assert statuses(base, first, 20) == {401}
        assert statuses(base, "ap_admin_guessed", 5) == {401}
    finally:
        process.terminate()
        process.communicate(timeout=30)
