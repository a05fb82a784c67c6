"""SQL of codes, tokens and assertion jtis. Single-use things are consumed with one
conditional UPDATE ... RETURNING, never read-then-write."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autoport.kit.db import Connection, Row

ACCESS = "access"
REFRESH = "refresh"

_INSERT_ROW_SQL = """
INSERT INTO oauth_tokens (token_hash, environment, kind, application_id, authorization_id,
                          family_id, scopes, created_at, expires_at, consumed_at, revoked_at,
                          successor)
VALUES (:token_hash, :environment, :kind, :application_id, :authorization_id, :family_id,
        :scopes, :created_at, :expires_at, NULL, NULL, NULL)
"""


async def create_token(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT_ROW_SQL, values)


async def create_tokens(conn: Connection, rows: list[dict[str, Any]]) -> None:
    await conn.execute_many(_INSERT_ROW_SQL, rows)


# The authenticator's one query: by primary key, with the application and the grant.
BEARER_LOOKUP = """
SELECT t.kind, t.environment, t.application_id, t.authorization_id, t.scopes,
       t.expires_at, t.revoked_at, a.client_id, a.properties AS app_properties,
       a.brands AS app_brands, a.disabled_at, z.vin, z.brand, z.properties AS granted,
       z.status, z.valid_from, z.valid_until, z.subject
FROM oauth_tokens t
JOIN applications a ON a.id = t.application_id
LEFT JOIN authorizations z ON z.id = t.authorization_id
WHERE t.token_hash = :token_hash
"""


async def get_bearer(conn: Connection, token_hash: str) -> Row | None:
    return await conn.fetch_one(BEARER_LOOKUP, {"token_hash": token_hash})


async def create_code(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(
        """
        INSERT INTO authorization_codes (code_hash, environment, application_id,
            authorization_id, family_id, redirect_uri, code_challenge, code_challenge_method,
            created_at, expires_at, consumed_at)
        VALUES (:code_hash, :environment, :application_id, :authorization_id, :family_id,
            :redirect_uri, :code_challenge, :code_challenge_method, :created_at, :expires_at,
            NULL)
        """,
        values,
    )


async def consume_code(
    conn: Connection, *, code_hash: str, environment: str, now_us: int
) -> Row | None:
    return await conn.fetch_one(
        """
        UPDATE authorization_codes SET consumed_at = :now
        WHERE code_hash = :code_hash AND environment = :environment AND consumed_at IS NULL
        RETURNING application_id, authorization_id, family_id, redirect_uri, code_challenge,
                  code_challenge_method, expires_at
        """,
        {"code_hash": code_hash, "environment": environment, "now": now_us},
    )


async def get_code(conn: Connection, *, code_hash: str, environment: str) -> Row | None:
    return await conn.fetch_one(
        "SELECT application_id, family_id, consumed_at, expires_at FROM authorization_codes "
        "WHERE code_hash = :code_hash AND environment = :environment",
        {"code_hash": code_hash, "environment": environment},
    )


async def consume_refresh(
    conn: Connection,
    *,
    token_hash: str,
    environment: str,
    application_id: str,
    successor: str,
    now_us: int,
) -> Row | None:
    return await conn.fetch_one(
        """
        UPDATE oauth_tokens SET consumed_at = :now, successor = :successor
        WHERE token_hash = :token_hash AND kind = 'refresh' AND environment = :environment
          AND application_id = :application_id AND consumed_at IS NULL
          AND revoked_at IS NULL AND expires_at > :now
        RETURNING authorization_id, family_id
        """,
        {
            "token_hash": token_hash,
            "environment": environment,
            "application_id": application_id,
            "successor": successor,
            "now": now_us,
        },
    )


async def get_token(conn: Connection, *, token_hash: str, environment: str) -> Row | None:
    return await conn.fetch_one(
        "SELECT kind, application_id, authorization_id, family_id, scopes, expires_at, "
        "consumed_at, revoked_at, successor FROM oauth_tokens "
        "WHERE token_hash = :token_hash AND environment = :environment",
        {"token_hash": token_hash, "environment": environment},
    )


async def revoke_family(conn: Connection, family_id: str, now_us: int) -> int:
    return await conn.execute(
        "UPDATE oauth_tokens SET revoked_at = :now WHERE family_id = :family_id "
        "AND revoked_at IS NULL",
        {"family_id": family_id, "now": now_us},
    )


async def revoke_authorization_tokens(conn: Connection, authorization_id: str, now_us: int) -> int:
    return await conn.execute(
        "UPDATE oauth_tokens SET revoked_at = :now WHERE authorization_id = :authorization_id "
        "AND revoked_at IS NULL",
        {"authorization_id": authorization_id, "now": now_us},
    )


async def revoke_token(conn: Connection, token_hash: str, now_us: int) -> int:
    return await conn.execute(
        "UPDATE oauth_tokens SET revoked_at = :now WHERE token_hash = :token_hash "
        "AND revoked_at IS NULL",
        {"token_hash": token_hash, "now": now_us},
    )


async def record_jti(conn: Connection, *, key_id: str, jti: str, expires_at: int) -> bool:
    """False when the (key, jti) pair was seen before: a replayed assertion."""
    changed = await conn.execute(
        "INSERT INTO assertion_jtis (key_id, jti, expires_at) VALUES (:key_id, :jti, :expires_at) "
        "ON CONFLICT DO NOTHING",
        {"key_id": key_id, "jti": jti, "expires_at": expires_at},
    )
    return changed == 1


async def get_authorization(
    conn: Connection, *, authorization_id: str, environment: str
) -> Row | None:
    return await conn.fetch_one(
        "SELECT id, application_id, vin, brand, properties, status, subject, valid_from, "
        "valid_until, commands FROM authorizations WHERE id = :id AND environment = :environment",
        {"id": authorization_id, "environment": environment},
    )


async def delete_expired(
    conn: Connection, *, now_us: int, keep_codes_us: int, keep_tokens_us: int
) -> int:
    """Housekeeping: rows that can no longer matter."""
    # Expired tokens are kept a while too: while the row exists, a client presenting one
    # is told it expired (and to refresh) rather than that it was never valid.
    removed = await conn.execute(
        "DELETE FROM oauth_tokens WHERE expires_at < :before", {"before": now_us - keep_tokens_us}
    )
    removed += await conn.execute(
        "DELETE FROM assertion_jtis WHERE expires_at < :now", {"now": now_us}
    )
    # Codes are kept a while past expiry so a late second redemption is still recognised.
    removed += await conn.execute(
        "DELETE FROM authorization_codes WHERE expires_at < :before",
        {"before": now_us - keep_codes_us},
    )
    return removed


async def update_authorization_status(
    conn: Connection,
    *,
    authorization_id: str,
    environment: str,
    status: str,
    allowed_from: Iterable[str],
    now_us: int,
) -> Row | None:
    """Set the grant's status if it is one of `allowed_from` (fixed values of the
    service's transition table, never input); its (application_id, vin), else None."""
    sources = ", ".join(f"'{value}'" for value in allowed_from)
    return await conn.fetch_one(
        f"UPDATE authorizations SET status = :status, updated_at = :now "  # noqa: S608
        f"WHERE id = :id AND environment = :environment AND status IN ({sources}) "
        "RETURNING application_id, vin",
        {"status": status, "now": now_us, "id": authorization_id, "environment": environment},
    )
