"""The production topology of deploy/ on this machine, on free ports: three API
processes (`autoport serve --no-workers`), two workers (`autoport worker`), the shipped
nginx configuration terminating TLS with a throwaway certificate, PostgreSQL (a schema
of its own in the running server), Redis for the shared rate limits and a Mosquitto
broker configured by `autoport streaming mosquitto-config`. Every process shares one
PROMETHEUS_MULTIPROC_DIR, as the systemd units do."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import getpass
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# Re-exported: bench/_soak_stack.py takes it from here.
from tests.helpers.ports import free_port as free_port

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1 and localhost (item 6: nginx terminates
    TLS with it; clients trust exactly it)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "autoport deployment test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def render_nginx_site(api_ports: list[int], https_port: int, cert: Path, key: Path) -> str:
    """deploy/nginx/autoport.conf with this run's ports and certificate: the upstream
    servers, the TLS listener on loopback, no port-80 server (the test has no port 80)."""
    site = (DEPLOY / "nginx" / "autoport.conf").read_text()
    servers = "".join(
        f"    server 127.0.0.1:{port} max_fails=1 fail_timeout=2s;\n" for port in api_ports
    )
    site, count = re.subn(r"(    server 127\.0\.0\.1:808\d [^\n]*\n)+", servers, site)
    assert count == 1, "deploy/nginx/autoport.conf: the upstream servers were not found"
    # The redirecting server on port 80 is left out.
    site, count = re.subn(r"server \{\n    listen 80;.*?\n\}\n", "", site, flags=re.S)
    assert count == 1, "deploy/nginx/autoport.conf: the port-80 server was not found"
    site = site.replace("    listen [::]:443 ssl http2;\n", "")
    site = site.replace("listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;")
    site = site.replace("/etc/autoport/tls/fullchain.pem", str(cert))
    site = site.replace("/etc/autoport/tls/privkey.pem", str(key))
    assert str(https_port) in site and str(cert) in site
    return site


def nginx_main_config(directory: Path, site: Path) -> str:
    """What /etc/nginx/nginx.conf provides on Debian, pointed at this run's directory."""
    user = f"user {getpass.getuser()};\n" if os.geteuid() == 0 else ""
    temp = "\n".join(
        f"    {kind}_temp_path {directory / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""{user}worker_processes 1;
daemon off;
pid {directory / "nginx.pid"};
error_log {directory / "error.log"} warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
{temp}
    include {site};
}}
"""


@dataclass
class Process:
    name: str
    args: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def start(self) -> None:
        out = self.log.open("ab")
        try:
            self.popen = subprocess.Popen(
                self.args, env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO
            )
        finally:
            out.close()
        self.starts += 1

    def kill(self) -> None:
        assert self.popen is not None
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(timeout=10)

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=10)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def tail(self, chars: int = 3000) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-chars:]
        return ""


@dataclass
class Topology:
    root: Path
    postgres_url: str
    redis_url: str
    schema: str = field(default_factory=lambda: f"autoport_deploy_{uuid.uuid4().hex[:10]}")
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    https_port: int = field(default_factory=free_port)
    mqtt_port: int = field(default_factory=free_port)
    api_ports: list[int] = field(default_factory=lambda: [free_port() for _ in range(3)])
    apis: list[Process] = field(default_factory=list)
    workers: list[Process] = field(default_factory=list)
    nginx: Process | None = None
    mosquitto: Process | None = None
    cert: Path | None = None

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    @property
    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("AUTOPORT_", "PROMETHEUS_"))
        }
        env.update(
            {
                "PYTHONPATH": str(REPO),
                "AUTOPORT_DATA_DIR": str(self.root / "data"),
                "AUTOPORT_DATABASE_URL": self.postgres_url,
                "AUTOPORT_DATABASE_SCHEMA": self.schema,
                "AUTOPORT_DATABASE_POOL_SIZE": "5",
                "AUTOPORT_BASE_URL": self.base_url,
                "AUTOPORT_SANDBOX_BASE_URL": f"{self.base_url}/sandbox",
                "AUTOPORT_FORWARDED_ALLOW_IPS": "127.0.0.1",
                "AUTOPORT_TOKEN_HMAC_KEY": "deployment-test-" + "k" * 32,
                "AUTOPORT_SESSION_SECRET": "deployment-test-" + "s" * 32,
                "AUTOPORT_ADMIN_TOKEN": self.admin_token,
                "AUTOPORT_REDIS_URL": self.redis_url,
                "AUTOPORT_MQTT_URL": f"mqtt://127.0.0.1:{self.mqtt_port}",
                "AUTOPORT_MQTT_CONFIG_DIR": str(self.root / "mosquitto"),
                "PROMETHEUS_MULTIPROC_DIR": str(self.root / "metrics"),
                "AUTOPORT_LOG_FORMAT": "json",
                "AUTOPORT_LOG_LEVEL": "warning",
                "AUTOPORT_ACCESS_LOG": "false",
                "AUTOPORT_SANDBOX_DEMO": "false",
                # The receiver listens on loopback over http.
                "AUTOPORT_WEBHOOK_ALLOW_LOOPBACK": "true",
                # Claims of a killed worker come back within seconds (lease > timeout).
                "AUTOPORT_WEBHOOK_TIMEOUT_SECONDS": "2",
                "AUTOPORT_WEBHOOK_LEASE_SECONDS": "5",
                "AUTOPORT_WEBHOOK_DELIVERIES_KEPT": "1000",
                "AUTOPORT_FLEET_WORKER_INTERVAL_SECONDS": "0.2",
                "AUTOPORT_FLEET_WORKER_LEASE_SECONDS": "5",
                "AUTOPORT_SANDBOX_CONNECTOR_CLEARANCE_DELAY_SECONDS": "0.3",
                "AUTOPORT_SANDBOX_CONNECTOR_REMOVAL_DELAY_SECONDS": "0.3",
                # The load is the test's, from one address: the limits must not shape it.
                "AUTOPORT_VEHICLE_DATA_RATE_LIMIT": "1000000/minute",
                "AUTOPORT_OAUTH_TOKEN_IP_RATE_LIMIT": "100000/minute",
                "AUTOPORT_OAUTH_TOKEN_CLIENT_RATE_LIMIT": "100000/minute",
            }
        )
        return env

    def autoport(self, *args: str, as_json: bool = True) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "autoport", *args, *(["--json"] if as_json else [])],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=REPO,
        )
        assert done.returncode == 0, f"autoport {' '.join(args)}: {done.stderr[-2000:]}"
        return json.loads(done.stdout) if as_json else done.stdout

    # ------------------------------------------------------------------ start

    async def start(self) -> None:
        for name in ("data", "metrics", "mosquitto", "nginx", "logs"):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        # The upgrade procedure: migrations once, by one process, before any replica.
        self.autoport("migrate")
        await self._start_mosquitto()
        for index, port in enumerate(self.api_ports):
            api = self._process(
                f"api{index}", "serve", "--no-workers", "--host", "127.0.0.1", "--port", str(port)
            )
            self.apis.append(api)
            api.start()
        for index in range(2):
            worker = self._process(f"worker{index}", "worker")
            self.workers.append(worker)
            worker.start()
        await asyncio.gather(*(self.wait_ready(api) for api in self.apis))
        self._start_nginx()
        await self._wait_for_port(self.https_port, self.nginx)

    def _process(self, name: str, *args: str) -> Process:
        return Process(
            name,
            [sys.executable, "-m", "autoport", *args],
            self.env,
            self.root / "logs" / f"{name}.log",
        )

    async def _start_mosquitto(self) -> None:
        directory = self.root / "mosquitto"
        user = ["--user", getpass.getuser()] if os.geteuid() == 0 else []
        self.autoport(
            "streaming",
            "mosquitto-config",
            "--dir",
            str(directory),
            "--port",
            str(self.mqtt_port),
            *user,
            as_json=False,
        )
        self.mosquitto = Process(
            "mosquitto",
            [MOSQUITTO, "-c", str(directory / "mosquitto.conf")],
            self.env,
            self.root / "logs" / "mosquitto.log",
        )
        self.mosquitto.start()
        await self._wait_for_port(self.mqtt_port, self.mosquitto)

    def _start_nginx(self) -> None:
        directory = self.root / "nginx"
        self.cert, key = self_signed_certificate(directory)
        site = directory / "autoport.conf"
        site.write_text(render_nginx_site(self.api_ports, self.https_port, self.cert, key))
        main = directory / "nginx.conf"
        main.write_text(nginx_main_config(directory, site))
        self.nginx = Process(
            "nginx",
            [NGINX, "-c", str(main), "-e", str(directory / "error.log"), "-p", str(directory)],
            self.env,
            self.root / "logs" / "nginx.log",
        )
        self.nginx.start()

    async def _wait_for_port(self, port: int, process: Process | None, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process is not None and not process.alive():
                raise AssertionError(f"{process.name} exited: {process.tail()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"nothing listens on port {port} after {timeout} s")

    async def wait_ready(self, api: Process, timeout: float = 60) -> None:
        """Until the replica's own /readyz answers 200 (as a load balancer probes)."""
        import aiohttp

        port = self.api_ports[self.apis.index(api)]
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if not api.alive():
                    raise AssertionError(f"{api.name} exited: {api.tail()}")
                with contextlib.suppress(aiohttp.ClientError, OSError, asyncio.TimeoutError):
                    async with session.get(
                        f"http://127.0.0.1:{port}/readyz", timeout=aiohttp.ClientTimeout(total=2)
                    ) as answer:
                        if answer.status == 200:
                            return
                await asyncio.sleep(0.1)
        raise AssertionError(f"{api.name} not ready after {timeout} s: {api.tail()}")

    # ------------------------------------------------------------------ stop

    async def stop(self) -> None:
        for process in [*self.apis, *self.workers, self.nginx, self.mosquitto]:
            if process is not None:
                process.stop()
        await self._drop_schema()

    async def _drop_schema(self) -> None:
        import asyncpg

        with contextlib.suppress(Exception):
            conn = await asyncpg.connect(self.postgres_url)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
            finally:
                await conn.close()

    def logs(self) -> str:
        parts = []
        for process in [*self.apis, *self.workers, self.nginx, self.mosquitto]:
            if process is not None:
                parts.append(f"--- {process.name} ---\n{process.tail(1500)}")
        error_log = self.root / "nginx" / "error.log"
        if error_log.exists():
            parts.append(f"--- nginx error.log ---\n{error_log.read_text()[-1500:]}")
        return "\n".join(parts)
