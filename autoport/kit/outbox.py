"""The transactional outbox: side effects that must not be lost (stream messages, webhook
events) are written in the same transaction as the change that causes them, then
delivered by workers.

Each event becomes one row per interested consumer, so consumers progress on their own
and a claim is a plain row lease: `claim` marks rows with a lease that expires, so a
worker that dies mid-batch loses nothing (its rows become claimable again), and several
workers never hold the same row at once (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: the
single writer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from autoport.kit.db import Connection, Database, Row
from autoport.kit.environments import Environment

# Which consumers see which events. One place, so adding a consumer is one line.
CONSUMERS: dict[str, tuple[str, ...]] = {
    "vehicle_data_changed": ("streaming",),
    "authorization_changed": ("webhooks", "streaming"),
    "fleet_clearance_changed": ("webhooks", "streaming"),
    "command_changed": ("webhooks", "streaming"),
    "ping": ("webhooks",),
}


@dataclass(frozen=True, slots=True)
class OutboxEvent:
    id: int
    environment: Environment
    consumer: str
    event_type: str
    vin: str | None
    application_id: str | None
    payload: dict[str, Any]
    created_at: int
    attempts: int

    @classmethod
    def from_row(cls, row: Row) -> OutboxEvent:
        return cls(
            id=row["id"],
            environment=Environment(row["environment"]),
            consumer=row["consumer"],
            event_type=row["event_type"],
            vin=row["vin"],
            application_id=row["application_id"],
            payload=orjson.loads(row["payload"]),
            created_at=row["created_at"],
            attempts=row["attempts"],
        )


_INSERT = """
INSERT INTO outbox (environment, consumer, event_type, vin, application_id, payload,
                    created_at, available_at, attempts)
VALUES (:environment, :consumer, :event_type, :vin, :application_id, :payload,
        :now, :now, 0)
"""


async def emit(
    conn: Connection,
    *,
    environment: Environment,
    event_type: str,
    payload: dict[str, Any],
    now_us: int,
    vin: str | None = None,
    application_id: str | None = None,
) -> None:
    """Record an event inside the caller's transaction."""
    await emit_many(
        conn, [NewEvent(environment, event_type, payload, vin, application_id)], now_us=now_us
    )


@dataclass(frozen=True, slots=True)
class NewEvent:
    environment: Environment
    event_type: str
    payload: dict[str, Any]
    vin: str | None = None
    application_id: str | None = None
    # Some of the event type's consumers, when the emitter knows the others have no use
    # for it (e.g. no webhook subscribes to it); None: all of them.
    consumers: tuple[str, ...] | None = None


async def emit_many(conn: Connection, events: Sequence[NewEvent], *, now_us: int) -> None:
    """Record events inside the caller's transaction, in one statement."""
    rows: list[dict[str, Any]] = []
    for event in events:
        consumers = CONSUMERS.get(event.event_type)
        if consumers is None:
            raise ValueError(f"no consumer is registered for event type {event.event_type!r}")
        if event.consumers is not None:
            unknown = set(event.consumers) - set(consumers)
            if unknown:
                raise ValueError(f"{event.event_type} has no consumer {sorted(unknown)}")
            consumers = event.consumers
        body = orjson.dumps(event.payload).decode()
        rows.extend(
            {
                "environment": str(event.environment),
                "consumer": consumer,
                "event_type": event.event_type,
                "vin": event.vin,
                "application_id": event.application_id,
                "payload": body,
                "now": now_us,
            }
            for consumer in consumers
        )
    await conn.execute_many(_INSERT, rows)


# An event is due for its consumer once available and not leased (or its lease ran out):
# the one definition `any_due` and `claim` share.
_DUE = """consumer = :consumer AND available_at <= :now
          AND (claimed_until IS NULL OR claimed_until < :now)"""


async def any_due(db: Database, *, consumer: str, now_us: int) -> bool:
    """Whether `consumer` has an event to claim now: a cheap read (on the reader) that
    spares an idle worker the write transaction of `claim`."""
    value = await db.reader.fetch_value(
        f"SELECT 1 FROM outbox WHERE {_DUE} LIMIT 1",  # noqa: S608 - a fixed condition
        {"consumer": consumer, "now": now_us},
    )
    return value is not None


async def claim(
    db: Database,
    *,
    consumer: str,
    worker_id: str,
    now_us: int,
    limit: int = 100,
    lease_seconds: float = 30.0,
) -> list[OutboxEvent]:
    """Lease up to `limit` due events of `consumer`, oldest first."""
    lock = " FOR UPDATE SKIP LOCKED" if db.dialect == "postgresql" else ""
    sql = f"""
    UPDATE outbox SET claimed_until = :until, claimed_by = :worker, attempts = attempts + 1
    WHERE id IN (
        SELECT id FROM outbox
        WHERE {_DUE}
        ORDER BY id LIMIT :limit{lock}
    )
    RETURNING id, environment, consumer, event_type, vin, application_id, payload,
              created_at, attempts
    """  # noqa: S608 - only the fixed lock clause is interpolated
    async with db.transaction() as conn:
        rows = await conn.fetch_all(
            sql,
            {
                "until": now_us + int(lease_seconds * 1_000_000),
                "worker": worker_id,
                "consumer": consumer,
                "now": now_us,
                "limit": limit,
            },
        )
    return sorted((OutboxEvent.from_row(row) for row in rows), key=lambda e: e.id)


async def take(
    conn: Connection, *, consumer: str, now_us: int, limit: int = 100
) -> list[OutboxEvent]:
    """Remove up to `limit` due events of `consumer`, oldest first, and return them, in
    the caller's transaction: for a consumer whose whole handling of an event is writes
    in that same transaction (the stream builder), and which so needs no lease: a
    rollback, or a crash before the commit, leaves the events in the outbox as they were.
    One statement where `claim` and `complete` are two and two commits. PostgreSQL: the
    rows are locked until the commit and other takers skip them (SKIP LOCKED)."""
    lock = " FOR UPDATE SKIP LOCKED" if conn.dialect == "postgresql" else ""
    rows = await conn.fetch_all(
        f"""
        DELETE FROM outbox WHERE id IN (
            SELECT id FROM outbox WHERE {_DUE} ORDER BY id LIMIT :limit{lock}
        )
        RETURNING id, environment, consumer, event_type, vin, application_id, payload,
                  created_at, attempts
        """,  # noqa: S608 - only the fixed lock clause is interpolated
        {"consumer": consumer, "now": now_us, "limit": limit},
    )
    return sorted((OutboxEvent.from_row(row) for row in rows), key=lambda e: e.id)


async def complete(conn: Connection, *, event_ids: Sequence[int], worker_id: str) -> set[int]:
    """Remove handled events in one statement; returns the ids removed. Only rows this
    worker still holds are removed: an event whose lease passed to another worker is
    left to it, and its id is missing from the answer (the caller decides whether that
    voids its batch, as streaming does, or only that event, as webhooks do)."""
    if not event_ids:
        return set()
    rows = await conn.fetch_all(
        "DELETE FROM outbox WHERE id IN :ids AND claimed_by = :worker RETURNING id",
        {"ids": list(event_ids), "worker": worker_id},
    )
    return {row[0] for row in rows}


async def retry_later(conn: Connection, *, event_id: int, available_at: int) -> None:
    """Give a leased event back, to be claimed again at `available_at`."""
    await conn.execute(
        "UPDATE outbox SET claimed_until = NULL, claimed_by = NULL, available_at = :at "
        "WHERE id = :id",
        {"id": event_id, "at": available_at},
    )
