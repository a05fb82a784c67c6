"""Migrations run up from empty on both backends and match the tables in code."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from autoport.config import Settings
from autoport.db.migrate import current_revisions, expected_heads, upgrade_sync
from autoport.db.tables import metadata
from autoport.kit.db import Database, create_database


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
    assert diff == [], f"tables and migrations differ: {diff}"


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
