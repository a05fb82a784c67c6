"""Durable counters with a window and a block, per environment, kind and subject, in
the database (`consent_throttles`): what must hold across processes and restarts, unlike
`kit.ratelimit` (memory or Redis). The vehicle-code tries and codes shown
(autoport.proof) and the console's sign-in tries count here.

Each function takes the caller's transaction: a hit is counted in one statement, and the
counter's row stays locked to that transaction, so parallel hits each count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autoport.kit.db import Connection
from autoport.kit.environments import Environment


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


async def take(
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


async def block(
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


async def forget(conn: Connection, *, environment: Environment, kind: str, subject: str) -> None:
    await conn.execute(
        f"DELETE FROM consent_throttles WHERE {_THROTTLE}",  # noqa: S608 - a fixed condition
        _throttle_key(environment, kind, subject),
    )


async def refund(conn: Connection, *, environment: Environment, kind: str, subject: str) -> None:
    await conn.execute(
        f"UPDATE consent_throttles SET hits = hits - 1 WHERE {_THROTTLE} "  # noqa: S608
        "AND hits > 0",
        _throttle_key(environment, kind, subject),
    )


async def list_blocks(
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


async def delete_spent(conn: Connection, *, now_us: int) -> int:
    """Throttles whose window and block both ended: they would start afresh anyway."""
    return await conn.execute(
        "DELETE FROM consent_throttles WHERE window_ends <= :now "
        "AND (blocked_until IS NULL OR blocked_until <= :now)",
        {"now": now_us},
    )
