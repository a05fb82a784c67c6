"""Who may read a vehicle: the one rule the pull endpoint, history and streams share.

An application reads a VIN through an owner's authorization (approved, inside its
validity window: the granted properties) or through an approved fleet clearance (the
application's registered properties). Every query is scoped by environment.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from autoport.kit.db import Connection
from autoport.kit.environments import Environment


@dataclass(frozen=True, slots=True)
class Reader:
    application_id: str
    properties: frozenset[str]  # "capability.property"


_CONSENT_READERS = """
SELECT application_id, properties FROM authorizations
WHERE environment = :environment AND vin = :vin AND status = 'approved'
  AND valid_from <= :now AND (valid_until IS NULL OR valid_until > :now)
"""

_FLEET_READERS = """
SELECT a.id AS application_id, a.properties AS properties
FROM fleet_vehicles f JOIN applications a ON a.id = f.application_id
WHERE f.environment = :environment AND f.vin = :vin AND f.status = 'approved'
  AND a.disabled_at IS NULL
"""


async def readers_of(
    conn: Connection, *, environment: Environment, vin: str, now_us: int
) -> list[Reader]:
    """Every application that may read `vin` now, with the union of what it may read."""
    params = {"environment": str(environment), "vin": vin, "now": now_us}
    merged: dict[str, set[str]] = {}
    for sql in (_CONSENT_READERS, _FLEET_READERS):
        for row in await conn.fetch_all(sql, params):
            merged.setdefault(row["application_id"], set()).update(orjson.loads(row["properties"]))
    return [Reader(app_id, frozenset(props)) for app_id, props in sorted(merged.items())]


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
