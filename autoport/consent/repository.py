"""SQL of the consent flow. Every query names the environment or a row id reached
through the caller's own session, so one environment never sees another's rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment
from autoport.vehicles.access import sandbox_only_problem


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
    # Vehicle commands the application asks for ("capability.command").
    commands: tuple[str, ...] = ()
    # Who operates it: its company, else its account's name; and its privacy policy.
    operator: str = ""
    privacy_url: str | None = None


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
        commands=tuple(orjson.loads(row["commands"])),
        operator=row["company"] or row["account_name"],
        privacy_url=row["privacy_url"],
    )


_APP_COLUMNS = (
    "a.id, a.environment, a.client_id, a.name, a.client_type, a.redirect_uris, a.properties, "
    "a.brands, a.disabled_at, a.commands, a.company, a.privacy_url, c.name AS account_name"
)
_APP_FROM = "applications a JOIN accounts c ON c.id = a.account_id"


async def get_application_by_client_id(
    conn: Connection, *, environment: Environment, client_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM {_APP_FROM} "  # noqa: S608 - fixed column list
        "WHERE a.client_id = :client_id AND a.environment = :environment",
        {"client_id": client_id, "environment": str(environment)},
    )
    return None if row is None else _application(row)


async def get_application(
    conn: Connection, *, environment: Environment, application_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM {_APP_FROM} "  # noqa: S608 - fixed column list
        "WHERE a.id = :id AND a.environment = :environment",
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


async def create_session(conn: Connection, *, token_hash: str, values: dict[str, Any]) -> None:
    row = {name: None for name in Session.__slots__} | values | {"token_hash": token_hash}
    row["environment"] = str(row["environment"])
    await conn.execute(
        f"INSERT INTO consent_sessions (token_hash, {_SESSION_COLUMNS}) VALUES "  # noqa: S608
        "(:token_hash, " + ", ".join(f":{name}" for name in Session.__slots__) + ")",
        row,
    )


async def get_session_by_token_hash(
    conn: Connection, *, environment: Environment, token_hash: str
) -> Session | None:
    row = await conn.fetch_one(
        f"SELECT {_SESSION_COLUMNS} FROM consent_sessions "  # noqa: S608 - fixed columns
        "WHERE token_hash = :token_hash AND environment = :environment",
        {"token_hash": token_hash, "environment": str(environment)},
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


async def verify_session_vin(
    conn: Connection, *, session_id: str, vin: str, subject: str, now_us: int
) -> bool:
    """Mark a vehicle code's session verified, only if it still names `vin`."""
    changed = await conn.execute(
        "UPDATE consent_sessions SET verified_at = :now, subject = :subject "
        "WHERE id = :session_id AND vin = :vin AND completed_at IS NULL AND expires_at > :now",
        {"session_id": session_id, "vin": vin, "subject": subject, "now": now_us},
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
    return await conn.execute(
        "DELETE FROM consent_sessions WHERE expires_at < :before", {"before": before_us}
    )


# ---------------------------------------------------------------------- authorizations


async def create_authorization(conn: Connection, *, values: dict[str, Any]) -> None:
    row = dict(values)
    row["environment"] = str(row["environment"])
    row["properties"] = orjson.dumps(list(row["properties"])).decode()
    row["commands"] = orjson.dumps(list(row.get("commands", ()))).decode()
    await conn.execute(
        "INSERT INTO authorizations (id, environment, application_id, vin, brand, properties, "
        "status, subject, valid_from, valid_until, created_at, updated_at, commands) VALUES "
        "(:id, :environment, :application_id, :vin, :brand, :properties, :status, :subject, "
        ":valid_from, :valid_until, :created_at, :updated_at, :commands)",
        row,
    )


async def get_authorization_status(
    conn: Connection, *, environment: Environment, authorization_id: str
) -> str | None:
    value = await conn.fetch_value(
        "SELECT status FROM authorizations WHERE id = :id AND environment = :environment",
        {"id": authorization_id, "environment": str(environment)},
    )
    return None if value is None else str(value)
