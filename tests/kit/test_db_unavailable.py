"""The database going away for a moment (PostgreSQL restarting, connections cut, SQLite
locked by another process) is a 503 with Retry-After in the errors shape, logged once,
and the service recovers by itself: never a 500.

PostgreSQL is restarted for real: each test starts its own throwaway cluster (initdb and
pg_ctl of the installed server, as the postgres user when run as root), never the
shared server."""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings, rotate_admin_token
from autoport.kit.db import SqliteDatabase
from autoport.kit.logging import OutageGate
from autoport.kit.migrate import upgrade_sync
from tests.conftest import service_missing
from tests.factories import bearer, client_credentials_token, create_app_credentials
from tests.helpers.ports import free_port

VIN = "1HGCM82633A004352"


@dataclass
class Cluster:
    directory: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *args: str) -> None:
        _as_postgres([_binary("pg_ctl"), "-D", str(self.directory / "data"), *args])

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.pg_ctl("-l", str(self.directory / "log"), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("-m", mode, "-w", "stop")


def _binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        service_missing(f"no PostgreSQL server binaries ({name}) for a throwaway cluster")
    return found[-1]


def _as_postgres(command: list[str]) -> None:
    if os.geteuid() == 0:  # the server refuses to run as root
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, check=True, capture_output=True, timeout=60)


@pytest.fixture
def own_postgres() -> Iterator[Cluster]:
    initdb = _binary("initdb")
    # Not under pytest's tmp_path: its parents are private to this user.
    directory = Path(tempfile.mkdtemp(prefix="autoport-pg-"))
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    cluster = Cluster(directory, free_port())
    try:
        _as_postgres(
            [initdb, "-D", str(directory / "data"), "-A", "trust", "-U", "postgres", "--no-sync"]
        )
        cluster.start()
        upgrade_sync(cluster.url)
        yield cluster
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):  # not running
            cluster.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def outage_log() -> Iterator[list[MutableMapping[str, Any]]]:
    """What is logged, through a fresh once-per-outage gate as configure_logging has it."""
    with structlog.testing.capture_logs(processors=[OutageGate()]) as logs:
        yield logs


@contextlib.asynccontextmanager
async def served(settings: Settings) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            yield app, c


def assert_unavailable(response: httpx.Response, *, oauth: bool = False) -> None:
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) > 0
    body = response.json()
    if oauth:
        assert body["error"] == "temporarily_unavailable"
    else:
        assert body["request_id"] == response.headers["x-request-id"]
        assert body["errors"][0]["source"] == "database"


async def test_postgres_restart_is_503_then_recovers(
    own_postgres: Cluster, tmp_path: Path, outage_log: list[dict[str, object]]
) -> None:
    settings = Settings(
        data_dir=tmp_path, database_url=own_postgres.url, access_log=False, sandbox_demo=False
    )
    async with served(settings) as (app, client):
        creds = await create_app_credentials(app.state.autoport.database)
        token = await client_credentials_token(client, creds)
        admin = bearer(rotate_admin_token(app.state.autoport.settings))
        token_form = {"grant_type": "client_credentials", **creds.auth()}

        async def requests() -> list[tuple[httpx.Response, bool]]:
            return [
                (await client.post("/v1/access_tokens", data=token_form), True),
                (await client.get("/admin/v1/accounts", headers=admin), False),
                # The hot pull route (answered outside FastAPI) and a FastAPI data route.
                (
                    await client.get(f"/v1/vehicle-data/autoapi-13/{VIN}", headers=bearer(token)),
                    False,
                ),
                (await client.get("/v1/fleets/vehicles", headers=bearer(token)), False),
            ]

        for response, _ in await requests():
            assert response.status_code < 500, response.text

        own_postgres.stop()  # connections cut, new ones refused
        for _ in range(3):
            for response, oauth in await requests():
                assert_unavailable(response, oauth=oauth)
        ready = await client.get("/readyz")
        assert ready.status_code == 503 and ready.headers["retry-after"]

        own_postgres.start()
        # The pool reconnects by itself: the same requests work again, with no 500 between.
        deadline = time.monotonic() + 10
        while True:
            answers = await requests()
            assert all(r.status_code < 500 or r.status_code == 503 for r, _ in answers)
            if all(r.status_code < 500 for r, _ in answers):
                break
            assert time.monotonic() < deadline, [r.text for r, _ in answers]
            await asyncio.sleep(0.2)
        assert (await client.get("/readyz")).status_code == 200
    warnings = [line for line in outage_log if "database unavailable" in str(line["event"])]
    assert len(warnings) == 1, outage_log  # 12+ failed requests, one line


async def test_cut_connections_are_replaced(own_postgres: Cluster, tmp_path: Path) -> None:
    # pg_terminate_backend (what an admin or a failover does to open connections): the
    # next requests may see 503 at worst, then the pool has fresh connections.
    import asyncpg

    settings = Settings(
        data_dir=tmp_path, database_url=own_postgres.url, access_log=False, sandbox_demo=False
    )
    async with served(settings) as (app, client):
        admin = bearer(rotate_admin_token(app.state.autoport.settings))
        assert (await client.get("/admin/v1/accounts", headers=admin)).status_code == 200
        killer = await asyncpg.connect(own_postgres.url)
        try:
            killed = await killer.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = 'autoport' AND pid <> pg_backend_pid()"
            )
        finally:
            await killer.close()
        assert killed >= 1
        statuses: list[int] = []
        deadline = time.monotonic() + 5
        while not statuses or statuses[-1] != 200:
            assert time.monotonic() < deadline, statuses
            statuses.append((await client.get("/admin/v1/accounts", headers=admin)).status_code)
        assert set(statuses) <= {200, 503}, statuses


async def test_sqlite_locked_by_another_process_is_503(
    sqlite_settings: Settings, outage_log: list[dict[str, object]]
) -> None:
    async with served(sqlite_settings) as (app, client):
        database = app.state.autoport.database
        assert isinstance(database, SqliteDatabase)
        database.lock_timeout = 0.2
        admin = bearer(rotate_admin_token(app.state.autoport.settings))
        other = sqlite3.connect(database.path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            for _ in range(3):
                assert_unavailable(
                    await client.post("/admin/v1/accounts", json={"name": "x"}, headers=admin)
                )
            other.execute("ROLLBACK")
            created = await client.post("/admin/v1/accounts", json={"name": "x"}, headers=admin)
            assert created.status_code == 201, created.text
        finally:
            other.close()
    assert len([line for line in outage_log if "database unavailable" in str(line["event"])]) == 1


def test_shutting_down_and_lost_connections_count_as_unavailable() -> None:
    # The errors asyncpg raises while a server shuts down or restarts, by their classes.
    import asyncpg

    from autoport.kit.db import _postgres_unavailable

    unavailable = [
        asyncpg.exceptions.CannotConnectNowError("the database system is shutting down"),
        asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator"),
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"),
        asyncpg.exceptions.InterfaceError("connection is closed"),
        asyncpg.exceptions.InternalClientError(
            "cannot switch to state 12; another operation (2) is in progress"
        ),
        ConnectionRefusedError(111, "Connect call failed"),
        OSError("Multiple exceptions: [Errno 111] Connect call failed"),
    ]
    assert all(_postgres_unavailable(error) for error in unavailable)
    statement_errors = [
        asyncpg.exceptions.UniqueViolationError("duplicate key"),
        asyncpg.exceptions.InterfaceError("another operation is in progress"),
        ValueError("x"),
    ]
    assert not any(_postgres_unavailable(error) for error in statement_errors)
