"""Who may read a vehicle: the one rule the pull endpoint, history and streams share.

An application reads a VIN through an owner's authorization (approved, inside its
validity window: the granted properties) or through an approved fleet clearance (the
application's registered properties). Every query is scoped by environment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import orjson
from sqlalchemy import bindparam, text

from autoport.kit.db import Connection
from autoport.kit.environments import Environment


@dataclass(frozen=True, slots=True)
class Reader:
    application_id: str
    properties: frozenset[str]  # "capability.property"


# Many VINs per query (an expanding IN): the stream builder asks for a whole batch of
# events at once, where per-VIN round trips were most of its time on PostgreSQL.
# A disabled application reads nothing, through consent as through fleet clearance.
_CONSENT_READERS = """
SELECT z.vin AS vin, z.application_id AS application_id, z.properties AS properties
FROM authorizations z JOIN applications a ON a.id = z.application_id
WHERE z.environment = :environment AND z.vin IN :vins AND z.status = 'approved'
  AND z.valid_from <= :now AND (z.valid_until IS NULL OR z.valid_until > :now)
  AND a.disabled_at IS NULL
"""

_FLEET_READERS = """
SELECT f.vin AS vin, a.id AS application_id, a.properties AS properties
FROM fleet_vehicles f JOIN applications a ON a.id = f.application_id
WHERE f.environment = :environment AND f.vin IN :vins AND f.status = 'approved'
  AND a.disabled_at IS NULL
"""


async def readers_of_many(
    conn: Connection, *, environment: Environment, vins: Iterable[str], now_us: int
) -> dict[str, list[Reader]]:
    """For each of `vins`, every application that may read it now, with the union of
    what it may read (ordered by application id; an empty list when none may)."""
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
            apps = merged[row["vin"]]
            apps.setdefault(row["application_id"], set()).update(orjson.loads(row["properties"]))
    return {
        vin: [Reader(app_id, frozenset(props)) for app_id, props in sorted(apps.items())]
        for vin, apps in merged.items()
    }


async def readers_of(
    conn: Connection, *, environment: Environment, vin: str, now_us: int
) -> list[Reader]:
    """Every application that may read `vin` now, with the union of what it may read."""
    found = await readers_of_many(conn, environment=environment, vins=(vin,), now_us=now_us)
    return found[vin]


async def fleet_clearance_approved(
    conn: Connection, *, environment: Environment, application_id: str, vin: str
) -> bool:
    """Whether the application's fleet clearance of `vin` is approved."""
    status = await conn.fetch_value(
        "SELECT status FROM fleet_vehicles "
        "WHERE environment = :environment AND application_id = :application_id AND vin = :vin",
        {"environment": str(environment), "application_id": application_id, "vin": vin},
    )
    return bool(status == "approved")
