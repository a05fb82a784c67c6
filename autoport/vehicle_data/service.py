"""The read side of vehicle data: the pull answer (optionally refreshed by the brand's
data source) and the history. Who may read which properties of a VIN is decided in
autoport.vehicles.access (`readable_properties`), the one access rule:

Access (docs/vehicle-data.md, Pull): a vehicle token reads its grant's VIN and granted
properties while the grant is approved and inside its validity window; a
client_credentials token with `vehicle:data` reads a VIN whose fleet clearance is
approved, with the application's registered properties. A grant or clearance is for one
brand: it reads only data stored for that brand
(`autoport.vehicles.access.brand_serves`) and only while the brand is activated for the
application. Anything else is a 403 that says why.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Protocol

import orjson
import structlog

from autoport.brands.registry import registry_of
from autoport.brands.sources import DataSource, DataSourceError
from autoport.catalog import CATALOG
from autoport.catalog.brands import SANDBOX_BRAND
from autoport.history import service as history_store
from autoport.ingestion.service import IngestError, ingest_vehicle_data
from autoport.kit.auth import Caller
from autoport.kit.clock import from_iso
from autoport.kit.db import Database, Row
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.paging import decode_cursor, encode_cursor, page_size
from autoport.kit.state import AppState, parts_of
from autoport.kit.versioned import versioned_of
from autoport.vehicle_data import repository
from autoport.vehicle_data.freshness import windows_of
from autoport.vehicles.access import (
    check_brand,
    forbidden,
    readable_properties,
)
from autoport.vehicles.vin import vin_problem

log = structlog.get_logger("autoport.vehicle_data")

HISTORY_MAX_LIMIT = 1000
HISTORY_DEFAULT_LIMIT = 100


def check_vin(vin: str) -> None:
    problem = vin_problem(vin)
    if problem:
        raise ApiError(400, f"vin: {problem}", source="vin")


@lru_cache(maxsize=4096)
def by_capability(properties: frozenset[str]) -> dict[str, frozenset[str]]:
    """{"capability": {property names}} of a set of "capability.property" (a frozenset
    caches its hash, so the lookup per request is cheap)."""
    grouped: dict[str, set[str]] = {}
    for key in properties:
        capability, _, name = key.partition(".")
        grouped.setdefault(capability, set()).add(name)
    return {capability: frozenset(names) for capability, names in grouped.items()}


def visible(document: dict[str, Any], allowed: dict[str, frozenset[str]]) -> dict[str, Any]:
    """The groups and properties of `document` the caller may see."""
    out: dict[str, Any] = {}
    for capability, members in document.items():
        names = allowed.get(capability)
        if names is None:
            continue
        if names.issuperset(members):
            out[capability] = members
            continue
        picked = {name: value for name, value in members.items() if name in names}
        if picked:
            out[capability] = picked
    return out


async def _refresh(
    state: AppState, caller: Caller, vin: str, brand: str, properties: frozenset[str]
) -> bool:
    """Make sure the brand's data source was asked about `vin` within the freshness
    window (autoport.vehicle_data.freshness) and ingest its answer. True when its data
    may have changed meanwhile (this pull fetched or waited for a fetch: the caller reads
    the vehicle again); False when the brand has no data source or the window's outcome
    was known here already (nothing awaited, so nothing changed). The window's failure
    (offline, privacy mode, ...) is raised. The sandbox environment's data comes only
    from the emulated carmaker."""
    sandbox = caller.environment is Environment.sandbox
    source = registry_of(state).data_sources.get(SANDBOX_BRAND if sandbox else brand)
    if source is None:
        return False
    settings = state.settings
    max_age = settings.vehicle_data_max_age_seconds_by_brand.get(
        brand, settings.vehicle_data_max_age_seconds
    )
    windows = windows_of(state)
    environment = str(caller.environment)
    known = windows.known(
        environment=environment, vin=vin, properties=properties, max_age_seconds=max_age
    )
    if known is not None:
        known.raise_failure()
        return False
    timeout = settings.vehicle_data_fetch_timeout_seconds

    async def fetch() -> None:
        await _fetch_and_ingest(state, caller.environment, vin, brand, properties, source)

    outcome = await windows.outcome(
        environment=str(caller.environment),
        vin=vin,
        properties=properties,
        max_age_seconds=max_age,
        timeout_seconds=timeout,
        fetch=fetch,
    )
    outcome.raise_failure()
    return True


async def _fetch_and_ingest(
    state: AppState,
    environment: Environment,
    vin: str,
    brand: str,
    properties: frozenset[str],
    source: DataSource,
) -> None:
    """One ask of the data source; its failures are ApiErrors with the pull's status."""
    timeout = state.settings.vehicle_data_fetch_timeout_seconds
    try:
        async with asyncio.timeout(timeout):
            result = await source.fetch(environment=environment, vin=vin, properties=properties)
    except TimeoutError:
        raise ApiError(
            504, f"the carmaker did not answer within {timeout:g} s", title="Gateway Timeout"
        ) from None
    except DataSourceError as error:
        # No data is served then, not even the stored values (privacy mode: 403).
        raise ApiError(error.status, error.detail, title=error.title) from None
    if result is None:
        return
    try:
        report = await ingest_vehicle_data(
            state.database,
            environment=environment,
            vin=vin,
            brand=brand,
            data=result.data,
            now_us=state.clock.now_us(),
            source=f"pull:{brand}",
        )
    except IngestError as error:
        log.warning("data source answer refused", vin=vin, brand=brand, error=str(error))
        return
    if report.rejected:
        log.warning(
            "data source sent invalid points",
            vin=vin,
            brand=brand,
            rejected=[r.as_dict() for r in report.rejected[:10]],
        )


class FragmentCache:
    """The serialized groups last served of a vehicle to a set of properties, checked
    against the stored document's text: while the vehicle's data stays the same, a pull
    neither parses nor serializes the document again. A changed document (another
    process may have written it) simply misses. Bounded, least recently used first out.

    Kept without their opening brace (`"charging":{...}}`, `}` when there is none): the
    answer splices them after its own members, and slicing the brace off ~10 KB on every
    pull was a copy of them each time."""

    def __init__(self, size: int = 1024) -> None:
        # Each entry holds a document and its serialized groups (~2 x 10 KB for 100
        # properties): 1024 entries stay around 20 MB.
        self.size = size
        self.entries: OrderedDict[tuple[str, str, frozenset[str]], tuple[str, bytes]] = (
            OrderedDict()
        )

    def members(self, env: str, vin: str, document: str, properties: frozenset[str]) -> bytes:
        key = (env, vin, properties)
        entry = self.entries.get(key)
        if entry is not None and entry[0] == document:
            self.entries.move_to_end(key)
            return entry[1]
        groups = orjson.dumps(visible(orjson.loads(document), by_capability(properties)))[1:]
        self.entries[key] = (document, groups)
        self.entries.move_to_end(key)
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return groups


class PullParts(Protocol):
    """The parts the pull takes (autoport.state.Parts; mypy checks it has them)."""

    # The serialized groups last served (FragmentCache), one per app.
    @property
    def fragments(self) -> FragmentCache: ...


_VEHICLES = frozenset({"vehicles"})


async def stored_vehicle(database: Database, *, environment: Environment, vin: str) -> Row | None:
    """The vehicle's stored row (brand, document, stamps), read now (uncached)."""
    return await repository.get_vehicle(database, environment=str(environment), vin=vin)


async def _vehicle_row(state: AppState, env: str, vin: str) -> Row | None:
    database = state.database
    row: Row | None = await versioned_of(state).get(
        database,
        _VEHICLES,
        (env, vin),
        lambda: repository.get_vehicle(database, environment=env, vin=vin),
    )
    return row


async def pull(state: AppState, caller: Caller, vin: str, request_id: str) -> bytes:
    """The vehicle data response as bytes."""
    properties, brand = await readable_properties(state, caller, vin)
    env = str(caller.environment)
    row = await _vehicle_row(state, env, vin)
    check_brand(caller, brand, row)
    if registry_of(state).data_sources and await _refresh(state, caller, vin, brand, properties):
        row = await _vehicle_row(state, env, vin)
        check_brand(caller, brand, row)
    if row is None:
        raise _pending()
    parts: PullParts = parts_of(state)
    members = parts.fragments.members(env, vin, row["document"], properties)
    if members == b"}":
        raise _pending()
    head = orjson.dumps({"request_id": request_id, "vin": vin, "brand": row["brand"]})
    # Splice: {"request_id":..,"vin":..,"brand":..} + "charging":{..}} -> one object.
    return head[:-1] + b"," + members


def _pending() -> ApiError:
    return ApiError(
        422,
        "no data is known yet for this vehicle (data pending); try again later",
        title="Data Pending",
    )


# --- history ------------------------------------------------------------------------


def _history_scope(caller: Caller, vin: str, prop: str) -> tuple[str, ...]:
    # A cursor pages the list it came from: this application's history of this property.
    return ("history", str(caller.environment), caller.application_id, vin, prop)


def _instant(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return from_iso(value)
    except ValueError:
        raise ApiError(
            400,
            f"{name}: {value!r} is not an ISO 8601 date-time (e.g. 2024-05-01T10:00:00Z)",
            source=name,
        ) from None


async def history(
    state: AppState,
    caller: Caller,
    vin: str,
    *,
    prop: str | None,
    since: str | None,
    until: str | None,
    limit: int | None,
    cursor: str | None,
    request_id: str,
) -> dict[str, Any]:
    properties, brand = await readable_properties(state, caller, vin)
    stored = await repository.get_vehicle(
        state.database, environment=str(caller.environment), vin=vin
    )
    check_brand(caller, brand, stored)
    if not prop:
        raise ApiError(
            400, "property: required, e.g. property=charging.battery_level", source="property"
        )
    capability, _, name = prop.partition(".")
    if CATALOG.get(capability, name) is None:
        raise ApiError(422, f"property: {prop!r} is not a level-13 property", source="property")
    if prop not in properties:
        raise forbidden(f"the access token does not grant reading {prop}")
    size = page_size(limit, default=HISTORY_DEFAULT_LIMIT, maximum=HISTORY_MAX_LIMIT)
    since_us, until_us = _instant(since, "since"), _instant(until, "until")
    scope = _history_scope(caller, vin, prop)
    points, following = await history_store.page(
        state.database,
        environment=str(caller.environment),
        vin=vin,
        capability=capability,
        prop=name,
        since=since_us,
        until=until_us,
        cursor=None if not cursor else await _history_cursor(state, scope, cursor),
        limit=size,
    )
    return {
        "request_id": request_id,
        "vin": vin,
        "property": prop,
        # Stored JSON is passed through as is: what was accepted is what is served.
        "values": [orjson.Fragment(point.value) for point in points],
        "next_cursor": (
            None if following is None else encode_cursor(state.token_key, scope, list(following))
        ),
    }


async def _history_cursor(
    state: AppState, scope: tuple[str, ...], cursor: str
) -> tuple[int, str | None]:
    """(timestamp, digest) of the last point served. A cursor of the row-per-point
    storage (timestamp, row id), handed out before the upgrade, pages on where it
    stopped while its row is in the old table (autoport.history.service.resume_old_cursor)."""
    try:
        timestamp, digest = decode_cursor(state.token_key, scope, cursor, (int, str))
    except ApiError:
        timestamp, row_id = decode_cursor(state.token_key, scope, cursor, (int, int))
        return await history_store.resume_old_cursor(
            state.database, timestamp=int(timestamp), row_id=int(row_id)
        )
    return int(timestamp), str(digest)
