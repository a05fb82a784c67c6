"""`column IN :name` with a list bound (autoport.kit.db's list parameters) on both
backends: one SQL text whatever the list's length, where an expanding IN of SQLAlchemy
was compiled again for every call."""

from __future__ import annotations

import pytest

from autoport.kit import db as kit_db
from autoport.kit.db import Database

ROWS = [("a", 1), ("b", 2), ("c", 3)]


async def _outbox_ids(database: Database) -> list[int]:
    async with database.transaction() as conn:
        for consumer, _ in ROWS:
            await conn.execute(
                "INSERT INTO outbox (environment, consumer, event_type, payload, created_at, "
                "available_at, attempts) VALUES ('production', :c, 'ping', '{}', 1, 1, 0)",
                {"c": consumer},
            )
    rows = await database.fetch_all("SELECT id FROM outbox ORDER BY id")
    return [int(row["id"]) for row in rows]


async def test_in_and_not_in_a_list_of_any_length(database: Database) -> None:
    ids = await _outbox_ids(database)
    select = "SELECT consumer FROM outbox WHERE id IN :ids ORDER BY consumer"
    for wanted in ([], ids[:1], ids[1:], ids, tuple(ids)):
        rows = await database.fetch_all(select, {"ids": wanted})
        assert [r["consumer"] for r in rows] == sorted(
            consumer for (consumer, _), i in zip(ROWS, ids, strict=True) if i in wanted
        )
    texts = await database.fetch_all(
        "SELECT id FROM outbox WHERE consumer NOT IN :names ORDER BY id", {"names": ["a", "c"]}
    )
    assert [int(r["id"]) for r in texts] == [ids[1]]
    async with database.transaction() as conn:
        deleted = await conn.fetch_all(
            "DELETE FROM outbox WHERE id IN :ids RETURNING id", {"ids": ids[:2]}
        )
    assert sorted(int(r[0]) for r in deleted) == ids[:2]


async def test_one_sql_text_whatever_the_length(database: Database) -> None:
    """The rewritten statement is the same for every list (one prepared statement on
    PostgreSQL, one cached statement on SQLite)."""
    sql = "SELECT 1 FROM outbox WHERE id IN :ids"
    first, _ = kit_db._compile(sql, {"ids": [1]}, database.dialect)
    second, _ = kit_db._compile(sql, {"ids": [1, 2, 3]}, database.dialect)
    assert first == second and ":ids" in first and "IN :ids" not in first


async def test_a_list_parameter_takes_a_list(database: Database) -> None:
    with pytest.raises(TypeError, match="'ids'"):
        await database.fetch_all("SELECT 1 FROM outbox WHERE id IN :ids", {"ids": 3})
