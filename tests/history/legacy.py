"""The row-per-point history table as versions before 0020 made it (migration 0004), for
tests: as the old table an upgraded installation still holds (`vehicle_data_history`),
and as the reference storage the equivalence tests compare the new one with."""

from __future__ import annotations

from typing import Any

from autoport.kit.db import Connection, Database

OLD = "vehicle_data_history"


def _ddl(table: str, dialect: str) -> list[str]:
    key = "INTEGER PRIMARY KEY AUTOINCREMENT" if dialect == "sqlite" else "BIGSERIAL PRIMARY KEY"
    return [
        f"""CREATE TABLE {table} (
            id {key},
            environment TEXT NOT NULL, vin TEXT NOT NULL, capability TEXT NOT NULL,
            property TEXT NOT NULL, timestamp BIGINT NOT NULL, digest TEXT NOT NULL,
            value TEXT NOT NULL, received_at BIGINT NOT NULL,
            CONSTRAINT uq_{table}_environment
                UNIQUE (environment, vin, capability, property, timestamp, digest)
        )""",
        f"CREATE INDEX ix_{table}_received_at ON {table} (received_at)",
    ]


async def create_table(db: Database, table: str = OLD) -> None:
    await drop_table(db, table)  # left by a test stopped midway
    for statement in _ddl(table, db.dialect):
        await db.reader.execute(statement)


async def drop_table(db: Database, table: str = OLD) -> None:
    await db.reader.execute(f"DROP TABLE IF EXISTS {table}")


def insert_sql(table: str = OLD) -> str:
    return f"""
INSERT INTO {table}
    (environment, vin, capability, property, timestamp, digest, value, received_at)
VALUES (:environment, :vin, :capability, :property, :timestamp, :digest, :value, :received_at)
ON CONFLICT (environment, vin, capability, property, timestamp, digest) DO NOTHING
"""  # noqa: S608 - a table name of the tests


async def insert(conn: Connection, rows: list[dict[str, Any]], table: str = OLD) -> None:
    await conn.execute_many(insert_sql(table), rows)


async def continue_hot_ids(db: Database) -> None:
    """What migration 0020 does at the upgrade: hot ids continue the old table's."""
    if db.dialect == "postgresql":
        await db.reader.execute(
            "SELECT setval(pg_get_serial_sequence('history_hot', 'id'), "
            "(SELECT coalesce(max(id), 0) + 1 FROM vehicle_data_history), false)"
        )
    else:
        async with db.transaction() as conn:
            await conn.execute("DELETE FROM sqlite_sequence WHERE name = 'history_hot'")
            await conn.execute(
                "INSERT INTO sqlite_sequence (name, seq) "
                "SELECT 'history_hot', coalesce(max(id), 0) FROM vehicle_data_history"
            )
