"""SQL of webhooks: configuration rows and the delivery table (queue + log).

Every read is scoped by environment and application. Claims are leases taken in one
UPDATE ... RETURNING (FOR UPDATE SKIP LOCKED on PostgreSQL, the single writer on
SQLite); results are recorded only by the holder of the claim for that very attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from autoport.kit.db import Connection, Database, Row
from autoport.kit.environments import Environment

PENDING = "pending"
SUCCEEDED = "succeeded"
FAILED = "failed"


@dataclass(frozen=True, slots=True)
class WebhookRow:
    application_id: str
    environment: Environment
    url: str
    secret_sealed: str
    events: tuple[str, ...]
    signature_scheme: str
    created_at: int
    updated_at: int

    @classmethod
    def from_row(cls, row: Row) -> WebhookRow:
        return cls(
            application_id=row["application_id"],
            environment=Environment(row["environment"]),
            url=row["url"],
            secret_sealed=row["secret_sealed"],
            events=tuple(orjson.loads(row["events"])),
            signature_scheme=row["signature_scheme"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )


@dataclass(frozen=True, slots=True)
class ClaimedDelivery:
    """A delivery leased for one attempt (`attempt` = its attempts count after claim)."""

    id: int
    delivery_id: str
    environment: Environment
    application_id: str
    event_type: str
    vin: str
    body: bytes
    attempt: int
    created_at: int
    expires_at: int

    @classmethod
    def from_row(cls, row: Row) -> ClaimedDelivery:
        return cls(
            id=row["id"],
            delivery_id=row["delivery_id"],
            environment=Environment(row["environment"]),
            application_id=row["application_id"],
            event_type=row["event_type"],
            vin=row["vin"],
            body=row["body"].encode(),
            attempt=row["attempts"],
            created_at=row["created_at"],
            expires_at=row["expires_at"],
        )


_WEBHOOK_COLUMNS = (
    "application_id, environment, url, secret_sealed, events, signature_scheme, "
    "created_at, updated_at"
)


async def application_exists(
    conn: Connection, *, environment: Environment, application_id: str
) -> bool:
    row = await conn.fetch_one(
        "SELECT 1 FROM applications WHERE id = :id AND environment = :env",
        {"id": application_id, "env": str(environment)},
    )
    return row is not None


async def get_webhook(
    conn: Connection, *, environment: Environment, application_id: str
) -> WebhookRow | None:
    row = await conn.fetch_one(
        f"SELECT {_WEBHOOK_COLUMNS} FROM webhooks "  # noqa: S608 - fixed column list
        "WHERE application_id = :app AND environment = :env",
        {"app": application_id, "env": str(environment)},
    )
    return None if row is None else WebhookRow.from_row(row)


async def list_webhooks_of_applications(
    conn: Connection, application_ids: Sequence[str]
) -> list[WebhookRow]:
    if not application_ids:
        return []
    rows = await conn.fetch_all(
        f"SELECT {_WEBHOOK_COLUMNS} FROM webhooks WHERE application_id IN :ids",  # noqa: S608 - fixed column list
        {"ids": sorted(set(application_ids))},
    )
    return [WebhookRow.from_row(row) for row in rows]


async def upsert_webhook(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    url: str,
    secret_sealed: str,
    events: Sequence[str],
    signature_scheme: str,
    now_us: int,
) -> WebhookRow:
    row = await conn.fetch_one(
        f"""
        INSERT INTO webhooks ({_WEBHOOK_COLUMNS})
        VALUES (:app, :env, :url, :secret, :events, :scheme, :now, :now)
        ON CONFLICT (application_id) DO UPDATE SET
            url = excluded.url, secret_sealed = excluded.secret_sealed,
            events = excluded.events, signature_scheme = excluded.signature_scheme,
            updated_at = excluded.updated_at
        RETURNING {_WEBHOOK_COLUMNS}
        """,  # noqa: S608 - fixed column list
        {
            "app": application_id,
            "env": str(environment),
            "url": url,
            "secret": secret_sealed,
            "events": orjson.dumps(list(events)).decode(),
            "scheme": signature_scheme,
            "now": now_us,
        },
    )
    assert row is not None
    return WebhookRow.from_row(row)


async def delete_webhook(
    conn: Connection, *, environment: Environment, application_id: str, now_us: int
) -> bool:
    deleted = await conn.execute(
        "DELETE FROM webhooks WHERE application_id = :app AND environment = :env",
        {"app": application_id, "env": str(environment)},
    )
    if deleted:
        # Queued deliveries stay visible in the log, as failed; nothing is sent anymore.
        await conn.execute(
            "UPDATE webhook_deliveries SET status = 'failed', error = :why, "
            "next_attempt_at = :now WHERE application_id = :app AND environment = :env "
            "AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < :now)",
            {
                "app": application_id,
                "env": str(environment),
                "now": now_us,
                "why": "the webhook was removed",
            },
        )
    return deleted > 0


_INSERT_DELIVERY = """
INSERT INTO webhook_deliveries (
    delivery_id, environment, application_id, event_type, vin, body, status, attempts,
    created_at, enqueued_at, next_attempt_at, expires_at, claimed_by, claimed_until)
VALUES (:delivery_id, :environment, :application_id, :event_type, :vin, :body, 'pending',
        :attempts, :created_at, :enqueued_at, :next_attempt_at, :expires_at, :claimed_by,
        :claimed_until)
"""


async def create_deliveries(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Rows carry the columns of _INSERT_DELIVERY; claimed_by/claimed_until set means
    the inserting process sends the first attempt itself (the ping)."""
    if rows:
        await conn.execute_many(_INSERT_DELIVERY, rows)


_CLAIM_COLUMNS = (
    "id, delivery_id, environment, application_id, event_type, vin, body, attempts, "
    "created_at, expires_at"
)


async def claim_deliveries(
    db: Database, *, worker_id: str, now_us: int, lease_us: int, limit: int
) -> list[ClaimedDelivery]:
    """Lease due deliveries. Only the head of each (application, vin, event type) queue
    is due: a later event never overtakes an earlier one still pending."""
    if limit <= 0:
        return []
    lock = " FOR UPDATE SKIP LOCKED" if db.dialect == "postgresql" else ""
    sql = f"""
    UPDATE webhook_deliveries
    SET claimed_by = :worker, claimed_until = :until, attempts = attempts + 1
    WHERE id IN (
        SELECT d.id FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= :now
          AND (d.claimed_until IS NULL OR d.claimed_until < :now)
          AND NOT EXISTS (
              SELECT 1 FROM webhook_deliveries e
              WHERE e.application_id = d.application_id AND e.vin = d.vin
                AND e.event_type = d.event_type AND e.status = 'pending' AND e.id < d.id)
        ORDER BY d.next_attempt_at, d.id LIMIT :limit{lock}
    )
    RETURNING {_CLAIM_COLUMNS}
    """  # noqa: S608 - only the fixed lock clause is interpolated
    async with db.transaction() as conn:
        rows = await conn.fetch_all(
            sql,
            {"worker": worker_id, "until": now_us + lease_us, "now": now_us, "limit": limit},
        )
    return sorted((ClaimedDelivery.from_row(row) for row in rows), key=lambda d: d.id)


async def get_claimed_delivery(
    conn: Connection, *, delivery_pk: int, worker_id: str
) -> ClaimedDelivery | None:
    row = await conn.fetch_one(
        f"SELECT {_CLAIM_COLUMNS} FROM webhook_deliveries "  # noqa: S608 - fixed columns
        "WHERE id = :id AND claimed_by = :worker",
        {"id": delivery_pk, "worker": worker_id},
    )
    return None if row is None else ClaimedDelivery.from_row(row)


async def record_attempt(
    conn: Connection,
    *,
    delivery: ClaimedDelivery,
    worker_id: str,
    status: str,
    next_attempt_at: int,
    now_us: int,
    duration_ms: int,
    request_headers: dict[str, str],
    response_status: int | None,
    response_headers: list[tuple[str, str]] | None,
    response_body: str | None,
    error: str | None,
) -> bool:
    """Write the outcome of the attempt this worker holds; False when the claim was lost
    (lease expired and taken over), in which case the new holder's outcome counts."""
    changed = await conn.execute(
        """
        UPDATE webhook_deliveries SET
            status = :status, next_attempt_at = :next, claimed_by = NULL,
            claimed_until = NULL, last_attempt_at = :now,
            delivered_at = COALESCE(:delivered_at, delivered_at),
            duration_ms = :duration, request_headers = :request_headers,
            response_status = :response_status, response_headers = :response_headers,
            response_body = :response_body, error = :error
        WHERE id = :id AND claimed_by = :worker AND attempts = :attempt
        """,
        {
            "status": status,
            "next": next_attempt_at,
            "now": now_us,
            "delivered_at": now_us if status == SUCCEEDED else None,
            "duration": duration_ms,
            "request_headers": orjson.dumps(request_headers).decode(),
            "response_status": response_status,
            "response_headers": None
            if response_headers is None
            else orjson.dumps(response_headers).decode(),
            "response_body": response_body,
            "error": error,
            "id": delivery.id,
            "worker": worker_id,
            "attempt": delivery.attempt,
        },
    )
    return changed > 0


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    delivery: ClaimedDelivery
    status: str
    next_attempt_at: int
    now_us: int
    duration_ms: int
    request_headers: dict[str, str]
    response_status: int | None
    response_headers: list[tuple[str, str]] | None
    response_body: str | None
    error: str | None


_RECORD_MANY_PG = """
UPDATE webhook_deliveries AS d SET
    status = v.status, next_attempt_at = v.next, claimed_by = NULL, claimed_until = NULL,
    last_attempt_at = v.now,
    delivered_at = CASE WHEN v.status = 'succeeded' THEN v.now ELSE d.delivered_at END,
    duration_ms = v.duration, request_headers = v.request_headers,
    response_status = v.response_status, response_headers = v.response_headers,
    response_body = v.response_body, error = v.error
FROM (
    SELECT * FROM unnest(
        :ids::bigint[], :attempts::integer[], :statuses::text[], :nexts::bigint[],
        :nows::bigint[], :durations::integer[], :request_headers::text[],
        :response_statuses::integer[], :response_headers::text[], :response_bodies::text[],
        :errors::text[]
    ) AS t(id, attempt, status, next, now, duration, request_headers, response_status,
           response_headers, response_body, error)
) AS v
WHERE d.id = v.id AND d.claimed_by = :worker AND d.attempts = v.attempt
RETURNING d.id
"""


async def record_attempts(
    conn: Connection, records: Sequence[AttemptRecord], *, worker_id: str
) -> set[int]:
    """Record many outcomes; returns the ids whose claim this worker still held. On
    PostgreSQL one statement (a round trip per outcome would cap the throughput)."""
    if conn.dialect != "postgresql":
        held: set[int] = set()
        for r in records:
            if await record_attempt(
                conn,
                delivery=r.delivery,
                worker_id=worker_id,
                status=r.status,
                next_attempt_at=r.next_attempt_at,
                now_us=r.now_us,
                duration_ms=r.duration_ms,
                request_headers=r.request_headers,
                response_status=r.response_status,
                response_headers=r.response_headers,
                response_body=r.response_body,
                error=r.error,
            ):
                held.add(r.delivery.id)
        return held
    rows = await conn.fetch_all(
        _RECORD_MANY_PG,
        {
            "worker": worker_id,
            "ids": [r.delivery.id for r in records],
            "attempts": [r.delivery.attempt for r in records],
            "statuses": [r.status for r in records],
            "nexts": [r.next_attempt_at for r in records],
            "nows": [r.now_us for r in records],
            "durations": [r.duration_ms for r in records],
            "request_headers": [orjson.dumps(r.request_headers).decode() for r in records],
            "response_statuses": [r.response_status for r in records],
            "response_headers": [
                None if r.response_headers is None else orjson.dumps(r.response_headers).decode()
                for r in records
            ],
            "response_bodies": [r.response_body for r in records],
            "errors": [r.error for r in records],
        },
    )
    return {row[0] for row in rows}


async def prune_log(
    conn: Connection, *, environment: Environment, application_id: str, keep: int
) -> int:
    """Forget finished deliveries beyond the newest `keep` of the application."""
    return await conn.execute(
        """
        DELETE FROM webhook_deliveries
        WHERE environment = :env AND application_id = :app
          AND status IN ('succeeded', 'failed')
          AND id < (SELECT id FROM webhook_deliveries
                    WHERE environment = :env AND application_id = :app
                    ORDER BY id DESC LIMIT 1 OFFSET :offset)
        """,
        {"env": str(environment), "app": application_id, "offset": keep - 1},
    )


async def prune_log_before(
    conn: Connection, *, environment: Environment, application_id: str, before: int
) -> int:
    """Forget the application's finished deliveries older than `before` (a delivery id
    with at least the number kept of finished ones from it on: `prune_log` in fewer
    reads)."""
    return await conn.execute(
        "DELETE FROM webhook_deliveries WHERE environment = :env AND application_id = :app "
        "AND status IN ('succeeded', 'failed') AND id < :before",
        {"env": str(environment), "app": application_id, "before": before},
    )


_LOG_COLUMNS = (
    "delivery_id, event_type, vin, body, status, attempts, created_at, enqueued_at, "
    "next_attempt_at, expires_at, claimed_until, last_attempt_at, delivered_at, "
    "duration_ms, request_headers, response_status, response_headers, response_body, error"
)


async def list_recent_deliveries(
    conn: Connection, *, environment: Environment, application_id: str, limit: int
) -> list[Row]:
    return await conn.fetch_all(
        f"SELECT {_LOG_COLUMNS} FROM webhook_deliveries "  # noqa: S608 - fixed columns
        "WHERE environment = :env AND application_id = :app ORDER BY id DESC LIMIT :limit",
        {"env": str(environment), "app": application_id, "limit": limit},
    )


async def get_delivery(
    conn: Connection, *, environment: Environment, application_id: str, delivery_id: str
) -> Row | None:
    return await conn.fetch_one(
        f"SELECT {_LOG_COLUMNS} FROM webhook_deliveries "  # noqa: S608 - fixed columns
        "WHERE environment = :env AND application_id = :app AND delivery_id = :delivery",
        {"env": str(environment), "app": application_id, "delivery": delivery_id},
    )


async def requeue_delivery(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    delivery_id: str,
    now_us: int,
    expires_at: int,
) -> int:
    """Queue a delivery again (same delivery id); not while an attempt is in flight."""
    return await conn.execute(
        """
        UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = :now,
            expires_at = :expires, error = NULL
        WHERE environment = :env AND application_id = :app AND delivery_id = :delivery
          AND (claimed_until IS NULL OR claimed_until < :now)
        """,
        {
            "env": str(environment),
            "app": application_id,
            "delivery": delivery_id,
            "now": now_us,
            "expires": expires_at,
        },
    )


async def get_delivery_pk(conn: Connection, *, delivery_id: str) -> int:
    """The row id of a delivery this transaction wrote, by its public id."""
    value = await conn.fetch_value(
        "SELECT id FROM webhook_deliveries WHERE delivery_id = :d", {"d": delivery_id}
    )
    assert value is not None
    return int(value)
