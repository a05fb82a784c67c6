"""Streaming fixtures: applications and grants as rows, outbox events written exactly as
ingestion writes them, a live uvicorn server, and a real Mosquitto on a free port.

Callers come from ONE fixture, `tokens`, which installs a test authenticator until the
oauth branch provides real client_credentials tokens (swap it there, in one place).
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import secrets
import shutil
import signal
import socket
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
import uvicorn
from fastapi import FastAPI, Request

from autoport.app import create_app
from autoport.config import Settings, ensure_secrets
from autoport.kit import outbox
from autoport.kit.auth import Caller, CallerKind, Grant, GrantStatus
from autoport.kit.clock import Clock, now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.streaming import mosquitto, repository
from tests.conftest import service_missing

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
HOUR_US = 3_600_000_000


def new_app_id() -> str:
    return secrets.token_hex(12).upper()


def new_vin() -> str:
    return "WSTREAM" + secrets.token_hex(5).upper()


async def create_application(
    db: Database,
    *,
    environment: Environment = Environment.sandbox,
    properties: list[str] | None = None,
) -> str:
    app_id = new_app_id()
    now = now_us()
    async with db.transaction() as conn:
        account = "ACC" + app_id
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES (:id, :env, 'test', :now)",
            {"id": account, "env": str(environment), "now": now},
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, "
            "client_type, redirect_uris, properties, brands, created_at) VALUES "
            "(:id, :env, :account, :client, 'test app', 'confidential', '[]', :props, "
            "'[\"sandbox\"]', :now)",
            {
                "id": app_id,
                "env": str(environment),
                "account": account,
                "client": "client-" + app_id,
                "props": orjson.dumps(properties or []).decode(),
                "now": now,
            },
        )
    return app_id


async def grant_consent(
    db: Database,
    *,
    application_id: str,
    vin: str,
    properties: list[str],
    environment: Environment = Environment.sandbox,
    status: str = "approved",
    valid_from: int | None = None,
    valid_until: int | None = None,
) -> str:
    auth_id = secrets.token_hex(8)
    now = now_us()
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO authorizations (id, environment, application_id, vin, brand, "
            "properties, status, subject, valid_from, valid_until, created_at, updated_at) "
            "VALUES (:id, :env, :app, :vin, 'sandbox', :props, :status, 'owner', :from_, "
            ":until, :now, :now)",
            {
                "id": auth_id,
                "env": str(environment),
                "app": application_id,
                "vin": vin,
                "props": orjson.dumps(properties).decode(),
                "status": status,
                "from_": valid_from if valid_from is not None else now - HOUR_US,
                "until": valid_until,
                "now": now,
            },
        )
    return auth_id


async def set_consent_status(
    db: Database, authorization_id: str, status: str, *, at_us: int | None = None
) -> None:
    """What oauth's set_authorization_status does: the row changes and
    `authorization_changed` is emitted in the same transaction."""
    async with db.transaction() as conn:
        row = await conn.fetch_one(
            "UPDATE authorizations SET status = :status WHERE id = :id "
            "RETURNING environment, application_id, vin",
            {"status": status, "id": authorization_id},
        )
        assert row is not None
        await outbox.emit(
            conn,
            environment=Environment(row["environment"]),
            event_type="authorization_changed",
            payload={"action": status, "authorization_id": authorization_id, "detail": None},
            now_us=at_us if at_us is not None else now_us(),
            vin=row["vin"],
            application_id=row["application_id"],
        )


async def clear_fleet_vehicle(
    db: Database,
    *,
    application_id: str,
    vin: str,
    environment: Environment = Environment.sandbox,
    status: str = "approved",
) -> None:
    now = now_us()
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO fleet_vehicles (environment, application_id, vin, brand, status, "
            "tags, changelog, inserted_at, updated_at) VALUES (:env, :app, :vin, 'sandbox', "
            ":status, '[]', '[]', :now, :now)",
            {
                "env": str(environment),
                "app": application_id,
                "vin": vin,
                "status": status,
                "now": now,
            },
        )


async def ingest(
    db: Database,
    *,
    vin: str,
    data: dict[str, Any],
    environment: Environment = Environment.sandbox,
    at_us: int | None = None,
) -> None:
    """The outbox row exactly as ingestion writes it (contracts.md)."""
    async with db.transaction() as conn:
        await outbox.emit(
            conn,
            environment=environment,
            event_type="vehicle_data_changed",
            payload={"vin": vin, "brand": "sandbox", "data": data},
            now_us=at_us if at_us is not None else now_us(),
            vin=vin,
        )


def point(value: Any, at: str = "2026-11-23T10:00:00.000000Z") -> list[dict[str, Any]]:
    return [{"data": value, "timestamp": at}]


async def stored_messages(db: Database, application_id: str) -> list[tuple[int, dict[str, Any]]]:
    rows = await db.fetch_all(
        "SELECT seq, message FROM stream_messages WHERE application_id = :app ORDER BY seq",
        {"app": application_id},
    )
    return [(row["seq"], orjson.loads(row["message"])) for row in rows]


# ---------------------------------------------------------------- authentication


@dataclass
class StreamTokens:
    """Test bearer tokens -> Callers built from the application rows."""

    database: Callable[[], Database]
    issued: dict[str, tuple[str, CallerKind, frozenset[str]]]

    def application(self, application_id: str, scopes: str = "vehicle:data") -> str:
        token = "test-app-" + secrets.token_hex(8)
        self.issued[token] = (application_id, CallerKind.application, frozenset(scopes.split()))
        return token

    def vehicle(self, application_id: str) -> str:
        token = "test-vehicle-" + secrets.token_hex(8)
        self.issued[token] = (application_id, CallerKind.vehicle, frozenset({"vehicle:data"}))
        return token

    async def authenticate(self, request: Request, environment: Environment) -> Caller:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        entry = self.issued.get(token.strip()) if scheme.lower() == "bearer" else None
        if entry is None:
            raise ApiError(401, "the access token is not valid", source="Authorization")
        application_id, kind, scopes = entry
        row = await self.database().fetch_one(
            "SELECT environment, client_id, properties FROM applications WHERE id = :id",
            {"id": application_id},
        )
        if row is None or row["environment"] != str(environment):
            raise ApiError(401, "the access token is not valid", source="Authorization")
        properties = frozenset(orjson.loads(row["properties"]))
        grant = None
        if kind is CallerKind.vehicle:
            grant = Grant("auth", "VIN", properties, GrantStatus.approved, 0, None)
        return Caller(
            environment=environment,
            kind=kind,
            application_id=application_id,
            client_id=row["client_id"],
            scopes=scopes,
            application_properties=properties,
            grant=grant,
        )


def install_tokens(app: FastAPI) -> StreamTokens:
    tokens = StreamTokens(database=lambda: app.state.autoport.database, issued={})
    app.state.authenticator = tokens.authenticate
    return tokens


@pytest.fixture
def tokens(app: FastAPI) -> StreamTokens:
    """THE test authenticator of the ASGI `app` fixture (see module docstring)."""
    return install_tokens(app)


# ---------------------------------------------------------------- live server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    app: FastAPI
    base_url: str
    tokens: StreamTokens

    @property
    def database(self) -> Database:
        db: Database = self.app.state.autoport.database
        return db


@contextlib.asynccontextmanager
async def live_server(settings: Settings) -> AsyncIterator[LiveServer]:
    """A real uvicorn server in this event loop (httpx's ASGI transport buffers streams),
    with the streaming workers running on the real clock."""
    app = create_app(settings, clock=Clock(), run_background=True)
    tokens = install_tokens(app)
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", access_log=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start"
    try:
        yield LiveServer(app, f"http://127.0.0.1:{port}", tokens)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)


# ---------------------------------------------------------------- Mosquitto


@dataclass
class Broker:
    directory: Path
    port: int
    settings: Settings
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    async def write_config(self, db: Database) -> None:
        rows = await repository.mqtt_credentials(db.reader)
        run_as = getpass.getuser() if os.geteuid() == 0 else None
        files = mosquitto.render(
            self.settings,
            directory=self.directory,
            applications=rows,
            port=self.port,
            run_as=run_as,
        )
        mosquitto.write(files, self.directory)

    async def start(self) -> None:
        self.process = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.directory / "mosquitto.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(300):
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"mosquitto exited: {err}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            await asyncio.sleep(0.02)
        raise RuntimeError("mosquitto did not open its port")

    def reload(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGHUP)

    async def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        for _ in range(250):
            if self.process.poll() is not None:
                break
            await asyncio.sleep(0.02)
        else:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


async def issue_credentials(db: Database, application_id: str) -> str:
    """What `autoport streaming credentials` does: a new password, only its hash kept."""
    environment = await repository.application_environment(db.reader, application_id)
    assert environment is not None
    password = mosquitto.new_password()
    async with db.transaction() as conn:
        await repository.store_mqtt_password(
            conn,
            environment=environment,
            application_id=application_id,
            password_hash=mosquitto.password_hash(password),
            now_us=now_us(),
        )
    return password


@pytest.fixture
def mqtt_settings(settings: Settings) -> Settings:
    if not os.path.exists(MOSQUITTO):
        service_missing(f"Mosquitto broker binary not found at {MOSQUITTO}")
    port = free_port()
    configured, _ = ensure_secrets(
        settings.model_copy(update={"mqtt_url": f"mqtt://127.0.0.1:{port}"})
    )
    return configured


@pytest.fixture
async def broker(mqtt_settings: Settings, tmp_path: Path) -> AsyncIterator[Broker]:
    assert mqtt_settings.mqtt_url is not None
    port = int(mqtt_settings.mqtt_url.rsplit(":", 1)[1])
    broker = Broker(tmp_path / "mosquitto", port, mqtt_settings)
    try:
        yield broker
    finally:
        await broker.stop()
