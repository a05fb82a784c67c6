"""Streaming fixtures: real applications (autoport.apps) and grants as the consent flow
stores them, outbox events written exactly as ingestion writes them, a live uvicorn
server, and a real Mosquitto on a free port.

Callers hold real tokens from the token endpoint (`StreamTokens`), checked by the real
bearer authenticator; grant status changes go through `set_authorization_status`.
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
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings, ensure_secrets
from autoport.kit import outbox
from autoport.kit.clock import Clock, now_us
from autoport.kit.crypto import new_token, token_hash
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.oauth import repository as oauth_repository
from autoport.oauth import service as oauth_service
from autoport.oauth.tokens import ACCESS_PREFIX
from autoport.streaming import mosquitto, repository
from tests.conftest import service_missing
from tests.factories import (
    AppCredentials,
    client_credentials_token,
    create_app_credentials,
    vehicle_token,
)
from tests.helpers.ports import free_port
from tests.helpers.servers import uvicorn_in_loop

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
HOUR_US = 3_600_000_000


def new_vin() -> str:
    return "WSTREAM" + secrets.token_hex(5).upper()


# Client secrets are shown once: the credentials of every application created here, by
# id, so a test can later ask the token endpoint for its tokens.
CREDENTIALS: dict[str, AppCredentials] = {}


async def create_application(
    db: Database,
    *,
    environment: Environment = Environment.sandbox,
    properties: list[str] | None = None,
) -> str:
    """A real application (autoport.apps.service), brand sandbox (bmw in production,
    where the sandbox brand does not exist); returns its id."""
    brand = "sandbox" if environment is Environment.sandbox else "bmw"
    creds = await create_app_credentials(
        db, environment=environment, properties=properties or [], brands=[brand]
    )
    CREDENTIALS[creds.app_id] = creds
    return creds.app_id


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
    """The owner's decision or revocation through the authorization server: the row
    changes, its tokens end, `authorization_changed` is emitted in one transaction."""
    environment = await db.fetch_value(
        "SELECT environment FROM authorizations WHERE id = :id", {"id": authorization_id}
    )
    assert environment is not None
    async with db.transaction() as conn:
        await oauth_service.set_authorization_status(
            conn,
            environment=Environment(environment),
            authorization_id=authorization_id,
            status=status,
            now_us=at_us if at_us is not None else now_us(),
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
    """The outbox row exactly as ingestion writes it (autoport.ingestion.service)."""
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
    """Real tokens of applications made by `create_application`, from the token endpoint
    of `app` (over ASGI, or over HTTP at `base_url` for a live server)."""

    app: FastAPI
    base_url: str | None = None

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        if self.base_url is not None:
            async with httpx.AsyncClient(base_url=self.base_url, timeout=10) as client:
                yield client
            return
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            yield c

    async def application(self, application_id: str) -> str:
        """A client_credentials access token."""
        async with self._client() as client:
            return await client_credentials_token(client, CREDENTIALS[application_id])

    async def vehicle(self, application_id: str) -> str:
        """A consent access token (authorization + code + exchange) for a new VIN."""
        creds = CREDENTIALS[application_id]
        async with self._client() as client:
            issued = await vehicle_token(
                client,
                self.app.state.autoport.database,
                creds,
                vin=new_vin(),
                properties=["charging.battery_level"],
                now_us=self.app.state.autoport.clock.now_us(),
            )
        return issued.access_token

    async def stored(self, application_id: str, *, scopes: str) -> str:
        """An access-token row as the authorization server stores it, with scopes no grant
        hands out today (to prove the stream checks scopes itself)."""
        state = self.app.state.autoport
        creds = CREDENTIALS[application_id]
        token = new_token(ACCESS_PREFIX)
        now = state.clock.now_us()
        async with state.database.transaction() as conn:
            await oauth_repository.create_token(
                conn,
                {
                    "token_hash": token_hash(state.token_key, token),
                    "environment": str(creds.environment),
                    "kind": oauth_repository.ACCESS,
                    "application_id": application_id,
                    "authorization_id": None,
                    "family_id": None,
                    "scopes": scopes,
                    "created_at": now,
                    "expires_at": now + HOUR_US,
                },
            )
        return token


@pytest.fixture
def tokens(app: FastAPI) -> StreamTokens:
    """Real tokens for the ASGI `app` fixture."""
    return StreamTokens(app)


# ---------------------------------------------------------------- live server


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
async def live_server(settings: Settings, clock: Clock | None = None) -> AsyncIterator[LiveServer]:
    """A real uvicorn server in this event loop (httpx's ASGI transport buffers streams),
    with the streaming workers running on the real clock (or on `clock`)."""
    app = create_app(settings, clock=clock or Clock(), run_background=True)
    async with uvicorn_in_loop(app, lifespan="on", access_log=False) as served:
        yield LiveServer(app, served.base_url, StreamTokens(app, served.base_url))


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
        rows = await repository.list_mqtt_credentials(db.reader)
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
        await self.wait_for_port(self.port)

    async def wait_for_port(self, port: int) -> None:
        """Until the started broker accepts connections on `port` (any of its listeners)."""
        assert self.process is not None
        for _ in range(300):
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"mosquitto exited: {err}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), timeout=0.2),
            ):
                return
            await asyncio.sleep(0.02)
        raise RuntimeError(f"mosquitto did not open port {port}")

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
    environment = await repository.get_application_environment(db.reader, application_id)
    assert environment is not None
    password = mosquitto.new_password()
    async with db.transaction() as conn:
        await repository.create_mqtt_password(
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
