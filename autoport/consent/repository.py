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
    )


_APP_COLUMNS = (
    "id, environment, client_id, name, client_type, redirect_uris, properties, brands, "
    "disabled_at, commands"
)


async def get_application_by_client_id(
    conn: Connection, *, environment: Environment, client_id: str
) -> Application | None:
    row = await conn.fetch_one(
        f"SELECT {_APP_COLUMNS} FROM applications "  # noqa: S608 - fixed column list
        "WHERE client_id = :client_id AND environment = :environment",
        {"client_id": client_id, "environment": str(environment)},
    )
    return None if row is None else _application(row)


async def get_application(
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


async def get_session(
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
    await conn.execute(
        "DELETE FROM consent_vehicle_codes WHERE session_id IN "
        "(SELECT id FROM consent_sessions WHERE expires_at < :before)",
        {"before": before_us},
    )
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


# ----------------------------------------------------------------------- vehicle codes


async def retire_session_codes(conn: Connection, *, session_id: str, now_us: int) -> None:
    await conn.execute(
        "UPDATE consent_vehicle_codes SET expires_at = :now, display_code = NULL "
        "WHERE session_id = :session_id AND consumed_at IS NULL AND expires_at > :now",
        {"session_id": session_id, "now": now_us},
    )


async def retire_vin_codes(
    conn: Connection, *, environment: Environment, vin: str, now_us: int
) -> None:
    """Every session's live code for the VIN: the display goes blank at a lockout."""
    await conn.execute(
        "UPDATE consent_vehicle_codes SET expires_at = :now, display_code = NULL "
        "WHERE environment = :environment AND vin = :vin AND consumed_at IS NULL "
        "AND expires_at > :now",
        {"environment": str(environment), "vin": vin, "now": now_us},
    )


async def create_vehicle_code(
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
    await conn.execute(
        "INSERT INTO consent_vehicle_codes (id, environment, vin, session_id, code_hash, "
        "display_code, created_at, expires_at) VALUES (:id, :environment, :vin, "
        ":session_id, :code_hash, :display_code, :now, :expires_at)",
        {
            "id": code_id,
            "environment": str(environment),
            "vin": vin,
            "session_id": session_id,
            "code_hash": code_hash,
            "display_code": display_code,
            "now": now_us,
            "expires_at": expires_at,
        },
    )


async def get_live_code(
    conn: Connection, *, session_id: str, environment: Environment, vin: str, now_us: int
) -> tuple[str, str] | None:
    """The session's live code shown for this VIN: (id, hash). A code shown for another
    VIN never verifies this one."""
    row = await conn.fetch_one(
        "SELECT id, code_hash FROM consent_vehicle_codes WHERE session_id = :session_id "
        "AND environment = :environment AND vin = :vin AND consumed_at IS NULL "
        "AND expires_at > :now ORDER BY created_at DESC LIMIT 1",
        {"session_id": session_id, "environment": str(environment), "vin": vin, "now": now_us},
    )
    return None if row is None else (row["id"], row["code_hash"])


async def consume_vehicle_code(conn: Connection, *, code_id: str, now_us: int) -> bool:
    row = await conn.fetch_one(
        "UPDATE consent_vehicle_codes SET consumed_at = :now, display_code = NULL "
        "WHERE id = :id AND consumed_at IS NULL AND expires_at > :now RETURNING id",
        {"id": code_id, "now": now_us},
    )
    return row is not None


async def get_display_code(
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


# --------------------------------------------------------------------------- throttles


@dataclass(frozen=True, slots=True)
class Taken:
    """A throttle after one more hit: the hits in the window (not counted while
    blocked), when the window ends, and a running block."""

    hits: int
    window_ends: int
    blocked_until: int | None


_THROTTLE = "environment = :environment AND kind = :kind AND subject = :subject"


def _throttle_key(environment: Environment, kind: str, subject: str) -> dict[str, Any]:
    return {"environment": str(environment), "kind": kind, "subject": subject}


async def take_throttle(
    conn: Connection,
    *,
    environment: Environment,
    kind: str,
    subject: str,
    window_us: int,
    now_us: int,
) -> Taken:
    """Count one hit in one statement (parallel hits each count; the row stays locked
    to this transaction): a new window when the last one ended; nothing while blocked."""
    row = await conn.fetch_one(
        "INSERT INTO consent_throttles AS t (environment, kind, subject, hits, window_ends, "
        "blocked_until) VALUES (:environment, :kind, :subject, 1, :ends, NULL) "
        "ON CONFLICT (environment, kind, subject) DO UPDATE SET "
        "hits = CASE WHEN t.blocked_until > :now THEN t.hits "
        "WHEN t.window_ends <= :now THEN 1 ELSE t.hits + 1 END, "
        "window_ends = CASE WHEN t.blocked_until > :now THEN t.window_ends "
        "WHEN t.window_ends <= :now THEN :ends ELSE t.window_ends END "
        "RETURNING hits, window_ends, blocked_until",
        {**_throttle_key(environment, kind, subject), "ends": now_us + window_us, "now": now_us},
    )
    assert row is not None
    blocked = row["blocked_until"]
    return Taken(
        int(row["hits"]),
        int(row["window_ends"]),
        int(blocked) if blocked is not None and blocked > now_us else None,
    )


async def block_throttle(
    conn: Connection,
    *,
    environment: Environment,
    kind: str,
    subject: str,
    until_us: int,
    now_us: int,
) -> None:
    """Block until `until_us`; counting starts afresh after it."""
    await conn.execute(
        "UPDATE consent_throttles SET blocked_until = :until, hits = 0, "  # noqa: S608
        f"window_ends = :now WHERE {_THROTTLE}",
        {**_throttle_key(environment, kind, subject), "until": until_us, "now": now_us},
    )


async def forget_throttle(
    conn: Connection, *, environment: Environment, kind: str, subject: str
) -> None:
    await conn.execute(
        f"DELETE FROM consent_throttles WHERE {_THROTTLE}",  # noqa: S608 - a fixed condition
        _throttle_key(environment, kind, subject),
    )


async def refund_throttle(
    conn: Connection, *, environment: Environment, kind: str, subject: str
) -> None:
    await conn.execute(
        f"UPDATE consent_throttles SET hits = hits - 1 WHERE {_THROTTLE} "  # noqa: S608
        "AND hits > 0",
        _throttle_key(environment, kind, subject),
    )


async def list_throttle_blocks(
    conn: Connection,
    *,
    environment: Environment,
    subjects: dict[str, str],
    now_us: int,
) -> dict[str, int]:
    """kind -> end of its running block, of the given kind -> subject pairs."""
    if not subjects:
        return {}
    pairs = " OR ".join(
        f"(kind = :kind{i} AND subject = :subject{i})" for i in range(len(subjects))
    )
    params: dict[str, Any] = {"environment": str(environment), "now": now_us}
    for i, (kind, subject) in enumerate(subjects.items()):
        params[f"kind{i}"] = kind
        params[f"subject{i}"] = subject
    rows = await conn.fetch_all(
        # Only placeholders are formatted in (one pair of them per subject).
        "SELECT kind, blocked_until FROM consent_throttles "  # noqa: S608
        f"WHERE environment = :environment AND blocked_until > :now AND ({pairs})",
        params,
    )
    return {row["kind"]: int(row["blocked_until"]) for row in rows}


async def delete_spent_throttles(conn: Connection, *, now_us: int) -> int:
    """Throttles whose window and block both ended: they would start afresh anyway."""
    return await conn.execute(
        "DELETE FROM consent_throttles WHERE window_ends <= :now "
        "AND (blocked_until IS NULL OR blocked_until <= :now)",
        {"now": now_us},
    )
