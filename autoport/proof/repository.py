"""SQL of the ownership proof's vehicle codes (`consent_vehicle_codes`): a code is
stored as its keyed hash, bound to the session and VIN it was shown for, and (where the
emulated display reads it from the store) as the display's text until it is used or
retired. Single use: consumed in one conditional UPDATE."""

from __future__ import annotations

from autoport.kit.db import Connection
from autoport.kit.environments import Environment


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


async def create_code(
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


async def consume_code(conn: Connection, *, code_id: str, now_us: int) -> bool:
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


async def delete_session_codes(conn: Connection, *, session_id: str) -> None:
    """A sign-in ended: its codes go with it."""
    await conn.execute(
        "DELETE FROM consent_vehicle_codes WHERE session_id = :id", {"id": session_id}
    )


async def delete_expired_codes(conn: Connection, *, before_us: int) -> int:
    """Codes that expired before `before_us` (used or not): nothing can use them."""
    return await conn.execute(
        "DELETE FROM consent_vehicle_codes WHERE expires_at < :before", {"before": before_us}
    )
