"""SQL of vehicle commands. Every read is scoped by environment (and application)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from autoport.commands.schemas import CommandRow
from autoport.kit.db import Connection
from autoport.kit.environments import Environment

COLUMNS = (
    "id, environment, application_id, authorization_id, vin, brand, capability, command, "
    "arguments, status, failure_reason, failure_description, idempotency_key, request_hash, "
    "created_at, updated_at, sent_at, finished_at, deadline_at"
)

# ON CONFLICT DO NOTHING covers both unique constraints (idempotency key, one in flight
# per vehicle and capability): the caller reads which one it met.
_INSERT = """
INSERT INTO vehicle_commands (id, environment, application_id, authorization_id, vin, brand,
    capability, command, arguments, status, idempotency_key, request_hash, inflight,
    created_at, updated_at, deadline_at)
VALUES (:id, :environment, :application_id, :authorization_id, :vin, :brand, :capability,
    :command, :arguments, 'pending', :idempotency_key, :request_hash, :inflight,
    :created_at, :created_at, :deadline_at)
ON CONFLICT DO NOTHING
RETURNING id
"""


async def list_webhook_subscriptions(
    conn: Connection, application_ids: Sequence[str]
) -> dict[tuple[str, str], tuple[str, ...]]:
    """(environment, application id) -> the events its webhook subscribes to, for the
    applications that have one. Plain SQL on the webhooks table (read only): the
    webhooks feature's own lookup is a SQLAlchemy Core statement compiled on each call
    (0.4 ms), and this runs with every command change."""
    ids = sorted(set(application_ids))
    if not ids:
        return {}
    placeholders = ", ".join(f":a{i}" for i in range(len(ids)))
    rows = await conn.fetch_all(
        "SELECT environment, application_id, events FROM webhooks "  # noqa: S608
        f"WHERE application_id IN ({placeholders})",
        {f"a{i}": app_id for i, app_id in enumerate(ids)},
    )
    return {
        (row["environment"], row["application_id"]): tuple(orjson.loads(row["events"]))
        for row in rows
    }


def inflight_key(vin: str, capability: str) -> str:
    return f"{vin}/{capability}"


async def create(conn: Connection, values: dict[str, Any]) -> bool:
    """False when the idempotency key or the vehicle's capability is taken."""
    return await conn.fetch_value(_INSERT, values) is not None


async def get(conn: Connection, environment: Environment, command_id: str) -> CommandRow | None:
    row = await conn.fetch_one(
        f"SELECT {COLUMNS} FROM vehicle_commands "  # noqa: S608 - fixed column list
        "WHERE id = :id AND environment = :environment",
        {"id": command_id, "environment": str(environment)},
    )
    return None if row is None else CommandRow.from_row(row)


async def get_by_idempotency_key(
    conn: Connection, environment: Environment, application_id: str, vin: str, key: str
) -> CommandRow | None:
    row = await conn.fetch_one(
        f"SELECT {COLUMNS} FROM vehicle_commands "  # noqa: S608 - fixed column list
        "WHERE environment = :environment AND application_id = :application_id "
        "AND vin = :vin AND idempotency_key = :key",
        {
            "environment": str(environment),
            "application_id": application_id,
            "vin": vin,
            "key": key,
        },
    )
    return None if row is None else CommandRow.from_row(row)


async def update(conn: Connection, command_id: str, *, idempotency_key: str | None) -> None:
    """The one column changed outside the status paths: a key whose 24 hours are over is
    cleared (None), so that it may name a new command."""
    await conn.execute(
        "UPDATE vehicle_commands SET idempotency_key = :key WHERE id = :id",
        {"id": command_id, "key": idempotency_key},
    )


async def get_by_inflight(
    conn: Connection, environment: Environment, vin: str, capability: str
) -> CommandRow | None:
    row = await conn.fetch_one(
        f"SELECT {COLUMNS} FROM vehicle_commands "  # noqa: S608 - fixed column list
        "WHERE environment = :environment AND inflight = :inflight",
        {"environment": str(environment), "inflight": inflight_key(vin, capability)},
    )
    return None if row is None else CommandRow.from_row(row)


async def lock_due(conn: Connection, *, now_us: int, limit: int) -> list[CommandRow]:
    """Up to `limit` due pending commands, oldest first, held for the caller's
    transaction (PostgreSQL: FOR UPDATE SKIP LOCKED, so other workers take others;
    SQLite: the single writer)."""
    lock = " FOR UPDATE SKIP LOCKED" if conn.dialect == "postgresql" else ""
    rows = await conn.fetch_all(
        f"SELECT {COLUMNS} FROM vehicle_commands "  # noqa: S608 - fixed column list and lock
        f"WHERE status = 'pending' AND deadline_at > :now ORDER BY created_at LIMIT :limit{lock}",
        {"now": now_us, "limit": limit},
    )
    return [CommandRow.from_row(row) for row in rows]


async def mark_sent(
    conn: Connection, *, command_ids: Sequence[str], worker_id: str, now_us: int
) -> None:
    """Move commands held by `lock_due` to `sent`, in the caller's transaction: once it
    commits, no one (this worker after a crash included) sends them again."""
    if not command_ids:
        return
    ids = ", ".join(f":i{i}" for i in range(len(command_ids)))
    await conn.execute(
        "UPDATE vehicle_commands SET status = 'sent', sent_at = :now, updated_at = :now, "  # noqa: S608
        f"claimed_by = :worker WHERE id IN ({ids}) AND status = 'pending'",
        {
            "now": now_us,
            "worker": worker_id,
            **{f"i{i}": command_id for i, command_id in enumerate(command_ids)},
        },
    )


async def finish(
    conn: Connection,
    *,
    command_ids: Sequence[str],
    status: str,
    reason: str | None,
    description: str | None,
    now_us: int,
    expected: tuple[str, ...] = ("sent",),
) -> set[str]:
    """Record one outcome for many commands in one statement, each only from an
    `expected` status (a command finished by the timeout sweep keeps that answer). The
    ids of the commands it finished; the caller holds their rows."""
    if not command_ids:
        return set()
    ids = ", ".join(f":i{i}" for i in range(len(command_ids)))
    states = ", ".join(f":s{i}" for i in range(len(expected)))
    rows = await conn.fetch_all(
        f"""
        UPDATE vehicle_commands
        SET status = :status, failure_reason = :reason, failure_description = :description,
            finished_at = :now, updated_at = :now, inflight = NULL
        WHERE id IN ({ids}) AND status IN ({states})
        RETURNING id
        """,  # noqa: S608 - generated placeholders
        {
            "status": status,
            "reason": reason,
            "description": description,
            "now": now_us,
            **{f"i{i}": command_id for i, command_id in enumerate(command_ids)},
            **{f"s{i}": s for i, s in enumerate(expected)},
        },
    )
    return {row["id"] for row in rows}


async def overdue(conn: Connection, *, now_us: int, grace_us: int, limit: int) -> list[CommandRow]:
    """Unfinished commands past their deadline: pending ones at once, sent ones after a
    grace (a live worker's own timeout answers first)."""
    rows = await conn.fetch_all(
        f"SELECT {COLUMNS} FROM vehicle_commands "  # noqa: S608 - fixed column list
        "WHERE (status = 'pending' AND deadline_at <= :now) "
        "OR (status = 'sent' AND deadline_at <= :late) "
        "ORDER BY deadline_at LIMIT :limit",
        {"now": now_us, "late": now_us - grace_us, "limit": limit},
    )
    return [CommandRow.from_row(row) for row in rows]
