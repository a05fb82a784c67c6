"""SQL of the stream log, its cursors and MQTT credentials. Every read is scoped by the
environment and the application it serves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment


@dataclass(frozen=True, slots=True)
class LoggedMessage:
    seq: int
    message: str
    ingested_at: int


@dataclass(frozen=True, slots=True)
class MqttDue:
    environment: Environment
    application_id: str
    mqtt_seq: int
    last_seq: int


_ALLOCATE = """
INSERT INTO stream_cursors (environment, application_id, last_seq, mqtt_seq, updated_at)
VALUES (:environment, :application_id, :count, 0, :now)
ON CONFLICT (environment, application_id) DO UPDATE
SET last_seq = stream_cursors.last_seq + excluded.last_seq, updated_at = excluded.updated_at
RETURNING last_seq
"""


async def allocate_seqs(
    conn: Connection, *, environment: Environment, application_id: str, count: int, now_us: int
) -> int:
    """Reserve `count` sequence numbers; returns the first. The upsert takes the cursor
    row's lock until commit, so a later writer's numbers are committed after ours and a
    reader following the sequence never skips a message that commits late."""
    last = await conn.fetch_value(
        _ALLOCATE,
        {
            "environment": str(environment),
            "application_id": application_id,
            "count": count,
            "now": now_us,
        },
    )
    return int(last) - count + 1


_INSERT_MESSAGE = """
INSERT INTO stream_messages (environment, application_id, seq, message_id, vin, message,
                             ingested_at, created_at)
VALUES (:environment, :application_id, :seq, :message_id, :vin, :message,
        :ingested_at, :created_at)
"""


async def create_messages(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    await conn.execute_many(_INSERT_MESSAGE, rows)


_AFTER = """
SELECT seq, message, ingested_at FROM stream_messages
WHERE environment = :environment AND application_id = :application_id AND seq > :after
ORDER BY seq LIMIT :limit
"""


async def list_messages_after(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    after: int,
    limit: int,
) -> list[LoggedMessage]:
    rows = await conn.fetch_all(
        _AFTER,
        {
            "environment": str(environment),
            "application_id": application_id,
            "after": after,
            "limit": limit,
        },
    )
    return [LoggedMessage(row["seq"], row["message"], row["ingested_at"]) for row in rows]


async def get_last_seq(conn: Connection, *, environment: Environment, application_id: str) -> int:
    value = await conn.fetch_value(
        "SELECT last_seq FROM stream_cursors "
        "WHERE environment = :environment AND application_id = :application_id",
        {"environment": str(environment), "application_id": application_id},
    )
    return int(value or 0)


async def get_oldest_seq(
    conn: Connection, *, environment: Environment, application_id: str
) -> int | None:
    value = await conn.fetch_value(
        "SELECT MIN(seq) FROM stream_messages "
        "WHERE environment = :environment AND application_id = :application_id",
        {"environment": str(environment), "application_id": application_id},
    )
    return None if value is None else int(value)


async def any_mqtt_due(conn: Connection) -> bool:
    value = await conn.fetch_value("SELECT 1 FROM stream_cursors WHERE last_seq > mqtt_seq LIMIT 1")
    return value is not None


async def claim_mqtt_due(
    db: Database, *, worker_id: str, now_us: int, lease_us: int, limit: int
) -> list[MqttDue]:
    """Lease applications with unpublished messages, so that several replicas never
    publish the same application's messages at once (a lease that is not renewed
    expires and another publisher takes over from the cursor)."""
    lock = " FOR UPDATE SKIP LOCKED" if db.dialect == "postgresql" else ""
    sql = f"""
    UPDATE stream_cursors SET mqtt_lease_until = :until, mqtt_lease_by = :worker
    WHERE (environment, application_id) IN (
        SELECT environment, application_id FROM stream_cursors
        WHERE last_seq > mqtt_seq
          AND (mqtt_lease_until IS NULL OR mqtt_lease_until < :now OR mqtt_lease_by = :worker)
        ORDER BY updated_at LIMIT :limit{lock}
    )
    RETURNING environment, application_id, mqtt_seq, last_seq
    """  # noqa: S608 - only the fixed lock clause is interpolated
    async with db.transaction() as conn:
        rows = await conn.fetch_all(
            sql, {"until": now_us + lease_us, "worker": worker_id, "now": now_us, "limit": limit}
        )
    return [
        MqttDue(Environment(r["environment"]), r["application_id"], r["mqtt_seq"], r["last_seq"])
        for r in rows
    ]


async def advance_mqtt(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    seq: int,
    worker_id: str,
) -> bool:
    """Move the publish cursor forward (only after the broker acknowledged everything up
    to `seq`), only while this publisher still holds the lease."""
    changed = await conn.execute(
        "UPDATE stream_cursors SET mqtt_seq = :seq "
        "WHERE environment = :environment AND application_id = :application_id "
        "AND mqtt_lease_by = :worker AND mqtt_seq < :seq",
        {
            "seq": seq,
            "environment": str(environment),
            "application_id": application_id,
            "worker": worker_id,
        },
    )
    return changed > 0


async def get_application_disabled(conn: Connection, application_id: str) -> bool:
    value = await conn.fetch_value(
        "SELECT disabled_at FROM applications WHERE id = :id", {"id": application_id}
    )
    return value is not None


async def release_mqtt_leases(conn: Connection, *, worker_id: str) -> None:
    await conn.execute(
        "UPDATE stream_cursors SET mqtt_lease_until = NULL, mqtt_lease_by = NULL "
        "WHERE mqtt_lease_by = :worker",
        {"worker": worker_id},
    )


async def prune(
    conn: Connection, *, before_us: int, keep_unpublished: bool, batch: int = 1_000_000
) -> int:
    """Forget up to `batch` of the messages older than the retention (oldest first, by
    the created_at index); while MQTT is on, never one the broker has not acknowledged
    yet (an outage delays messages, it does not drop them)."""
    published = (
        " AND m.seq <= (SELECT c.mqtt_seq FROM stream_cursors c"
        " WHERE c.environment = m.environment AND c.application_id = m.application_id)"
        if keep_unpublished
        else ""
    )
    return await conn.execute(
        "DELETE FROM stream_messages WHERE (environment, application_id, seq) IN ("  # noqa: S608 - a fixed clause
        " SELECT m.environment, m.application_id, m.seq FROM stream_messages m"
        f" WHERE m.created_at < :before{published} ORDER BY m.created_at LIMIT :batch)",
        {"before": before_us, "batch": batch},
    )


# --------------------------------------------------------------- leases

_TAKE_LEASE = """
INSERT INTO stream_leases (name, holder, lease_until) VALUES (:name, :holder, :until)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
WHERE stream_leases.holder = excluded.holder OR stream_leases.lease_until < :now
RETURNING holder
"""


async def take_lease(db: Database, *, name: str, holder: str, now_us: int, until_us: int) -> bool:
    """Take or renew the lease `name` for `holder` until `until_us`; False while another
    holder's lease runs. One statement: two contenders cannot both win."""
    async with db.transaction() as conn:
        won = await conn.fetch_value(
            _TAKE_LEASE, {"name": name, "holder": holder, "until": until_us, "now": now_us}
        )
    return won is not None


async def release_lease(conn: Connection, *, name: str, holder: str) -> None:
    await conn.execute(
        "DELETE FROM stream_leases WHERE name = :name AND holder = :holder",
        {"name": name, "holder": holder},
    )


# --------------------------------------------------------------- open SSE streams

_HOLD_CONNECTION = """
INSERT INTO stream_connections (id, environment, application_id, opened_at, lease_until)
VALUES (:id, :environment, :application_id, :now, :until)
ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until
"""


async def hold_connection(
    conn: Connection,
    *,
    connection_id: str,
    environment: Environment,
    application_id: str,
    now_us: int,
    until_us: int,
) -> None:
    """Register an open stream, or renew its lease (registering it again if its row
    was dropped as expired meanwhile)."""
    await conn.execute(
        _HOLD_CONNECTION,
        {
            "id": connection_id,
            "environment": str(environment),
            "application_id": application_id,
            "now": now_us,
            "until": until_us,
        },
    )


async def delete_expired_connections(
    conn: Connection, *, environment: Environment, application_id: str, now_us: int
) -> None:
    await conn.execute(
        "DELETE FROM stream_connections WHERE environment = :environment "
        "AND application_id = :application_id AND lease_until < :now",
        {"environment": str(environment), "application_id": application_id, "now": now_us},
    )


async def get_live_connection_count(
    conn: Connection, *, environment: Environment, application_id: str, now_us: int
) -> int:
    value = await conn.fetch_value(
        "SELECT COUNT(*) FROM stream_connections WHERE environment = :environment "
        "AND application_id = :application_id AND lease_until >= :now",
        {"environment": str(environment), "application_id": application_id, "now": now_us},
    )
    return int(value or 0)


async def delete_connection(conn: Connection, connection_id: str) -> None:
    await conn.execute("DELETE FROM stream_connections WHERE id = :id", {"id": connection_id})


# --------------------------------------------------------------- MQTT credentials


async def get_application_environment(conn: Connection, application_id: str) -> Environment | None:
    value = await conn.fetch_value(
        "SELECT environment FROM applications WHERE id = :id", {"id": application_id}
    )
    return None if value is None else Environment(value)


async def create_mqtt_password(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    password_hash: str,
    now_us: int,
) -> None:
    await conn.execute(
        "INSERT INTO stream_mqtt_credentials "
        "(environment, application_id, password_hash, created_at, updated_at) "
        "VALUES (:environment, :application_id, :hash, :now, :now) "
        "ON CONFLICT (application_id) DO UPDATE "
        "SET password_hash = excluded.password_hash, updated_at = excluded.updated_at",
        {
            "environment": str(environment),
            "application_id": application_id,
            "hash": password_hash,
            "now": now_us,
        },
    )


async def list_mqtt_credentials(conn: Connection) -> list[tuple[Environment, str, str]]:
    """(environment, application id, password hash) of every enabled application."""
    rows = await conn.fetch_all(
        "SELECT c.environment, c.application_id, c.password_hash "
        "FROM stream_mqtt_credentials c JOIN applications a ON a.id = c.application_id "
        "WHERE a.disabled_at IS NULL ORDER BY c.application_id"
    )
    return [(Environment(r["environment"]), r["application_id"], r["password_hash"]) for r in rows]


async def get_mqtt_credentials_issued_at(conn: Connection, application_id: str) -> int | None:
    """When the application's current MQTT password was issued (µs), None if never."""
    value = await conn.fetch_value(
        "SELECT updated_at FROM stream_mqtt_credentials WHERE application_id = :id",
        {"id": application_id},
    )
    return None if value is None else int(value)


async def list_latest_messages(
    conn: Connection, *, environment: Environment, application_id: str, limit: int
) -> list[LoggedMessage]:
    """The application's newest stream messages, newest first."""
    rows = await conn.fetch_all(
        "SELECT seq, message, ingested_at FROM stream_messages "
        "WHERE environment = :environment AND application_id = :application_id "
        "ORDER BY seq DESC LIMIT :limit",
        {"environment": str(environment), "application_id": application_id, "limit": limit},
    )
    return [LoggedMessage(row["seq"], row["message"], row["ingested_at"]) for row in rows]
