"""Data providers: who may POST /v1/ingest. A provider belongs to one environment and
holds one secret, shown once at creation; only its HMAC is stored.

A provider speaks for brands (`brands`): it pushes data only for them, and for the
brands it feeds (no carmaker connector decides their clearances) it decides the fleet
clearances applications ask for (autoport.fleet.decisions). `auto_approve_clearances`
approves every such request unseen: dangerous, off unless the operator turns it on.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import orjson

from autoport.catalog.brands import canonical_brand
from autoport.ingestion import repository
from autoport.kit.clock import to_iso
from autoport.kit.crypto import new_token, same, token_hash
from autoport.kit.db import Connection, Database, Row
from autoport.kit.environments import Environment
from autoport.kit.keyring import accepted
from autoport.vehicles.access import sandbox_only_problem

SECRET_PREFIX = "ap_ingest_"  # noqa: S105 - a prefix, not a secret


@dataclass(frozen=True, slots=True)
class Provider:
    id: str
    environment: Environment
    name: str
    created_at: int
    revoked_at: int | None
    brands: tuple[str, ...] = ()
    auto_approve_clearances: bool = False

    @classmethod
    def from_row(cls, row: Row) -> Provider:
        return cls(
            id=row["id"],
            environment=Environment(row["environment"]),
            name=row["name"],
            created_at=row["created_at"],
            revoked_at=row["revoked_at"],
            brands=tuple(orjson.loads(row["brands"])),
            auto_approve_clearances=bool(row["auto_approve_clearances"]),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "environment": str(self.environment),
            "name": self.name,
            "brands": list(self.brands),
            "auto_approve_clearances": self.auto_approve_clearances,
            "created_at": to_iso(self.created_at),
            "revoked_at": None if self.revoked_at is None else to_iso(self.revoked_at),
        }


class ProviderSettingError(ValueError):
    """A provider setting that cannot be stored; the message names it."""


def checked_brands(brands: list[str], environment: Environment) -> list[str]:
    """Canonical, without repeats; unknown brands and the sandbox brand outside the
    sandbox are refused."""
    result: list[str] = []
    for raw in brands:
        brand = canonical_brand(raw)
        if brand is None:
            raise ProviderSettingError(f"--brand: unknown brand {raw!r}")
        problem = sandbox_only_problem(brand, environment)
        if problem is not None:
            raise ProviderSettingError(f"--brand: {problem}")
        if brand not in result:
            result.append(brand)
    return result


async def create_provider(
    conn: Connection,
    *,
    key: bytes,
    environment: Environment,
    name: str,
    now_us: int,
    brands: list[str] | None = None,
    auto_approve_clearances: bool = False,
) -> tuple[Provider, str]:
    """A new provider and its secret (returned once, stored only as a hash)."""
    provider_id = "prv_" + secrets.token_hex(8)
    secret = new_token(SECRET_PREFIX)
    row = await repository.create_provider(
        conn,
        {
            "id": provider_id,
            "environment": str(environment),
            "name": name,
            "hash": token_hash(key, secret),
            "now": now_us,
            "brands": orjson.dumps(checked_brands(brands or [], environment)).decode(),
            "auto": auto_approve_clearances,
        },
    )
    return Provider.from_row(row), secret


async def update_provider(
    conn: Connection,
    *,
    provider_id: str,
    brands: list[str] | None = None,
    auto_approve_clearances: bool | None = None,
) -> Provider | None:
    """Change the given settings (None: unchanged) of an active provider; None when
    there is no such active provider."""
    row = await repository.get_active_provider(conn, provider_id=provider_id)
    if row is None:
        return None
    current = Provider.from_row(row)
    new_brands = (
        current.brands if brands is None else tuple(checked_brands(brands, current.environment))
    )
    auto = (
        current.auto_approve_clearances
        if auto_approve_clearances is None
        else auto_approve_clearances
    )
    updated = await repository.update_provider(
        conn,
        provider_id=provider_id,
        brands=orjson.dumps(list(new_brands)).decode(),
        auto_approve_clearances=auto,
    )
    return None if updated is None else Provider.from_row(updated)


async def list_providers(conn: Connection, *, environment: Environment | None) -> list[Provider]:
    rows = await repository.list_providers(
        conn, environment=None if environment is None else str(environment)
    )
    return [Provider.from_row(row) for row in rows]


async def revoke_provider(conn: Connection, *, provider_id: str, now_us: int) -> Provider | None:
    """Revoke at once; None when there is no such provider or it was already revoked."""
    row = await repository.revoke_provider(conn, provider_id=provider_id, now_us=now_us)
    return None if row is None else Provider.from_row(row)


async def authenticate_provider(
    db: Database, *, key: bytes, environment: Environment, secret: str
) -> Provider | None:
    """The active provider of `environment` holding `secret`, else None.

    During a key rotation window a secret hashed under a previous key still verifies,
    and its hash is rewritten under the current key then: a provider's secret never
    expires, so it must outlive the window (autoport.kit.keyring)."""
    row = None
    for used in accepted(key):
        digest = token_hash(used, secret)
        row = await repository.get_active_provider_by_secret_hash(db.reader, secret_hash=digest)
        if row is not None:
            if used != key:
                async with db.transaction() as conn:
                    await repository.rehash_provider_secret(
                        conn, old=digest, new=token_hash(key, secret)
                    )
            break
    # The lookup is by a keyed hash; the comparison is still constant-time by habit.
    if row is None or not same(row["secret_hash"], digest):
        return None
    if row["environment"] != str(environment):
        return None
    return Provider.from_row(row)
