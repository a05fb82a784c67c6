"""Fixtures shared by the whole suite.

Database-touching tests run on both backends: the `backend` fixture is parametrized
over SQLite and PostgreSQL. PostgreSQL comes from AUTOPORT_TEST_POSTGRES_URL; each test
run gets its own schema, migrated once, and tables are emptied between tests. Without
the server the PostgreSQL leg skips with the reason, unless AUTOPORT_REQUIRE_SERVICES=1
(as in CI), which turns the skip into a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import NoReturn

import httpx
import pytest
import structlog
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.db.tables import metadata
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database, create_database
from autoport.kit.migrate import upgrade_sync

POSTGRES_URL = os.environ.get("AUTOPORT_TEST_POSTGRES_URL", "")
REQUIRE_SERVICES = os.environ.get("AUTOPORT_REQUIRE_SERVICES") == "1"

# The suite builds its own settings. A developer's shell often carries the service's own
# variables (AUTOPORT_PORT from `make run`, AUTOPORT_DATA_DIR, AUTOPORT_LOG_FORMAT...): they
# must not leak into the tests or the servers they start. Only the suite's own stay.
_SUITE_VARIABLES = {
    "AUTOPORT_TEST_POSTGRES_URL",
    "AUTOPORT_REQUIRE_SERVICES",
    "AUTOPORT_REFERENCE_DIR",
    # tests/deployment's load length (docs/operations.md, "Sizing"): read when its module
    # is imported, after this one.
    "AUTOPORT_DEPLOYMENT_LOAD_SECONDS",
}
for _name in [n for n in os.environ if n.startswith("AUTOPORT_") and n not in _SUITE_VARIABLES]:
    del os.environ[_name]


# `-n auto` (addopts): one worker per CPU this process may use and one more, at most this
# many. The one more because the suite waits much of its time (servers and CLIs starting
# in subprocesses, brokers, browsers): on 2 cores, 2 workers kept the CPUs busy about 60 %
# of a 9 min 47 s run (12.7 CPU-minutes in 10.7 minutes), 3 workers ran the same suite in
# 8 min 18 s. Each worker holds PostgreSQL connections (its own pools, the servers its
# tests start): more workers than this on a big machine would mostly add connections.
MAX_WORKERS = 4


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """How many workers `-n auto` starts. `-s` asks to see the tests' output, which xdist's
    workers do not pass on: serially then (`pytest tests/deployment -s` prints the
    figures). PYTEST_XDIST_AUTO_NUM_WORKERS, when set, decides (xdist's own hook)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    if config.option.capture == "no":
        return 0
    return max(1, min(len(os.sched_getaffinity(0)) + 1, MAX_WORKERS))


# Tests that must not run side by side go to one xdist group (`--dist loadgroup`: one
# worker runs a group's tests one after the other; docs/development.md, "Tests"):
# - "heavy": the tests that load the whole machine (the benchmark smoke runs, the
#   deployment under load) and those whose waits assert on the wall clock (the key
#   rotation window, the kill -9 restart within a command's deadline): never two at once.
# - "browser": one Chromium at a time, and a module's server and browser (module-scoped
#   fixtures) started once, on one worker.
# Tests with these markers join the group without saying so; others carry
# `pytest.mark.xdist_group("heavy")` themselves.
GROUP_OF_MARKER = {"deployment": "heavy", "browser": "browser"}


@pytest.hookimpl(trylast=True)  # after xdist's own hook (see _join_group)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for marker, group in GROUP_OF_MARKER.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.xdist_group(group))
        if getattr(config.option, "loadgroup", False):  # an xdist worker under loadgroup
            _join_group(item)


def _join_group(item: pytest.Item) -> None:
    """xdist's loadgroup learns a test's group from its id, `path::name@group`, which its
    worker appends. pytest 9.2 keeps ids structured (`Node._id`) and xdist 3.8.0 still
    writes the old `_nodeid`, so nothing is appended and every group is silently spread
    over all workers (pytest-dev/pytest-xdist#1386). Appended here, as xdist would, until
    a release of xdist does it (then the id already ends with the group: left alone)."""
    from _pytest.nodeid import NodeId

    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                    for mark in item.iter_markers("xdist_group")})  # fmt: skip
    if not names:
        return
    suffix = "@" + "_".join(names)
    if not item.nodeid.endswith(suffix):
        item._id = NodeId.parse(item.nodeid + suffix)


def service_missing(reason: str) -> NoReturn:
    """Skip, or fail when the run requires every service (CI)."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (AUTOPORT_REQUIRE_SERVICES=1)")
    pytest.skip(reason)


async def _postgres_reachable(url: str) -> str | None:
    import asyncpg

    try:
        conn = await asyncpg.connect(url, timeout=5)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    await conn.close()
    return None


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """CLI tests configure structlog to write to CliRunner's stream, which is closed once
    the command ends; later tests must not log into it."""
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied for each test (cheaper than migrating each time)."""
    path = tmp_path_factory.mktemp("template") / "autoport.db"
    upgrade_sync(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_schema() -> Iterator[tuple[str, str]]:
    if not POSTGRES_URL:
        service_missing("PostgreSQL leg: AUTOPORT_TEST_POSTGRES_URL is not set")
    problem = asyncio.run(_postgres_reachable(POSTGRES_URL))
    if problem:
        service_missing(f"PostgreSQL at AUTOPORT_TEST_POSTGRES_URL unreachable: {problem}")
    schema = f"autoport_test_{uuid.uuid4().hex[:12]}"
    upgrade_sync(POSTGRES_URL, schema=schema)
    yield POSTGRES_URL, schema

    async def drop() -> None:
        import asyncpg

        conn = await asyncpg.connect(POSTGRES_URL)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(drop())


async def _empty_postgres_tables(url: str, schema: str) -> None:
    import asyncpg

    names = ", ".join(f'"{schema}"."{table.name}"' for table in metadata.sorted_tables)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
    finally:
        await conn.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _sqlite_settings(tmp_path: Path, template: Path, **overrides: object) -> Settings:
    shutil.copy(template, tmp_path / "autoport.db")
    # No demo sandbox (its vehicles stream all the time); tests/sandbox turn it on.
    overrides.setdefault("sandbox_demo", False)
    return Settings(data_dir=tmp_path, access_log=False, **overrides)  # type: ignore[arg-type]


@pytest.fixture
def settings(
    backend: str, tmp_path: Path, sqlite_template: Path, request: pytest.FixtureRequest
) -> Settings:
    if backend == "sqlite":
        return _sqlite_settings(tmp_path, sqlite_template)
    url, schema = request.getfixturevalue("postgres_schema")
    asyncio.run(_empty_postgres_tables(url, schema))
    return Settings(data_dir=tmp_path, database_url=url, database_schema=schema, access_log=False)


@pytest.fixture
def sqlite_settings(tmp_path: Path, sqlite_template: Path) -> Settings:
    """For tests about behaviour that does not depend on the database backend."""
    return _sqlite_settings(tmp_path, sqlite_template)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
async def database(settings: Settings) -> AsyncIterator[Database]:
    db = create_database(settings.resolved_database_url, schema=settings.database_schema)
    await db.connect()
    try:
        yield db
    finally:
        await db.close()


@contextlib.asynccontextmanager
async def connected_pair(settings: Settings) -> AsyncIterator[tuple[Database, Database]]:
    """Two connected Database objects on the database of `settings`: two pools on
    PostgreSQL, two writers on one SQLite file (two apps, or two processes' connections,
    in one process)."""
    first, second = (
        create_database(settings.resolved_database_url, schema=settings.database_schema)
        for _ in range(2)
    )
    await first.connect()
    await second.connect()
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


@pytest.fixture
async def two_databases(settings: Settings) -> AsyncIterator[tuple[Database, Database]]:
    """`connected_pair` on each backend."""
    async with connected_pair(settings) as pair:
        yield pair


@pytest.fixture
async def two_sqlite_databases(
    sqlite_settings: Settings,
) -> AsyncIterator[tuple[Database, Database]]:
    """`connected_pair` on one SQLite file."""
    async with connected_pair(sqlite_settings) as pair:
        yield pair


async def _running(app: FastAPI) -> AsyncIterator[FastAPI]:
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    async for running in _running(create_app(settings, clock=clock, run_background=False)):
        yield running


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
        yield c


@pytest.fixture
async def embedded_client(
    sqlite_settings: Settings, clock: FrozenClock
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an app on SQLite, for backend-independent behaviour."""
    app = create_app(sqlite_settings, clock=clock, run_background=False)
    async for running in _running(app):
        transport = httpx.ASGITransport(app=running)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            yield c
