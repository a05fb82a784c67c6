"""Which tables a statement writes, for PostgreSQL's commit notifications: the caches of
verified tokens, clearances and vehicle rows are emptied only by commits to their own
tables, so a write that is missed here would leave a revoked token working in other
processes. When in doubt the answer is every table."""

from __future__ import annotations

import pytest

from autoport.kit.db import ALL_TABLES, written_tables


@pytest.mark.parametrize(
    ("sql", "tables"),
    [
        ("SELECT * FROM oauth_tokens WHERE token_hash = :h", set()),
        ("SELECT id FROM outbox WHERE consumer = :c FOR UPDATE SKIP LOCKED", set()),
        ("UPDATE oauth_tokens SET revoked_at = :now WHERE family = :f", {"oauth_tokens"}),
        ('UPDATE "applications" SET disabled_at = 1', {"applications"}),
        ("update authorizations set status = 'revoked'", {"authorizations"}),
        ("DELETE FROM fleet_vehicles WHERE vin = :v", {"fleet_vehicles"}),
        (
            "INSERT INTO vehicles (environment, vin) VALUES (:e, :v) "
            "ON CONFLICT (environment, vin) DO UPDATE SET document = excluded.document",
            {"vehicles"},
        ),
        (
            "WITH gone AS (DELETE FROM outbox WHERE id = :i RETURNING *) "
            "INSERT INTO stream_messages SELECT * FROM gone",
            {"outbox", "stream_messages"},
        ),
        ("INSERT INTO myschema.vehicles VALUES (1)", {"vehicles"}),
        ("TRUNCATE oauth_tokens", {ALL_TABLES}),
        ("SELECT pg_notify('x', '')", set()),
    ],
)
def test_written_tables(sql: str, tables: set[str]) -> None:
    assert written_tables(sql) == frozenset(tables)
