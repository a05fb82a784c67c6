"""Migrations run up from empty on both backends and match the tables in code."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from autoport.config import Settings
from autoport.db.tables import metadata
from autoport.kit.db import Database, create_database
from autoport.kit.migrate import alembic_config, current_revisions, expected_heads, upgrade_sync
from tests.conftest import POSTGRES_URL, service_missing


def test_migrations_form_one_line_named_by_revision() -> None:
    """Two branches once both added a 0009: one head, and each file's number is its
    revision, so such a clash fails here instead of at someone's upgrade."""
    scripts = ScriptDirectory.from_config(alembic_config())
    assert len(scripts.get_heads()) == 1, f"more than one head: {scripts.get_heads()}"
    revisions = list(scripts.walk_revisions())
    for script in revisions:
        name = Path(script.path).name
        assert name.startswith(f"{script.revision}_"), f"{name} holds revision {script.revision}"
    numbers = sorted(int(script.revision) for script in revisions)
    assert numbers == list(range(1, len(numbers) + 1)), f"revisions are not 0001..N: {numbers}"


async def test_database_is_at_the_expected_heads(database: Database) -> None:
    assert await current_revisions(database) == expected_heads()
    for table in metadata.sorted_tables:
        # Every table exists and can be read.
        await database.fetch_all(f"SELECT * FROM {table.name} LIMIT 1")  # noqa: S608


def test_sqlite_migrations_match_the_tables_in_code(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    upgrade_sync(f"sqlite:///{path}")
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), metadata)
    engine.dispose()
    assert diff == [], f"tables and migrations differ: {diff}"


async def test_postgres_migrations_match_the_tables_in_code(
    postgres_schema: tuple[str, str],
) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    url, schema = postgres_schema
    engine = create_async_engine(
        url.replace("postgresql://", "postgresql+asyncpg://", 1),
        connect_args={"server_settings": {"search_path": schema}},
    )
    async with engine.connect() as connection:
        diff = await connection.run_sync(
            lambda sync: compare_metadata(MigrationContext.configure(sync), metadata)
        )
    await engine.dispose()
    # The history's day partitions are made by the worker, not by migrations.
    diff = [d for d in diff if not _is_history_partition(d)]
    assert diff == [], f"tables and migrations differ: {diff}"


def _is_history_partition(difference: tuple[object, ...]) -> bool:
    table = getattr(difference[1], "table", difference[1])
    return str(getattr(table, "name", "")).startswith("history_chunks_")


def test_migrating_twice_is_a_no_op(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'twice.db'}"
    upgrade_sync(url)
    upgrade_sync(url)

    async def revisions() -> frozenset[str]:
        db = create_database(url)
        await db.connect()
        try:
            return await current_revisions(db)
        finally:
            await db.close()

    assert asyncio.run(revisions()) == expected_heads()


async def test_readyz_is_ready_on_a_migrated_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["migrations"] == sorted(expected_heads())


async def test_readyz_is_503_before_migrations(tmp_path: Path) -> None:
    from autoport.app import create_app

    settings = Settings(data_dir=tmp_path / str(uuid.uuid4()), access_log=False)
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["errors"][0]["source"] == "migrations"
    assert "autoport migrate" in response.json()["errors"][0]["detail"]


async def _downgrade(url: str, schema: str | None, revision: str) -> None:
    from alembic import command
    from sqlalchemy.engine import Connection as SyncConnection
    from sqlalchemy.ext.asyncio import create_async_engine

    from autoport.kit.migrate import alembic_config

    def run(connection: SyncConnection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, revision)

    if url.startswith("sqlite:"):
        engine = create_engine(url)
        with engine.begin() as connection:
            run(connection)
        engine.dispose()
        return
    async_engine = create_async_engine(
        url.replace("postgresql://", "postgresql+asyncpg://", 1),
        connect_args={"server_settings": {"search_path": schema or "public"}},
    )
    async with async_engine.begin() as async_connection:
        await async_connection.run_sync(run)
    await async_engine.dispose()


@pytest.mark.parametrize("backend_name", ["sqlite", "postgresql"])
async def test_0009_keeps_existing_applications_and_goes_down_again(
    tmp_path: Path, backend_name: str
) -> None:
    """url_scheme is added to applications that exist (as None) and removed again."""
    from autoport.apps import repository
    from autoport.kit.environments import Environment
    from autoport.kit.migrate import upgrade

    schema: str | None = None
    if backend_name == "sqlite":
        url = f"sqlite:///{tmp_path / 'steps.db'}"
    else:
        if not POSTGRES_URL:
            service_missing("PostgreSQL leg: AUTOPORT_TEST_POSTGRES_URL is not set")
        url, schema = POSTGRES_URL, f"autoport_test_{uuid.uuid4().hex[:12]}"
    try:
        await upgrade(url, schema=schema, revision="0008")
        db = create_database(url, schema=schema)
        await db.connect()
        try:
            await db.execute(
                "INSERT INTO accounts (id, environment, name, created_at) "
                "VALUES ('acc', 'production', 'Old', 1)"
            )
            await db.execute(
                "INSERT INTO applications (id, environment, account_id, client_id, name, "
                "client_type, redirect_uris, properties, brands, created_at, disabled_at) "
                "VALUES ('APP', 'production', 'acc', 'cid', 'Old app', 'public', "
                "'[\"com.old.app:/cb\"]', '[]', '[]', 1, NULL)"
            )
        finally:
            await db.close()
        await upgrade(url, schema=schema)
        db = create_database(url, schema=schema)
        await db.connect()
        try:
            old = await repository.get_application(db.reader, Environment.production, "APP")
            assert old is not None and old.url_scheme is None
            assert old.redirect_uris == ("com.old.app:/cb",)
        finally:
            await db.close()
        await _downgrade(url, schema, "0008")
        db = create_database(url, schema=schema)
        await db.connect()
        try:
            assert await current_revisions(db) == frozenset({"0008"})
            row = await db.fetch_one("SELECT * FROM applications WHERE id = 'APP'")
            # Not `in row`: on a sqlite3.Row that looks among the values.
            assert row is not None and "url_scheme" not in list(row.keys())
        finally:
            await db.close()
    finally:
        if schema is not None:
            import asyncpg

            conn = await asyncpg.connect(POSTGRES_URL)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await conn.close()
