"""SQL of the consent flow. Every query names the environment or a row id reached
through the caller's own session, so one environment never sees another's rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from autoport.kit.brands import sandbox_only_problem
from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment


@dataclass(frozen=True, slots=True)
class Application:
    id: str
    environment: Environment
    client_id: str
    name: str
    client_type: str
    redirect_uris: tuple[str, ...]
    properties: tuple[str, ...]
    brands: tuple[str, ...]
    disabled: bool


def _application(row: Row) -> Application:
    environment = Environment(row["environment"])
    return Application(
        id=row["id"],
        environment=environment,
        client_id=row["client_id"],
        name=row["name"],
        client_type=row["client_type"],
        redirect_uris=tuple(orjson.loads(row["redirect_uris"])),
        properties=tuple(orjson.loads(row["properties"])),
        # An application stored before production refused the sandbox brand may hold it:
        # no owner consents through the emulated carmaker in production.
        brands=tuple(
            b for b in orjson.loads(row["brands"]) if sandbox_only_problem(b, environment) is None
        ),
        disabled=row["disabled_at"] is not None,
    )


_APP_COLUMNS = (
    "id, environment, client_id, name, client_type, redirect_uris, properties, brands, disabled_at"
)


async def application_by_client_id(
    conn: Connection, *, environment: Environment, client_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM applications "  # noqa: S608 - fixed column list
        "WHERE client_id = :client_id AND environment = :environment",
        {"client_id": client_id, "environment": str(environment)},
    )
    return None if row is None else _application(row)


async def application_by_id(
    conn: Connection, *, environment: Environment, application_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM applications "  # noqa: S608 - fixed column list
        "WHERE id = :id AND environment = :environment",
        {"id": application_id, "environment": str(environment)},
    )
    return None if row is None else _application(row)


# --------------------------------------------------------------------------- sessions


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    environment: Environment
    application_id: str
    redirect_uri: str
    state: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    valid_from: int
    valid_until: int | None
    locale: str
    brand: str | None
    vin: str | None
    method: str | None
    verified_at: int | None
    subject: str | None
    oem_nonce_hash: str | None
    created_at: int
    expires_at: int
    completed_at: int | None
    authorization_id: str | None


_SESSION_COLUMNS = (
    "id, environment, application_id, redirect_uri, state, code_challenge, "
    "code_challenge_method, valid_from, valid_until, locale, brand, vin, method, verified_at, "
    "subject, oem_nonce_hash, created_at, expires_at, completed_at, authorization_id"
)


def _session(row: Row) -> Session:
    values: dict[str, Any] = {name: row[name] for name in Session.__slots__}
    values["environment"] = Environment(values["environment"])
    return Session(**values)


async def insert_session(conn: Connection, *, token_hash: str, values: dict[str, Any]) -> None:
    row = {name: None for name in Session.__slots__} | values | {"token_hash": token_hash}
    row["environment"] = str(row["environment"])
    await conn.execute(
        f"INSERT INTO consent_sessions (token_hash, {_SESSION_COLUMNS}) VALUES "  # noqa: S608
        "(:token_hash, " + ", ".join(f":{name}" for name in Session.__slots__) + ")",
        row,
    )


async def session_by_token_hash(
    conn: Connection, *, environment: Environment, token_hash: str
) -> Session | None:
    row = await conn.fetch_one(
        f"SELECT {_SESSION_COLUMNS} FROM consent_sessions "  # noqa: S608 - fixed columns
        "WHERE token_hash = :token_hash AND environment = :environment",
        {"token_hash": token_hash, "environment": str(environment)},
    )
    return None if row is None else _session(row)


async def session_by_id(
    conn: Connection, *, environment: Environment, session_id: str
) -> Session | None:
    row = await conn.fetch_one(
        f"SELECT {_SESSION_COLUMNS} FROM consent_sessions "  # noqa: S608 - fixed columns
        "WHERE id = :id AND environment = :environment",
        {"id": session_id, "environment": str(environment)},
    )
    return None if row is None else _session(row)


_UPDATABLE = frozenset(
    {"locale", "brand", "vin", "method", "verified_at", "subject", "oem_nonce_hash"}
)


async def update_open_session(
    conn: Connection, *, session_id: str, now_us: int, **values: Any
) -> bool:
    """Change a session that is neither finished nor expired; False when it is."""
    unknown = set(values) - _UPDATABLE
    if unknown:
        raise ValueError(f"not updatable: {sorted(unknown)}")
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    changed = await conn.execute(
        f"UPDATE consent_sessions SET {assignments} "  # noqa: S608 - names checked above
        "WHERE id = :session_id AND completed_at IS NULL AND expires_at > :now",
        {**values, "session_id": session_id, "now": now_us},
    )
    return changed == 1


async def take_oem_nonce(
    conn: Connection, *, session_id: str, nonce_hash: str, subject: str, now_us: int
) -> bool:
    """Accept the carmaker's answer once: the nonce is cleared in the same statement."""
    row = await conn.fetch_one(
        "UPDATE consent_sessions SET oem_nonce_hash = NULL, verified_at = :now, "
        "subject = :subject "
        "WHERE id = :session_id AND oem_nonce_hash = :nonce_hash AND completed_at IS NULL "
        "AND expires_at > :now RETURNING id",
        {"session_id": session_id, "nonce_hash": nonce_hash, "subject": subject, "now": now_us},
    )
    return row is not None


async def complete_session(
    conn: Connection, *, session_id: str, authorization_id: str | None, now_us: int
) -> bool:
    """Finish a session once: a second approve (double click, replay) finds nothing."""
    row = await conn.fetch_one(
        "UPDATE consent_sessions SET completed_at = :now, authorization_id = :authorization_id "
        "WHERE id = :session_id AND completed_at IS NULL AND expires_at > :now RETURNING id",
        {"session_id": session_id, "authorization_id": authorization_id, "now": now_us},
    )
    return row is not None


async def delete_expired_sessions(conn: Connection, *, before_us: int) -> int:
    await conn.execute(
        "DELETE FROM consent_vehicle_codes WHERE session_id IN "
        "(SELECT id FROM consent_sessions WHERE expires_at < :before) "
        "AND (locked_until IS NULL OR locked_until < :before)",
        {"before": before_us},
    )
    return await conn.execute(
        "DELETE FROM consent_sessions WHERE expires_at < :before AND id NOT IN "
        "(SELECT session_id FROM consent_vehicle_codes)",
        {"before": before_us},
    )


# ---------------------------------------------------------------------- authorizations


async def insert_authorization(conn: Connection, *, values: dict[str, Any]) -> None:
    row = dict(values)
    row["environment"] = str(row["environment"])
    row["properties"] = orjson.dumps(list(row["properties"])).decode()
    await conn.execute(
        "INSERT INTO authorizations (id, environment, application_id, vin, brand, properties, "
        "status, subject, valid_from, valid_until, created_at, updated_at) VALUES "
        "(:id, :environment, :application_id, :vin, :brand, :properties, :status, :subject, "
        ":valid_from, :valid_until, :created_at, :updated_at)",
        row,
    )


async def authorization_status(
    conn: Connection, *, environment: Environment, authorization_id: str
) -> str | None:
    value = await conn.fetch_value(
        "SELECT status FROM authorizations WHERE id = :id AND environment = :environment",
        {"id": authorization_id, "environment": str(environment)},
    )
    return None if value is None else str(value)


# ----------------------------------------------------------------------- vehicle codes


async def vin_locked_until(
    conn: Connection, *, environment: Environment, vin: str, now_us: int
) -> int | None:
    value = await conn.fetch_value(
        "SELECT MAX(locked_until) FROM consent_vehicle_codes "
        "WHERE environment = :environment AND vin = :vin AND locked_until > :now",
        {"environment": str(environment), "vin": vin, "now": now_us},
    )
    return None if value is None else int(value)


async def retire_session_codes(conn: Connection, *, session_id: str, now_us: int) -> None:
    # Attempts are kept on the retired rows' successor: a new code starts with the
    # attempts the old one had used, so asking for new codes does not reset the limit.
    await conn.execute(
        "UPDATE consent_vehicle_codes SET expires_at = :now, display_code = NULL "
        "WHERE session_id = :session_id AND consumed_at IS NULL AND expires_at > :now",
        {"session_id": session_id, "now": now_us},
    )


async def insert_vehicle_code(
    conn: Connection,
    *,
    code_id: str,
    environment: Environment,
    vin: str,
    session_id: str,
    code_hash: str,
    display_code: str | None,
    now_us: int,
    expires_at: int,
) -> None:
    used = await conn.fetch_value(
        "SELECT COALESCE(MAX(attempts), 0) FROM consent_vehicle_codes "
        "WHERE session_id = :session_id",
        {"session_id": session_id},
    )
    await conn.execute(
        "INSERT INTO consent_vehicle_codes (id, environment, vin, session_id, code_hash, "
        "display_code, attempts, created_at, expires_at) VALUES (:id, :environment, :vin, "
        ":session_id, :code_hash, :display_code, :attempts, :now, :expires_at)",
        {
            "id": code_id,
            "environment": str(environment),
            "vin": vin,
            "session_id": session_id,
            "code_hash": code_hash,
            "display_code": display_code,
            "attempts": int(used or 0),
            "now": now_us,
            "expires_at": expires_at,
        },
    )


async def count_code_attempt(
    conn: Connection, *, session_id: str, max_attempts: int, now_us: int
) -> tuple[str, str, int] | None:
    """Take one attempt on the session's live code: (id, hash, attempts so far)."""
    row = await conn.fetch_one(
        "UPDATE consent_vehicle_codes SET attempts = attempts + 1 "
        "WHERE session_id = :session_id AND consumed_at IS NULL AND expires_at > :now "
        "AND attempts < :max RETURNING id, code_hash, attempts",
        {"session_id": session_id, "now": now_us, "max": max_attempts},
    )
    return None if row is None else (row["id"], row["code_hash"], int(row["attempts"]))


async def consume_vehicle_code(conn: Connection, *, code_id: str, now_us: int) -> bool:
    row = await conn.fetch_one(
        "UPDATE consent_vehicle_codes SET consumed_at = :now, display_code = NULL "
        "WHERE id = :id AND consumed_at IS NULL RETURNING id",
        {"id": code_id, "now": now_us},
    )
    return row is not None


async def burn_vehicle_code(
    conn: Connection, *, code_id: str, locked_until: int, now_us: int
) -> None:
    await conn.execute(
        "UPDATE consent_vehicle_codes SET locked_until = :until, expires_at = :now, "
        "display_code = NULL WHERE id = :id",
        {"id": code_id, "until": locked_until, "now": now_us},
    )


async def current_display_code(
    conn: Connection, *, environment: Environment, vin: str, now_us: int
) -> str | None:
    value = await conn.fetch_value(
        "SELECT display_code FROM consent_vehicle_codes "
        "WHERE environment = :environment AND vin = :vin AND consumed_at IS NULL "
        "AND expires_at > :now AND display_code IS NOT NULL "
        "ORDER BY created_at DESC LIMIT 1",
        {"environment": str(environment), "vin": vin, "now": now_us},
    )
    return None if value is None else str(value)
