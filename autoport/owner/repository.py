"""SQL of the owner portal. Every read is scoped by environment and by the vehicles the
owner's session proved; the service decides which those are before calling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import TextClause, bindparam, text

from autoport.kit.db import Connection, Row

_SESSION_COLUMNS = (
    "id, environment, token_hash, locale, brand, vin, method, subject, verified_at, "
    "oem_nonce_hash, created_at, expires_at"
)


async def create_session(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(
        "INSERT INTO owner_sessions (id, environment, token_hash, locale, brand, vin, method, "
        "subject, verified_at, oem_nonce_hash, created_at, expires_at) VALUES (:id, "
        ":environment, :token_hash, :locale, :brand, :vin, :method, :subject, :verified_at, "
        ":oem_nonce_hash, :created_at, :expires_at)",
        values,
    )


async def get_session_by_token_hash(
    conn: Connection, *, environment: str, token_hash: str, now_us: int
) -> Row | None:
    return await conn.fetch_one(
        f"SELECT {_SESSION_COLUMNS} FROM owner_sessions "  # noqa: S608 - constant columns
        "WHERE token_hash = :token_hash AND environment = :environment AND expires_at > :now",
        {"token_hash": token_hash, "environment": environment, "now": now_us},
    )


async def prove(
    conn: Connection,
    *,
    session_id: str,
    old_hash: str,
    new_hash: str,
    subject: str,
    expires_at: int,
    now_us: int,
    nonce_hash: str | None = None,
) -> bool:
    """Ownership proven: the session gets its subject and a new token (rotation), once;
    for oem_login only with the session's current nonce, which is taken."""
    nonce_clause = " AND oem_nonce_hash = :nonce_hash" if nonce_hash is not None else ""
    changed = await conn.execute(
        "UPDATE owner_sessions SET token_hash = :new_hash, subject = :subject, "  # noqa: S608 - constant clauses
        "verified_at = :now, oem_nonce_hash = NULL, expires_at = :expires_at "
        "WHERE id = :id AND token_hash = :old_hash AND verified_at IS NULL "
        f"AND expires_at > :now{nonce_clause}",
        {
            "id": session_id,
            "old_hash": old_hash,
            "new_hash": new_hash,
            "subject": subject,
            "expires_at": expires_at,
            "now": now_us,
            "nonce_hash": nonce_hash,
        },
    )
    return changed == 1


async def update_nonce(conn: Connection, *, session_id: str, nonce_hash: str, now_us: int) -> bool:
    changed = await conn.execute(
        "UPDATE owner_sessions SET oem_nonce_hash = :nonce_hash "
        "WHERE id = :id AND verified_at IS NULL AND expires_at > :now",
        {"id": session_id, "nonce_hash": nonce_hash, "now": now_us},
    )
    return changed == 1


async def update_locale(conn: Connection, *, session_id: str, locale: str) -> None:
    await conn.execute(
        "UPDATE owner_sessions SET locale = :locale WHERE id = :id",
        {"id": session_id, "locale": locale},
    )


async def delete_session(conn: Connection, *, session_id: str) -> None:
    await conn.execute("DELETE FROM owner_sessions WHERE id = :id", {"id": session_id})


async def delete_expired_sessions(conn: Connection, *, before_us: int) -> int:
    return await conn.execute(
        "DELETE FROM owner_sessions WHERE expires_at < :before", {"before": before_us}
    )


# ------------------------------------------------------------------------- vehicles


async def list_vins_of_subject(
    conn: Connection, *, environment: str, brand: str, subject: str
) -> list[str]:
    """Every vehicle a carmaker account granted access to (oem_login)."""
    rows = await conn.fetch_all(
        "SELECT DISTINCT vin FROM authorizations "
        "WHERE environment = :environment AND brand = :brand AND subject = :subject "
        "ORDER BY vin",
        {"environment": environment, "brand": brand, "subject": subject},
    )
    return [str(row["vin"]) for row in rows]


_GRANTS = """
SELECT z.id, z.application_id, z.vin, z.brand, z.properties, z.status, z.valid_from,
       z.valid_until, z.created_at, z.updated_at, a.name AS app_name,
       c.name AS operator
FROM authorizations z
JOIN applications a ON a.id = z.application_id
JOIN accounts c ON c.id = a.account_id
WHERE z.environment = :environment AND z.vin = :vin
  AND ((z.status IN ('approved', 'pending')
        AND (z.valid_until IS NULL OR z.valid_until >= :ended_since))
       OR (z.status IN ('revoked', 'rejected') AND z.updated_at >= :ended_since))
ORDER BY z.created_at DESC, z.id
"""


async def list_grants_of_vin(
    conn: Connection, *, environment: str, vin: str, ended_since: int
) -> list[Row]:
    return await conn.fetch_all(
        _GRANTS, {"environment": environment, "vin": vin, "ended_since": ended_since}
    )


async def get_grant_of_vin(
    conn: Connection, *, environment: str, vin: str, authorization_id: str
) -> Row | None:
    return await conn.fetch_one(
        "SELECT id, application_id, status, vin FROM authorizations "
        "WHERE id = :id AND environment = :environment AND vin = :vin",
        {"id": authorization_id, "environment": environment, "vin": vin},
    )


async def list_live_grant_ids(
    conn: Connection, *, environment: str, vin: str, application_id: str | None = None
) -> list[str]:
    """The vehicle's approved and pending grants (of one application, when named)."""
    params = {"environment": environment, "vin": vin}
    of_application = ""
    if application_id is not None:
        params["application_id"] = application_id
        of_application = "AND application_id = :application_id "
    rows = await conn.fetch_all(
        "SELECT id FROM authorizations WHERE environment = :environment AND vin = :vin "  # noqa: S608
        f"{of_application}AND status IN ('approved', 'pending') ORDER BY id",
        params,
    )
    return [str(row["id"]) for row in rows]


async def list_reads(
    conn: Connection, *, authorization_ids: Sequence[str], since_day: int
) -> list[Row]:
    """Per grant: reads since `since_day` (UTC day number) and the last read ever."""
    if not authorization_ids:
        return []
    return await conn.fetch_all(
        _with_ids(
            "SELECT authorization_id, "
            "SUM(CASE WHEN day >= :since_day THEN reads ELSE 0 END) AS recent, "
            "MAX(last_read_at) AS last_read_at FROM grant_reads "
            "WHERE authorization_id IN :ids GROUP BY authorization_id",
            authorization_ids,
            since_day=since_day,
        )
    )


def _with_ids(sql: str, ids: Sequence[str], **params: Any) -> TextClause:
    # An expanding IN is rendered when the statement is compiled, which needs the values.
    return text(sql).bindparams(
        bindparam("ids", value=list(ids), expanding=True),
        *(bindparam(name, value=value) for name, value in params.items()),
    )


async def list_reads_per_day(conn: Connection, *, authorization_ids: Sequence[str]) -> list[Row]:
    if not authorization_ids:
        return []
    return await conn.fetch_all(
        _with_ids(
            "SELECT authorization_id, day, reads, last_read_at FROM grant_reads "
            "WHERE authorization_id IN :ids ORDER BY authorization_id, day",
            authorization_ids,
        )
    )


# -------------------------------------------------------------------------- commands

_COMMAND_COLUMNS = (
    "id, authorization_id, capability, command, status, failure_reason, created_at, finished_at"
)


async def list_commands_of_grants(
    conn: Connection,
    *,
    environment: str,
    vin: str,
    authorization_ids: Sequence[str],
    latest: int | None = None,
) -> list[Row]:
    """The commands sent to `vin` in `environment` under these owner grants, newest first
    per grant, each row with `total` (the grant's count). With `latest`, only that many per
    grant. A fleet clearance's commands carry no authorization id: never the owner's."""
    if not authorization_ids:
        return []
    # Environment and VIN too, not only the grant ids: a row of another vehicle or
    # environment is never attributed to this owner, whatever it carries.
    ranked = (
        f"SELECT {_COMMAND_COLUMNS}, "  # noqa: S608 - constant columns
        "ROW_NUMBER() OVER (PARTITION BY authorization_id ORDER BY created_at DESC, id DESC) "
        "AS position, COUNT(*) OVER (PARTITION BY authorization_id) AS total "
        "FROM vehicle_commands WHERE environment = :environment AND vin = :vin "
        "AND authorization_id IN :ids"
    )
    sql = f"SELECT * FROM ({ranked}) ranked"  # noqa: S608 - constant text
    params: dict[str, Any] = {"environment": environment, "vin": vin}
    if latest is not None:
        sql += " WHERE position <= :latest"
        params["latest"] = latest
    return await conn.fetch_all(
        _with_ids(sql + " ORDER BY authorization_id, position", authorization_ids, **params)
    )


# ------------------------------------------------------------------------- your data


async def get_latest_document(conn: Connection, *, environment: str, vin: str) -> Row | None:
    return await conn.fetch_one(
        "SELECT brand, document, updated_at FROM vehicles "
        "WHERE environment = :environment AND vin = :vin",
        {"environment": environment, "vin": vin},
    )
