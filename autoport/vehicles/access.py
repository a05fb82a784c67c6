"""Who may read a vehicle: the one rule the pull endpoint, history and streams share.

An application reads a VIN through an owner's authorization (approved, inside its
validity window: the granted properties) or through an approved fleet clearance (the
application's registered properties). Every query is scoped by environment. Either is
for one brand: it serves only data stored for that brand (`brand_serves`), and only
while that brand is still activated for the application. A sandbox car a console user
created belongs to that account: other accounts' applications reach it through nothing
(`another_accounts_car`; the readers and standings below leave such cars out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from autoport.catalog.brands import SANDBOX_BRAND, UNKNOWN_BRAND
from autoport.kit.auth import Caller, CallerKind, GrantStatus, require_scope
from autoport.kit.clock import to_iso
from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.state import AppState
from autoport.kit.versioned import versioned_of


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


# A sandbox car a console user created belongs to that user's account (the console
# says so): only the account's applications clear it, get consent for it, read it and
# command it. Cars the operator made (no account) and VINs no car has are anyone's.
# `{alias}`: the grant's or clearance's table, `a`: its application.
_NOT_ANOTHER_ACCOUNTS_CAR = """
NOT EXISTS (SELECT 1 FROM sandbox_vehicles s WHERE s.environment = {alias}.environment
    AND s.vin = {alias}.vin AND s.account_id IS NOT NULL AND s.account_id <> a.account_id)
"""
ANOTHER_ACCOUNTS_CAR = "this sandbox vehicle belongs to another account"

_ANOTHER_ACCOUNTS_CAR = """
SELECT 1 FROM sandbox_vehicles s JOIN applications a ON a.id = :application_id
WHERE s.environment = :environment AND s.vin = :vin
  AND s.account_id IS NOT NULL AND s.account_id <> a.account_id
"""


async def another_accounts_car(
    conn: Connection, *, environment: Environment, application_id: str, vin: str
) -> bool:
    """Whether `vin` is a sandbox car a console user of another account than the
    application's created (see above): the application may not clear it, get consent
    for it, read or command it."""
    if environment is not Environment.sandbox:
        return False
    found = await conn.fetch_one(
        _ANOTHER_ACCOUNTS_CAR,
        {"environment": str(environment), "application_id": application_id, "vin": vin},
    )
    return found is not None


async def accounts_cars(
    conn: Connection, *, environment: Environment, vins: Iterable[str]
) -> set[str]:
    """Which of `vins` are sandbox cars a console user created (each belongs to an
    account). Where no application asks (the owner portal), only a proof that reaches the
    account proves one: never the sandbox's instant one or its simulated carmaker login."""
    wanted = sorted(set(vins))
    if environment is not Environment.sandbox or not wanted:
        return set()
    rows = await conn.fetch_all(
        "SELECT vin FROM sandbox_vehicles WHERE environment = :environment "
        "AND vin IN :vins AND account_id IS NOT NULL",
        {"environment": str(environment), "vins": wanted},
    )
    return {str(row["vin"]) for row in rows}


@dataclass(frozen=True, slots=True)
class Reader:
    application_id: str
    properties: frozenset[str]  # "capability.property"


# Many VINs per query (a list parameter, autoport.kit.db): the stream builder asks for a
# whole batch of events at once, where per-VIN round trips were most of its time on
# PostgreSQL.
# A disabled application reads nothing, through consent as through fleet clearance.
_CONSENT_READERS = """
SELECT z.vin AS vin, z.application_id AS application_id, z.properties AS properties,
       z.brand AS brand, a.brands AS app_brands
FROM authorizations z JOIN applications a ON a.id = z.application_id
WHERE z.environment = :environment AND z.vin IN :vins AND z.status = 'approved'
  AND z.valid_from <= :now AND (z.valid_until IS NULL OR z.valid_until > :now)
  AND a.disabled_at IS NULL AND """ + _NOT_ANOTHER_ACCOUNTS_CAR.format(alias="z")

_FLEET_READERS = """
SELECT f.vin AS vin, a.id AS application_id, a.properties AS properties,
       f.brand AS brand, a.brands AS app_brands
FROM fleet_vehicles f JOIN applications a ON a.id = f.application_id
WHERE f.environment = :environment AND f.vin IN :vins AND f.status = 'approved'
  AND a.disabled_at IS NULL AND """ + _NOT_ANOTHER_ACCOUNTS_CAR.format(alias="f")


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
    params = {"environment": str(environment), "now": now_us, "vins": list(merged)}
    for sql in (_CONSENT_READERS, _FLEET_READERS):
        for row in await conn.fetch_all(sql, params):
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


# --------------------------------------------------- standing, read when it must be now


@dataclass(frozen=True, slots=True)
class Way:
    """How an application reaches a vehicle: through an owner's authorization, or (no
    authorization) through its fleet clearance."""

    environment: Environment
    application_id: str
    vin: str
    authorization_id: str | None


@dataclass(frozen=True, slots=True)
class Standing:
    """What a way allows now, read from the database: the properties it reads, the
    commands it may send ("capability.command": the owner's granted ones through an
    authorization, the application's registered ones through a clearance) and its brand."""

    properties: frozenset[str]
    commands: frozenset[str]
    brand: str


@dataclass(frozen=True, slots=True)
class Lost:
    """Why a way allows nothing now (said to the application: its own access only)."""

    reason: str


_GRANT_STANDINGS = """
SELECT z.id AS authorization_id, z.environment AS environment, z.application_id AS
       application_id, z.vin AS vin, z.brand AS brand, z.status AS status,
       z.valid_from AS valid_from, z.valid_until AS valid_until,
       z.properties AS properties, z.commands AS commands,
       a.brands AS app_brands, a.disabled_at AS disabled_at,
       NOT {owned} AS elsewhere
FROM authorizations z JOIN applications a ON a.id = z.application_id
WHERE z.id IN ({ids})
"""

_CLEARANCE_STANDINGS = """
SELECT f.environment AS environment, f.application_id AS application_id, f.vin AS vin,
       f.brand AS brand, f.status AS status, a.properties AS properties,
       a.commands AS commands, a.brands AS app_brands, a.disabled_at AS disabled_at,
       NOT {owned} AS elsewhere
FROM fleet_vehicles f JOIN applications a ON a.id = f.application_id
WHERE f.application_id IN ({apps}) AND f.vin IN ({vins})
"""


def _placeholders(prefix: str, values: Iterable[str], params: dict[str, Any]) -> str:
    names = []
    for index, value in enumerate(sorted(set(values))):
        params[f"{prefix}{index}"] = value
        names.append(f":{prefix}{index}")
    return ", ".join(names)


def _judge(row: Row, environment: Environment, now_us: int, *, grant: bool) -> Standing | Lost:
    if row["disabled_at"] is not None:
        return Lost("the application is disabled")
    if grant:
        status = row["status"]
        if status == "revoked":
            return Lost("the owner withdrew the authorization")
        if status != "approved":
            return Lost(f"the authorization is {status}")
        if now_us < row["valid_from"]:
            return Lost(f"the authorization is valid from {to_iso(row['valid_from'])}")
        if row["valid_until"] is not None and now_us >= row["valid_until"]:
            return Lost(f"the authorization ended at {to_iso(row['valid_until'])}")
    elif row["status"] != "approved":
        return Lost(f"the fleet clearance is {row['status']}")
    if row["elsewhere"]:
        return Lost(ANOTHER_ACCOUNTS_CAR)
    brand = str(row["brand"])
    if brand not in orjson.loads(row["app_brands"]):
        return Lost(f"the brand {brand!r} is no longer activated for this application")
    problem = sandbox_only_problem(brand, environment)
    if problem is not None:
        return Lost(problem)
    return Standing(
        frozenset(orjson.loads(row["properties"])), frozenset(orjson.loads(row["commands"])), brand
    )


async def standings(
    conn: Connection, ways: Iterable[Way], *, now_us: int, hold: bool = False
) -> dict[Way, Standing | Lost]:
    """What each way allows now, read from the database (never from a token verified
    earlier). `hold` (in a write transaction) keeps the rows read from changing until it
    commits (PostgreSQL: FOR SHARE; SQLite's writer excludes every other), so a
    withdrawal, a disable or a revocation either lands before and is seen here, or waits
    until what this transaction decided on the strength of it is committed."""
    wanted = set(ways)
    found: dict[Way, Standing | Lost] = {}
    hold_rows = hold and conn.dialect == "postgresql"
    grants = {way.authorization_id for way in wanted if way.authorization_id is not None}
    if grants:
        params: dict[str, Any] = {}
        sql = _GRANT_STANDINGS.format(
            ids=_placeholders("z", grants, params),
            owned=_NOT_ANOTHER_ACCOUNTS_CAR.format(alias="z"),
        ) + (" FOR SHARE OF z, a" if hold_rows else "")
        for row in await conn.fetch_all(sql, params):
            environment = Environment(row["environment"])
            way = Way(environment, row["application_id"], row["vin"], row["authorization_id"])
            if way in wanted:
                found[way] = _judge(row, environment, now_us, grant=True)
    clearances = [way for way in wanted if way.authorization_id is None]
    if clearances:
        params = {}
        sql = _CLEARANCE_STANDINGS.format(
            apps=_placeholders("a", (way.application_id for way in clearances), params),
            vins=_placeholders("v", (way.vin for way in clearances), params),
            owned=_NOT_ANOTHER_ACCOUNTS_CAR.format(alias="f"),
        ) + (" FOR SHARE OF f, a" if hold_rows else "")
        for row in await conn.fetch_all(sql, params):
            environment = Environment(row["environment"])
            way = Way(environment, row["application_id"], row["vin"], None)
            if way in wanted:
                found[way] = _judge(row, environment, now_us, grant=False)
    for way in wanted - found.keys():
        found[way] = Lost(
            "the authorization no longer exists"
            if way.authorization_id is not None
            else "the application has no fleet clearance for this vehicle"
        )
    return found


# ----------------------------------------------------------------- the access check
# What a caller may read of a VIN now: the pull, the history, a command's submit and its
# answer ask here (one rule, read through the app's VersionedReads: a pull queries only
# after a commit to the tables a check reads).

DATA_SCOPE = "vehicle:data"


def forbidden(detail: str) -> ApiError:
    """A refused read or command, in the pull's words (source: the token)."""
    return ApiError(403, detail, source="Authorization")


async def readable_properties(
    state: AppState, caller: Caller, vin: str
) -> tuple[frozenset[str], str]:
    """What `caller` may read of `vin` now, as "capability.property", and the brand of
    the grant or clearance that allows it; 403 otherwise."""
    require_scope(caller, DATA_SCOPE)
    if caller.kind is CallerKind.vehicle:
        grant = caller.grant
        if grant is None or grant.vin != vin:
            raise forbidden("the access token does not grant access to this vehicle")
        if grant.status is GrantStatus.pending:
            raise forbidden(
                "the owner's approval of this authorization is pending; "
                "data is available once the carmaker confirms it"
            )
        if grant.status is not GrantStatus.approved:
            raise forbidden(f"the authorization is {grant.status}")
        now = state.clock.now_us()
        if now < grant.valid_from_us:
            raise forbidden(
                f"the authorization is valid from {to_iso(grant.valid_from_us)}, not yet now"
            )
        if grant.valid_until_us is not None and now >= grant.valid_until_us:
            raise forbidden(f"the authorization ended at {to_iso(grant.valid_until_us)}")
        properties, brand = grant.properties, grant.brand
    else:
        found = await _clearance_brand(state, caller, vin)
        if found is None:
            raise forbidden("the application has no approved fleet clearance for this vehicle")
        properties, brand = caller.application_properties, found
    if brand not in caller.application_brands:
        raise forbidden(f"the brand {brand!r} is no longer activated for this application")
    if caller.environment is Environment.sandbox and await _another_accounts_car(
        state, caller, vin
    ):
        raise forbidden(ANOTHER_ACCOUNTS_CAR)
    # A grant or clearance stored before production refused the sandbox brand.
    problem = sandbox_only_problem(brand, caller.environment)
    if problem is not None:
        raise forbidden(problem)
    return properties, brand


def check_brand(caller: Caller, brand: str, row: Row | None) -> None:
    """403 when the stored data of the vehicle is another brand's than the grant's."""
    if row is not None and not brand_serves(brand, row["brand"], caller.environment):
        raise forbidden(
            f"the vehicle's data is stored for the brand {row['brand']!r}; this "
            f"application's access is for {brand!r}"
        )


_SANDBOX_CARS = frozenset({"sandbox_vehicles"})
_CLEARANCES = frozenset({"fleet_vehicles"})


async def _another_accounts_car(state: AppState, caller: Caller, vin: str) -> bool:
    """autoport.vehicles.access.another_accounts_car, read again only after a commit to
    the sandbox cars (a running car's steps: about one a second, not one per pull)."""
    found: bool = await versioned_of(state).get(
        state.database,
        _SANDBOX_CARS,
        (str(caller.environment), caller.application_id, vin),
        lambda: another_accounts_car(
            state.database.reader,
            environment=caller.environment,
            application_id=caller.application_id,
            vin=vin,
        ),
    )
    return found


async def _clearance_brand(state: AppState, caller: Caller, vin: str) -> str | None:
    """The brand of the caller's approved fleet clearance of `vin` (one query a pull of
    a client_credentials token would otherwise make: 6 % of a sandbox pull)."""
    brand: str | None = await versioned_of(state).get(
        state.database,
        _CLEARANCES,
        (str(caller.environment), caller.application_id, vin),
        lambda: approved_clearance_brand(
            state.database.reader,
            environment=caller.environment,
            application_id=caller.application_id,
            vin=vin,
        ),
    )
    return brand
