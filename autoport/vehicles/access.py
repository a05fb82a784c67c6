"""Who may read a vehicle: the one rule the pull endpoint, history and streams share.

An application reads a VIN through an owner's authorization (approved, inside its
validity window: the granted properties) or through an approved fleet clearance (the
application's registered properties). Every query is scoped by environment. Either is
for one brand: it serves only data stored for that brand (`brand_serves`), and only
while that brand is still activated for the application.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import orjson
from sqlalchemy import bindparam, text

from autoport.catalog.brands import SANDBOX_BRAND, UNKNOWN_BRAND
from autoport.kit.db import Connection
from autoport.kit.environments import Environment


def sandbox_only_problem(brand: str, environment: Environment) -> str | None:
    """Why `brand` cannot be used in `environment`, or None. The sandbox brand proves no
    ownership (instant consent, timed clearances, a public carmaker password), so it never
    exists in production."""
    if brand == SANDBOX_BRAND and environment is not Environment.sandbox:
        return "the sandbox brand exists only in the sandbox environment"
    return None


def brand_serves(granted: str, stored: str, environment: Environment) -> bool:
    """Whether a grant or clearance for brand `granted` may serve data stored as `stored`:
    the same brand, or data whose sender named no brand (`unknown`). In the sandbox every
    vehicle's data is stored as `sandbox` and the emulated carmaker serves every brand."""
    if environment is Environment.sandbox:
        return stored in (SANDBOX_BRAND, granted, UNKNOWN_BRAND)
    # Production never serves through the sandbox brand (a grant stored before it was
    # refused there).
    return granted != SANDBOX_BRAND and stored in (granted, UNKNOWN_BRAND)


@dataclass(frozen=True, slots=True)
class Reader:
    application_id: str
    properties: frozenset[str]  # "capability.property"


# Many VINs per query (an expanding IN): the stream builder asks for a whole batch of
# events at once, where per-VIN round trips were most of its time on PostgreSQL.
# A disabled application reads nothing, through consent as through fleet clearance.
_CONSENT_READERS = """
SELECT z.vin AS vin, z.application_id AS application_id, z.properties AS properties,
       z.brand AS brand, a.brands AS app_brands
FROM authorizations z JOIN applications a ON a.id = z.application_id
WHERE z.environment = :environment AND z.vin IN :vins AND z.status = 'approved'
  AND z.valid_from <= :now AND (z.valid_until IS NULL OR z.valid_until > :now)
  AND a.disabled_at IS NULL
"""

_FLEET_READERS = """
SELECT f.vin AS vin, a.id AS application_id, a.properties AS properties,
       f.brand AS brand, a.brands AS app_brands
FROM fleet_vehicles f JOIN applications a ON a.id = f.application_id
WHERE f.environment = :environment AND f.vin IN :vins AND f.status = 'approved'
  AND a.disabled_at IS NULL
"""


async def readers_of_many(
    conn: Connection,
    *,
    environment: Environment,
    vins: Iterable[str],
    now_us: int,
    brands: Mapping[str, str],
) -> dict[str, list[Reader]]:
    """For each of `vins`, every application that may read it now, with the union of
    what it may read (ordered by application id; an empty list when none may).
    `brands` maps each VIN to the brand its data is stored for: only grants and
    clearances of a brand that serves it count (a VIN missing from it: none)."""
    merged: dict[str, dict[str, set[str]]] = {vin: {} for vin in vins}
    if not merged:
        return {}
    params = {"environment": str(environment), "now": now_us}
    for sql in (_CONSENT_READERS, _FLEET_READERS):
        # Values are bound into the statement: an expanding IN is rendered when it is
        # compiled, which needs them (and a text() refuses a parameter it lacks).
        statement = text(sql).bindparams(
            bindparam("vins", value=list(merged), expanding=True),
            *(bindparam(name, value=value) for name, value in params.items() if f":{name}" in sql),
        )
        for row in await conn.fetch_all(statement):
            data_brand = brands.get(row["vin"])
            if (
                data_brand is None
                or row["brand"] not in orjson.loads(row["app_brands"])
                or not brand_serves(row["brand"], data_brand, environment)
            ):
                continue
            apps = merged[row["vin"]]
            apps.setdefault(row["application_id"], set()).update(orjson.loads(row["properties"]))
    return {
        vin: [Reader(app_id, frozenset(props)) for app_id, props in sorted(apps.items())]
        for vin, apps in merged.items()
    }


async def readers_of(
    conn: Connection, *, environment: Environment, vin: str, brand: str, now_us: int
) -> list[Reader]:
    """Every application that may read `vin`'s data stored for `brand` now, with the
    union of what it may read."""
    found = await readers_of_many(
        conn, environment=environment, vins=(vin,), now_us=now_us, brands={vin: brand}
    )
    return found[vin]


async def approved_clearance_brand(
    conn: Connection, *, environment: Environment, application_id: str, vin: str
) -> str | None:
    """The brand of the application's fleet clearance of `vin` when it is approved."""
    row = await conn.fetch_one(
        "SELECT status, brand FROM fleet_vehicles "
        "WHERE environment = :environment AND application_id = :application_id AND vin = :vin",
        {"environment": str(environment), "application_id": application_id, "vin": vin},
    )
    return str(row["brand"]) if row is not None and row["status"] == "approved" else None
