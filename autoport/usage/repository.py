"""SQL of the usage figures. Every read is scoped to one environment and the given
applications (the caller has checked which ones its user may see)."""

from __future__ import annotations

from collections.abc import Sequence

from autoport.kit.db import Connection, Row

# Counts are added, never overwritten: every process flushes its own increments.
_ADD = """
INSERT INTO usage_daily (environment, application_id, day, requests, rate_limited)
VALUES (:environment, :application_id, :day, :requests, :rate_limited)
ON CONFLICT (environment, application_id, day) DO UPDATE SET
    requests = usage_daily.requests + excluded.requests,
    rate_limited = usage_daily.rate_limited + excluded.rate_limited
"""

_DAY_US = 86_400 * 1_000_000


async def add_counts(conn: Connection, rows: Sequence[dict[str, object]]) -> None:
    if rows:
        await conn.execute_many(_ADD, rows)


def _in(names: Sequence[str], prefix: str) -> tuple[str, dict[str, str]]:
    params = {f"{prefix}{i}": name for i, name in enumerate(names)}
    return ", ".join(f":{key}" for key in params), params


async def list_daily_requests(
    conn: Connection, *, environment: str, application_ids: Sequence[str], since_day: str
) -> list[Row]:
    """(application_id, day, requests, rate_limited) from `since_day` on, by day."""
    if not application_ids:
        return []
    placeholders, params = _in(application_ids, "a")
    return await conn.fetch_all(
        "SELECT application_id, day, requests, rate_limited FROM usage_daily "  # noqa: S608
        f"WHERE environment = :environment AND application_id IN ({placeholders}) "
        "AND day >= :since ORDER BY day, application_id",
        {"environment": environment, "since": since_day, **params},
    )


async def list_daily_deliveries(
    conn: Connection, *, environment: str, application_ids: Sequence[str], since_us: int
) -> list[Row]:
    """(application_id, day number, status, count) of the webhook deliveries created
    since `since_us`, by status (pending, succeeded, failed)."""
    if not application_ids:
        return []
    placeholders, params = _in(application_ids, "a")
    return await conn.fetch_all(
        f"SELECT application_id, created_at / {_DAY_US} AS day, status, COUNT(*) AS n "  # noqa: S608
        "FROM webhook_deliveries "
        f"WHERE environment = :environment AND application_id IN ({placeholders}) "
        "AND created_at >= :since GROUP BY application_id, created_at / "
        f"{_DAY_US}, status",
        {"environment": environment, "since": since_us, **params},
    )
