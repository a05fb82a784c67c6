"""A live deployment for the operations tests: a real `autoport serve`, a provider
pushing points through POST /v1/ingest in a loop, an application with a vehicle grant
and a webhook whose receiver runs here. SQLite in a data directory, or PostgreSQL in a
schema of its own (and, for restores, a database of its own)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from autoport.config import Settings, stored_secrets
from autoport.ingestion.providers import create_provider
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from autoport.webhooks.signing import verify
from tests.conftest import POSTGRES_URL, service_missing
from tests.factories import AppCredentials, VehicleToken, create_app_credentials, vehicle_token
from tests.helpers.servers import serve, wait_until_up

VIN = "WBA12345678901234"
PROPERTY = "diagnostics.odometer"
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
WEBHOOK_SECRET = "live-webhook-secret-0123456789"


def point_time(i: int) -> str:
    return (BASE_TIME + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


@dataclass
class Backend:
    """Where a deployment keeps its data: the environment of its processes."""

    kind: str
    data_dir: Path
    database_url: str | None = None
    schema: str | None = None

    @property
    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "AUTOPORT_DATA_DIR": str(self.data_dir),
            "AUTOPORT_SANDBOX_DEMO": "false",
            "AUTOPORT_ACCESS_LOG": "false",
            "AUTOPORT_WEBHOOK_ALLOW_LOOPBACK": "true",
            "AUTOPORT_WEBHOOK_RETRY_BASE_SECONDS": "0.2",
        }
        env.pop("AUTOPORT_DATABASE_URL", None)
        env.pop("AUTOPORT_DATABASE_SCHEMA", None)
        if self.database_url:
            env["AUTOPORT_DATABASE_URL"] = self.database_url
        if self.schema:
            env["AUTOPORT_DATABASE_SCHEMA"] = self.schema
        return env

    def settings(self) -> Settings:
        return stored_secrets(
            Settings(
                data_dir=self.data_dir,
                database_url=self.database_url,
                database_schema=self.schema,
                sandbox_demo=False,
            )
        )

    def database(self) -> Database:
        return create_database(self.settings().resolved_database_url, schema=self.schema)

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "autoport", *args],
            env=self.env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        if check and result.returncode != 0:
            raise AssertionError(f"autoport {' '.join(args)}: {result.returncode}\n{result.stderr}")
        return result


def _pg_admin(statement: str) -> None:
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(POSTGRES_URL)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(run())


def new_backend(kind: str, where: Path, request: pytest.FixtureRequest) -> Backend:
    """A new, migrated deployment's storage."""
    if kind == "sqlite":
        return Backend(kind, where)
    if not POSTGRES_URL:
        service_missing("PostgreSQL leg: AUTOPORT_TEST_POSTGRES_URL is not set")
    schema = f"autoport_ops_{uuid.uuid4().hex[:10]}"
    upgrade_sync(POSTGRES_URL, schema=schema)
    request.addfinalizer(lambda: _pg_admin(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    return Backend(kind, where, POSTGRES_URL, schema)


def empty_backend_like(source: Backend, where: Path, request: pytest.FixtureRequest) -> Backend:
    """Where a restore goes: a new data directory (and, on PostgreSQL, a new database
    with nothing in it: pg_restore brings the schema under its own name)."""
    if source.kind == "sqlite":
        return Backend("sqlite", where)
    name = f"autoport_restore_{uuid.uuid4().hex[:10]}"
    _pg_admin(f'CREATE DATABASE "{name}"')
    request.addfinalizer(lambda: _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    parts = urlsplit(POSTGRES_URL)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))
    return Backend("postgresql", where, url, source.schema)


@contextlib.contextmanager
def running(backend: Backend, *args: str) -> Iterator[str]:
    """`autoport serve` on `backend`; its base URL."""
    env = {k: v for k, v in backend.env.items() if k.startswith("AUTOPORT_")}
    env.pop("AUTOPORT_DATA_DIR")
    process, base = serve(backend.data_dir.parent, *args, **env)
    # serve() puts the data in <parent>/data: keep the backend's own directory.
    assert backend.data_dir.name == "data", "backends keep their data in a 'data' directory"
    # Drain its stderr (a pipe): once the pipe is full, the server's next log line
    # would block it.
    log: list[bytes] = []
    assert process.stderr is not None
    drain = threading.Thread(target=lambda: log.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    drain.start()
    try:
        wait_until_up(f"{base}/readyz", process, timeout=60)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        drain.join(timeout=5)


class Receiver:
    """A webhook receiver on loopback: keeps every request's headers and raw body."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def signed_with(self, secret: str) -> list[dict[str, Any]]:
        """The bodies whose X-Svc-Signature-256 verifies with `secret`."""
        return [
            json.loads(body)
            for headers, body in self.requests
            if verify(secret, body, headers.get("x-svc-signature-256"))
        ]


@dataclass
class World:
    """What a deployment's users hold: credentials and tokens issued before a backup
    (or a key rotation), which must keep working after it."""

    admin_token: str
    provider_secret: str
    creds: AppCredentials
    vehicle: VehicleToken
    authorization_id: str
    webhook_secret: str = WEBHOOK_SECRET
    acknowledged: list[int] = field(default_factory=list)


def populate(backend: Backend, base: str, receiver: Receiver) -> World:
    """An admin token, a provider, an application with a vehicle grant and a webhook,
    made the way operators and applications make them (CLI, database factories, the
    token endpoint of the running server)."""
    admin = backend.cli("admin-token", "--rotate").stdout.strip()
    settings = backend.settings()
    assert settings.token_hmac_key is not None

    async def make() -> tuple[str, AppCredentials, VehicleToken]:
        db = backend.database()
        await db.connect()
        try:
            async with db.transaction() as conn:
                _, secret = await create_provider(
                    conn,
                    key=settings.token_hmac_key.get_secret_value().encode(),  # type: ignore[union-attr]
                    environment=Environment.production,
                    name="live",
                    now_us=time.time_ns() // 1000,
                )
            creds = await create_app_credentials(db, properties=[PROPERTY])
            async with httpx.AsyncClient(base_url=base, timeout=30) as client:
                vehicle = await vehicle_token(client, db, creds, vin=VIN)
            return secret, creds, vehicle
        finally:
            await db.close()

    secret, creds, vehicle = asyncio.run(make())
    backend.cli(
        "webhooks", "set", creds.app_id, "--url", receiver.url, "--secret", WEBHOOK_SECRET,
    )  # fmt: skip
    return World(admin, secret, creds, vehicle, vehicle.authorization_id)


class Ingestor(threading.Thread):
    """POST /v1/ingest in a loop, one odometer point per request, each with its own
    timestamp; keeps the indexes the server acknowledged (200) and when."""

    def __init__(self, base: str, provider_secret: str) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.headers = {"Authorization": f"Bearer {provider_secret}"}
        self.acked: list[tuple[int, float]] = []
        self.failed = 0
        self.stop = threading.Event()
        self.next = 0

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=30) as client:
            while not self.stop.is_set():
                i = self.next
                self.next += 1
                body = {
                    "vin": VIN,
                    "brand": "bmw",
                    "diagnostics": {
                        "odometer": {
                            "data": {"unit": "kilometers", "value": float(i)},
                            "timestamp": point_time(i),
                        }
                    },
                }
                try:
                    response = client.post("/v1/ingest", json=body, headers=self.headers)
                except httpx.HTTPError:
                    self.failed += 1
                    continue
                if response.status_code == 200 and response.json()["accepted_count"] == 1:
                    self.acked.append((i, time.monotonic()))
                else:
                    self.failed += 1

    def acknowledged_before(self, moment: float) -> set[int]:
        return {i for i, at in self.acked if at < moment}

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=30)


def history(base: str, token: str, vin: str = VIN) -> set[int]:
    """Every odometer value of the vehicle's history, read page by page through the API
    with the application's vehicle token."""
    values: set[int] = set()
    cursor: str | None = None
    with httpx.Client(base_url=base, timeout=30) as client:
        while True:
            params: dict[str, Any] = {"property": PROPERTY, "limit": 1000}
            if cursor:
                params["cursor"] = cursor
            response = client.get(
                f"/v1/vehicle-data/autoapi-13/{vin}/history",
                params=params,
                headers={"Authorization": f"Bearer {token}"},
            )
            assert response.status_code == 200, response.text
            page = response.json()
            values |= {int(item["data"]["value"]) for item in page["values"]}
            cursor = page.get("next_cursor")
            if not cursor:
                return values
