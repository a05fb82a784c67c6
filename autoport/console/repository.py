"""SQL of the console: users, sessions, single-use links, the audit log, and the
account-scoped lists its pages show. Every read of account data takes the account id
and the environment, so a page that forgets a check still finds nothing of another
account."""

from __future__ import annotations

from typing import Any

from autoport.console.schemas import AuditEntry, Invitation, SessionRow, User
from autoport.kit.db import Connection
from autoport.kit.environments import Environment

# ---------------------------------------------------------------------------- users

_USER_COLUMNS = "id, environment, account_id, email, password_hash, role, created_at, disabled_at"


async def create_user(conn: Connection, user: User) -> None:
    await conn.execute(
        f"INSERT INTO console_users ({_USER_COLUMNS}) VALUES (:id, :environment, "  # noqa: S608
        ":account_id, :email, :password_hash, :role, :created_at, NULL)",
        {
            "id": user.id,
            "environment": str(user.environment),
            "account_id": user.account_id,
            "email": user.email,
            "password_hash": user.password_hash,
            "role": user.role,
            "created_at": user.created_at,
        },
    )


async def get_user_by_email(conn: Connection, environment: Environment, email: str) -> User | None:
    row = await conn.fetch_one(
        f"SELECT {_USER_COLUMNS} FROM console_users "  # noqa: S608
        "WHERE environment = :environment AND email = :email",
        {"environment": str(environment), "email": email},
    )
    return None if row is None else User.from_row(row)


async def get_user_in_account(
    conn: Connection, environment: Environment, account_id: str, user_id: str
) -> User | None:
    row = await conn.fetch_one(
        f"SELECT {_USER_COLUMNS} FROM console_users WHERE id = :id "  # noqa: S608
        "AND environment = :environment AND account_id = :account_id",
        {"id": user_id, "environment": str(environment), "account_id": account_id},
    )
    return None if row is None else User.from_row(row)


async def list_users_of_account(
    conn: Connection, environment: Environment, account_id: str
) -> list[User]:
    rows = await conn.fetch_all(
        f"SELECT {_USER_COLUMNS} FROM console_users "  # noqa: S608
        "WHERE environment = :environment AND account_id = :account_id "
        "ORDER BY created_at, id LIMIT 500",
        {"environment": str(environment), "account_id": account_id},
    )
    return [User.from_row(row) for row in rows]


async def update_user(conn: Connection, user_id: str, values: dict[str, Any]) -> None:
    # Column names come from the service's fixed set, never from input.
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    await conn.execute(
        f"UPDATE console_users SET {assignments} WHERE id = :id",  # noqa: S608
        {**values, "id": user_id},
    )


async def count_owners(conn: Connection, environment: Environment, account_id: str) -> int:
    return int(
        await conn.fetch_value(
            "SELECT COUNT(*) FROM console_users WHERE environment = :environment "
            "AND account_id = :account_id AND role = 'owner' AND disabled_at IS NULL",
            {"environment": str(environment), "account_id": account_id},
        )
    )


# ------------------------------------------------------------------------- sessions


async def create_session(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(
        "INSERT INTO console_sessions (id, environment, token_hash, user_id, created_at, "
        "expires_at, ended_at) VALUES (:id, :environment, :token_hash, :user_id, "
        ":created_at, :expires_at, NULL)",
        values,
    )


async def get_live_session(
    conn: Connection, environment: Environment, token_hash: str, now_us: int
) -> SessionRow | None:
    """The session of a cookie, with its user: only while it runs and its user is
    enabled (a disabled user's sessions end at once)."""
    row = await conn.fetch_one(
        "SELECT s.id, s.user_id, s.expires_at, u.account_id, u.email, u.role, "
        "EXISTS (SELECT 1 FROM console_flashes f WHERE f.session_id = s.id) AS has_flash "
        "FROM console_sessions s LEFT JOIN console_users u ON u.id = s.user_id "
        "WHERE s.token_hash = :token_hash AND s.environment = :environment "
        "AND s.ended_at IS NULL AND s.expires_at > :now "
        "AND (s.user_id IS NULL OR (u.disabled_at IS NULL AND u.environment = :environment))",
        {"token_hash": token_hash, "environment": str(environment), "now": now_us},
    )
    return None if row is None else SessionRow.from_row(row)


async def end_session(conn: Connection, session_id: str, now_us: int) -> None:
    await conn.execute(
        "UPDATE console_sessions SET ended_at = :now WHERE id = :id AND ended_at IS NULL",
        {"id": session_id, "now": now_us},
    )


async def end_sessions_of_user(conn: Connection, user_id: str, now_us: int) -> None:
    await conn.execute(
        "UPDATE console_sessions SET ended_at = :now WHERE user_id = :user_id AND ended_at IS NULL",
        {"user_id": user_id, "now": now_us},
    )


async def delete_finished_sessions(conn: Connection, before_us: int) -> int:
    await conn.execute(
        "DELETE FROM console_flashes WHERE session_id IN (SELECT id FROM console_sessions "
        "WHERE expires_at < :before OR ended_at < :before)",
        {"before": before_us},
    )
    return await conn.execute(
        "DELETE FROM console_sessions WHERE expires_at < :before OR ended_at < :before",
        {"before": before_us},
    )


# -------------------------------------------------------------------------- flashes


async def upsert_flash(
    conn: Connection, *, session_id: str, page: str, sealed: str, now_us: int
) -> None:
    """The session's one flash (a newer one replaces an unseen older one)."""
    await conn.execute(
        "INSERT INTO console_flashes (session_id, page, sealed, created_at) "
        "VALUES (:session_id, :page, :sealed, :now) ON CONFLICT (session_id) DO UPDATE SET "
        "page = excluded.page, sealed = excluded.sealed, created_at = excluded.created_at",
        {"session_id": session_id, "page": page, "sealed": sealed, "now": now_us},
    )


async def consume_flash(conn: Connection, *, session_id: str, page: str) -> str | None:
    """The session's flash for `page`, deleted in the same statement (shown once)."""
    row = await conn.fetch_one(
        "DELETE FROM console_flashes WHERE session_id = :session_id AND page = :page "
        "RETURNING sealed",
        {"session_id": session_id, "page": page},
    )
    return None if row is None else str(row["sealed"])


# ---------------------------------------------------------------- single-use links

_INVITATION_COLUMNS = (
    "id, environment, account_id, kind, email, role, user_id, created_by, created_at, "
    "expires_at, consumed_at"
)


async def create_invitation(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(
        f"INSERT INTO console_invitations ({_INVITATION_COLUMNS}, token_hash) VALUES (:id, "  # noqa: S608
        ":environment, :account_id, :kind, :email, :role, :user_id, :created_by, "
        ":created_at, :expires_at, NULL, :token_hash)",
        values,
    )


async def get_open_invitation(
    conn: Connection, environment: Environment, token_hash: str, now_us: int
) -> Invitation | None:
    row = await conn.fetch_one(
        f"SELECT {_INVITATION_COLUMNS} FROM console_invitations "  # noqa: S608
        "WHERE token_hash = :token_hash AND environment = :environment "
        "AND consumed_at IS NULL AND expires_at > :now",
        {"token_hash": token_hash, "environment": str(environment), "now": now_us},
    )
    return None if row is None else Invitation.from_row(row)


async def consume_invitation(conn: Connection, invitation_id: str, now_us: int) -> bool:
    """Single use: one conditional UPDATE; False when another request took it first."""
    row = await conn.fetch_one(
        "UPDATE console_invitations SET consumed_at = :now WHERE id = :id "
        "AND consumed_at IS NULL AND expires_at > :now RETURNING id",
        {"id": invitation_id, "now": now_us},
    )
    return row is not None


async def list_pending_invitations(
    conn: Connection, environment: Environment, account_id: str, now_us: int
) -> list[Invitation]:
    rows = await conn.fetch_all(
        f"SELECT {_INVITATION_COLUMNS} FROM console_invitations "  # noqa: S608
        "WHERE environment = :environment AND account_id = :account_id "
        "AND consumed_at IS NULL AND expires_at > :now ORDER BY created_at DESC LIMIT 100",
        {"environment": str(environment), "account_id": account_id, "now": now_us},
    )
    return [Invitation.from_row(row) for row in rows]


async def withdraw_invitation(
    conn: Connection, environment: Environment, account_id: str, invitation_id: str, now_us: int
) -> bool:
    row = await conn.fetch_one(
        "UPDATE console_invitations SET consumed_at = :now WHERE id = :id "
        "AND environment = :environment AND account_id = :account_id "
        "AND consumed_at IS NULL RETURNING id",
        {
            "id": invitation_id,
            "environment": str(environment),
            "account_id": account_id,
            "now": now_us,
        },
    )
    return row is not None


# ------------------------------------------------------------------------ audit log

_AUDIT_COLUMNS = (
    "id, environment, account_id, actor, actor_label, action, target, detail, address, created_at"
)


async def create_audit_entry(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(
        f"INSERT INTO console_audit ({_AUDIT_COLUMNS}) VALUES (:id, :environment, "  # noqa: S608
        ":account_id, :actor, :actor_label, :action, :target, :detail, :address, :created_at)",
        values,
    )


async def list_audit_entries(
    conn: Connection,
    environment: Environment,
    *,
    account_id: str | None,
    limit: int,
    before: tuple[int, str] | None = None,
) -> list[AuditEntry]:
    """Newest first. `account_id` None: every entry of the environment (the operator)."""
    sql = f"SELECT {_AUDIT_COLUMNS} FROM console_audit WHERE environment = :environment"  # noqa: S608
    params: dict[str, Any] = {"environment": str(environment), "limit": limit}
    if account_id is not None:
        sql += " AND account_id = :account_id"
        params["account_id"] = account_id
    if before is not None:
        sql += " AND (created_at < :at OR (created_at = :at AND id < :id))"
        params["at"], params["id"] = before
    rows = await conn.fetch_all(sql + " ORDER BY created_at DESC, id DESC LIMIT :limit", params)
    return [AuditEntry.from_row(row) for row in rows]
