"""The client's tests run against a real `autoport serve` (a subprocess on a free port
with its own data directory and the demo sandbox). One server serves the whole session;
`LiveServer.restart()` stops and starts the same process configuration on the same port
and data, for the stream-resume test. Applications beyond the demo come from the CLI,
consent codes from the real consent pages (no JavaScript needed)."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from autoport_client import Client
from tests.helpers.ports import free_port
from tests.helpers.servers import wait_until_up

ADMIN = "client-tests-admin-token-0123456789"
REDIRECT_URI = "http://localhost:3000/callback"  # the demo application's
CLIENT_SRC = Path(__file__).resolve().parents[1] / "src"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
VIN_ALPHABET = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def new_vin() -> str:
    return "SBXCL" + "".join(secrets.choice(VIN_ALPHABET) for _ in range(12))


@dataclass
class Demo:
    application_id: str
    client_id: str
    client_secret: str
    vins: dict[str, str] = field(default_factory=dict)  # scenario -> VIN


@dataclass
class LiveServer:
    root: str
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    demo: Demo | None = None

    @property
    def sandbox(self) -> str:
        return f"{self.root}/sandbox"

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "autoport", "serve"],
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        wait_until_up(f"{self.root}/readyz", self.process)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=20)

    def restart(self) -> None:
        self.stop()
        self.start()

    def cli(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "autoport", *args, "--json"],
            env=self.env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def admin(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(
            method, f"{self.sandbox}{path}", headers={"Authorization": f"Bearer {ADMIN}"},
            timeout=20, **kwargs,
        )  # fmt: skip

    def client(self, **options: Any) -> Client:
        assert self.demo is not None
        return Client(
            self.root, self.demo.client_id, self.demo.client_secret,
            environment="sandbox", **options,
        )  # fmt: skip


def read_demo(log: Path, handover: Path) -> Demo:
    """The demo credentials `autoport serve` handed over on its first start: printed on
    a terminal, else (as here) written to the data directory's one-time secrets file."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = handover.read_text(errors="replace") if handover.exists() else ""
        if "sandbox API:" in text:
            values: dict[str, str] = {}
            vins: dict[str, str] = {}
            for line in text.splitlines():
                words = line.split()
                stripped = line.strip()
                if stripped.startswith("application id:"):
                    values["application_id"] = words[-1]
                elif stripped.startswith(("client_id:", "client_secret:")):
                    values[words[0].rstrip(":")] = words[1]
                elif stripped.startswith("vehicle "):
                    vins[words[2]] = words[1]
            return Demo(
                values["application_id"], values["client_id"], values["client_secret"], vins
            )
        time.sleep(0.1)
    raise AssertionError(f"no demo printed:\n{log.read_text()[-3000:]}")


def server_env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    root = f"http://127.0.0.1:{port}"
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(CLIENT_SRC), str(Path.cwd()), os.environ.get("PYTHONPATH", "")]
        ),
        "AUTOPORT_DATA_DIR": str(data_dir),
        "AUTOPORT_PORT": str(port),
        "AUTOPORT_BASE_URL": root,
        "AUTOPORT_SANDBOX_BASE_URL": f"{root}/sandbox",
        "AUTOPORT_ADMIN_TOKEN": ADMIN,
        "AUTOPORT_LOG_FORMAT": "json",
        "AUTOPORT_SANDBOX_TICK_SECONDS": "0.25",
        "AUTOPORT_SANDBOX_CONNECTOR_CLEARANCE_DELAY_SECONDS": "0.3",
        "AUTOPORT_SANDBOX_CONNECTOR_REMOVAL_DELAY_SECONDS": "0.3",
        "AUTOPORT_FLEET_WORKER_INTERVAL_SECONDS": "0.1",
        "AUTOPORT_WEBHOOK_ALLOW_LOOPBACK": "true",
        "AUTOPORT_WEBHOOK_RETRY_BASE_SECONDS": "0.5",
        **extra,
    }


def launch(tmp: Path, **extra: str) -> LiveServer:
    port = free_port()
    server = LiveServer(
        root=f"http://127.0.0.1:{port}",
        env=server_env(tmp / "data", port, **extra),
        log=tmp / "serve.log",
    )
    server.start()
    server.demo = read_demo(server.log, tmp / "data" / "first-start-secrets.txt")
    return server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = launch(tmp_path_factory.mktemp("autoport-client"))
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="session")
def demo(server: LiveServer) -> Demo:
    assert server.demo is not None
    return server.demo


@pytest.fixture
def client(server: LiveServer) -> Iterator[Client]:
    with server.client() as live:
        yield live


def consent_callback(
    server: LiveServer, client: Client, vin: str, *, app_id: str, challenge: str
) -> str:
    """An owner approves the application on the real consent pages: the URL the browser
    returns to (the code, `state` "st-1" and `iss`)."""
    entry = client.authorization_url(
        REDIRECT_URI, state="st-1", app_id=app_id, vin=vin, brand="sandbox",
        code_challenge=challenge,
    )  # fmt: skip
    with httpx.Client(timeout=20) as browser:
        started = browser.get(entry)
        assert started.status_code == 303, started.text[:500]
        for step, form in (("brand", {"brand": "sandbox"}), ("vehicle", {"vin": vin})):
            page = browser.get(f"{server.sandbox}/oauth/consent/{step}")
            match = CSRF.search(page.text)
            assert match, page.text[:500]
            answer = browser.post(
                f"{server.sandbox}/oauth/consent/{step}",
                data={"csrf_token": match.group(1), **form},
            )
            assert answer.status_code == 303, answer.text[:500]
        review = browser.get(f"{server.sandbox}/oauth/consent/review")
        match = CSRF.search(review.text)
        assert match, review.text[:500]
        decided = browser.post(
            f"{server.sandbox}/oauth/consent/review",
            data={"csrf_token": match.group(1), "decision": "approve"},
        )
        assert decided.status_code == 303, decided.text[:500]
    location: str = decided.headers["location"]
    return location
