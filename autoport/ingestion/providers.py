"""Data providers: who may POST /v1/ingest. A provider belongs to one environment and
holds one secret, shown once at creation; only its HMAC is stored."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from autoport.kit.clock import to_iso
from autoport.kit.crypto import new_token, same, token_hash
from autoport.kit.db import Connection, Database, Row
from autoport.kit.environments import Environment

SECRET_PREFIX = "ap_ingest_"  # noqa: S105 - a prefix, not a secret


@dataclass(frozen=True, slots=True)
class Provider:
    id: str
    environment: Environment
    name: str
    created_at: int
    revoked_at: int | None

    @classmethod
    def from_row(cls, row: Row) -> Provider:
        return cls(
            id=row["id"],
            environment=Environment(row["environment"]),
            name=row["name"],
            created_at=row["created_at"],
            revoked_at=row["revoked_at"],
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "environment": str(self.environment),
            "name": self.name,
            "created_at": to_iso(self.created_at),
            "revoked_at": None if self.revoked_at is None else to_iso(self.revoked_at),
        }


async def create_provider(
    conn: Connection, *, key: bytes, environment: Environment, name: str, now_us: int
) -> tuple[Provider, str]:
    """A new provider and its secret (returned once, stored only as a hash)."""
    provider_id = "prv_" + secrets.token_hex(8)
    secret = new_token(SECRET_PREFIX)
    await conn.execute(
        "INSERT INTO ingest_providers (id, environment, name, secret_hash, created_at) "
        "VALUES (:id, :environment, :name, :hash, :now)",
        {
            "id": provider_id,
            "environment": str(environment),
            "name": name,
            "hash": token_hash(key, secret),
            "now": now_us,
        },
    )
    return Provider(provider_id, environment, name, now_us, None), secret


async def list_providers(db: Database, *, environment: Environment | None) -> list[Provider]:
    if environment is None:
        rows = await db.fetch_all(
            "SELECT id, environment, name, created_at, revoked_at FROM ingest_providers "
            "ORDER BY created_at, id"
        )
    else:
        rows = await db.fetch_all(
            "SELECT id, environment, name, created_at, revoked_at FROM ingest_providers "
            "WHERE environment = :environment ORDER BY created_at, id",
            {"environment": str(environment)},
        )
    return [Provider.from_row(row) for row in rows]


async def revoke_provider(conn: Connection, *, provider_id: str, now_us: int) -> Provider | None:
    """Revoke at once; None when there is no such provider or it was already revoked."""
    row = await conn.fetch_one(
        "UPDATE ingest_providers SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL "
        "RETURNING id, environment, name, created_at, revoked_at",
        {"id": provider_id, "now": now_us},
    )
    return None if row is None else Provider.from_row(row)


async def authenticate_provider(
    db: Database, *, key: bytes, environment: Environment, secret: str
) -> Provider | None:
    """The active provider of `environment` holding `secret`, else None."""
    digest = token_hash(key, secret)
    row = await db.fetch_one(
        "SELECT id, environment, name, created_at, revoked_at, secret_hash "
        "FROM ingest_providers WHERE secret_hash = :hash AND revoked_at IS NULL",
        {"hash": digest},
    )
    # The lookup is by a keyed hash; the comparison is still constant-time by habit.
    if row is None or not same(row["secret_hash"], digest):
        return None
    if row["environment"] != str(environment):
        return None
    return Provider.from_row(row)
