"""Alembic, driven from code: `autoport migrate`, `serve` (SQLite), tests, and /readyz.

Alembic runs on SQLAlchemy's synchronous API; for PostgreSQL it goes through the
asyncpg driver (`run_sync`), so autoport needs no second PostgreSQL driver.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection as SyncConnection
from sqlalchemy.ext.asyncio import create_async_engine

from autoport.kit.db import Database, asyncpg_dsn, sqlite_path
from autoport.secrets_file import private_directory, private_file

# The revisions live with the tables they create (autoport/db/migrations).
MIGRATIONS_DIR = Path(__file__).parent.parent / "db" / "migrations"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


@lru_cache(maxsize=1)
def expected_heads() -> frozenset[str]:
    return frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())


def _upgrade_with(connection: SyncConnection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def upgrade(url: str, *, schema: str | None = None, revision: str = "heads") -> None:
    """Apply migrations up to `revision` (all heads by default)."""
    if url.startswith("sqlite:"):
        path = sqlite_path(url)
        if path != ":memory:":
            private_directory(Path(path).parent)
            private_file(path)  # 0600 before SQLite creates it (autoport.secrets_file)
        engine = create_engine(f"sqlite:///{path}")
        try:
            with engine.begin() as connection:
                _upgrade_with(connection, revision)
        finally:
            engine.dispose()
        return
    connect_args: dict[str, Any] = {}
    if schema:
        connect_args["server_settings"] = {"search_path": schema}
    async_engine = create_async_engine(
        asyncpg_dsn(url).replace("postgresql://", "postgresql+asyncpg://", 1),
        connect_args=connect_args,
    )
    try:
        async with async_engine.begin() as connection:
            if schema:
                await connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            await connection.run_sync(_upgrade_with, revision)
    finally:
        await async_engine.dispose()


def upgrade_sync(url: str, *, schema: str | None = None, revision: str = "heads") -> None:
    asyncio.run(upgrade(url, schema=schema, revision=revision))


async def current_revisions(db: Database) -> frozenset[str]:
    try:
        rows = await db.fetch_all("SELECT version_num FROM alembic_version")
    except Exception:  # the table does not exist before the first migration
        return frozenset()
    return frozenset(row[0] for row in rows)


async def is_current(db: Database) -> bool:
    return await current_revisions(db) == expected_heads()
