"""The one way vehicle data enters the store.

`ingest_vehicle_data` validates data points against the catalog, keeps the newest value of
each property, appends every accepted point to the history and records a
`vehicle_data_changed` outbox event, all in one transaction. Connectors, the sandbox,
the pull endpoint (fresh data from a data source) and `POST /v1/ingest` all call it.

Ordering: each data point has an instant, its wrapper's `timestamp` (for an array
property the newest timestamp of its wrappers; without any, the time it was received).
A point replaces the stored value only when its instant is later; at the same instant the
greater serialized value wins, so that any delivery order converges on the same state and
a re-delivered point changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import orjson
import structlog

from autoport.catalog import CATALOG, DataPointError, validate_property_value, validate_wrapper
from autoport.catalog.brands import (
    MAKER_CODES,
    SANDBOX_BRAND,
    UNKNOWN_BRAND,
    MakerCodes,
    canonical_brand,
)
from autoport.catalog.validation import json_type
from autoport.history import service as history
from autoport.ingestion import repository
from autoport.kit import outbox
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.vehicles.access import sandbox_only_problem
from autoport.vehicles.vin import vin_problem

log = structlog.get_logger("autoport.ingestion")

EVENT_TYPE = "vehicle_data_changed"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)


# Plain (not frozen) slotted classes: one of each is made per data point, and a frozen
# dataclass's __init__ costs several times more.
@dataclass(slots=True)
class AcceptedPoint:
    capability: str
    property: str
    # False when the point was older than (or the same as) the stored value: it is kept
    # in the history but the latest value did not change.
    changed: bool

    def as_dict(self) -> dict[str, Any]:
        return {"property": f"{self.capability}.{self.property}", "changed": self.changed}


@dataclass(slots=True)
class RejectedPoint:
    source: str  # where in the submitted data, e.g. "charging.battery_level.data"
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "reason": self.reason}


@dataclass
class IngestReport:
    vin: str
    brand: str | None
    accepted: list[AcceptedPoint] = field(default_factory=list)
    rejected: list[RejectedPoint] = field(default_factory=list)
    # The data that changed the store, in the outbox payload layout (lists of wrappers).
    changes: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)

    @property
    def changed_count(self) -> int:
        return sum(1 for point in self.accepted if point.changed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "vin": self.vin,
            "brand": self.brand,
            "accepted": [point.as_dict() for point in self.accepted],
            "rejected": [point.as_dict() for point in self.rejected],
        }


class IngestError(ValueError):
    """The request as a whole cannot be ingested (bad VIN or brand); `source` names the
    field. `status` 409 when the request is valid in itself but contradicts what is stored
    (a brand the vehicle's stored brand does not allow), 422 otherwise."""

    def __init__(self, source: str, message: str, *, status: int = 422) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message
        self.status = status


def relabel_problem(
    stored: str | None, wanted: str | None, speaks_for: Collection[str] | None
) -> str | None:
    """Why a delivery naming `wanted` may not change the vehicle's stored brand, or None.

    Data stored for a brand is what that brand's grants and clearances read, so the brand
    is not the next sender's to choose: it changes only from `unknown`, or when the sender
    speaks for both the stored brand and the new one (`speaks_for`: a data provider's
    brands; None, a sender of the named brand alone, such as a carmaker's connector). A VIN
    re-registered under another carmaker is the operator's to rebrand (`rebrand_vehicle`),
    which starts a new document."""
    if stored in (None, UNKNOWN_BRAND) or wanted in (None, UNKNOWN_BRAND, stored):
        return None
    allowed = {wanted} if speaks_for is None else set(speaks_for)
    if stored in allowed and wanted in allowed:
        return None
    return (
        f"the vehicle's data is stored for the brand {stored}, which this sender does not "
        f"speak for: it cannot be moved to {wanted}. A VIN re-registered under another "
        f"brand is rebranded by the operator (autoport vehicles rebrand VIN --brand "
        f"{wanted}), which starts a new document"
    )


@dataclass(slots=True)
class _Point:
    capability: str
    name: str
    key: str
    value: Any  # normalized wrapper, or the list of wrappers of an array property
    instant: int
    encoded: bytes
    digest: str


@lru_cache(maxsize=8192)
def timestamp_us(text: str) -> int:
    """Microseconds of a normalized wrapper timestamp (`...Z`); cached because the points
    of one delivery usually share their timestamp."""
    return (datetime.fromisoformat(text) - _EPOCH) // _ONE_US


def _instant(value: Any, multiple: bool, now_us: int) -> int:
    if not multiple:
        stamp = value.get("timestamp")
        return now_us if stamp is None else timestamp_us(stamp)
    stamps = [w["timestamp"] for w in value if "timestamp" in w]
    # Normalized timestamps have one fixed width, so the greatest string is the latest.
    return timestamp_us(max(stamps)) if stamps else now_us


def _make_point(capability: str, name: str, key: str, value: Any, instant: int) -> _Point:
    encoded = orjson.dumps(value)
    return _Point(
        capability,
        name,
        key,
        value,
        instant,
        encoded,
        hashlib.blake2b(encoded, digest_size=8).hexdigest(),
    )


def prepare(
    data: object, *, now_us: int, path: str = ""
) -> tuple[list[_Point], list[RejectedPoint]]:
    """Validate `{capability: {property: wrapper | [wrapper, ...]}}` point by point.

    A single-valued property given as a list (the streaming-v2 layout) is one data point
    per wrapper; an array property's list is one data point (the whole array).
    """
    prefix = f"{path}." if path else ""
    points: list[_Point] = []
    rejected: list[RejectedPoint] = []
    if not isinstance(data, Mapping):
        rejected.append(
            RejectedPoint(
                path or "data", f"expected an object of capabilities, got {json_type(data)}"
            )
        )
        return points, rejected
    for capability, members in data.items():
        where = f"{prefix}{capability}"
        if not CATALOG.has_capability(capability):
            rejected.append(RejectedPoint(where, f"unknown capability {capability!r}"))
            continue
        if not isinstance(members, Mapping):
            rejected.append(
                RejectedPoint(where, f"expected an object of properties, got {json_type(members)}")
            )
            continue
        for name, value in members.items():
            prop = CATALOG.get(capability, name)
            source = f"{where}.{name}"
            if prop is None:
                rejected.append(
                    RejectedPoint(source, f"capability {capability!r} has no property {name!r}")
                )
                continue
            key = prop.key
            if not prop.multiple and isinstance(value, list):
                for index, item in enumerate(value):
                    try:
                        wrapper = validate_wrapper(prop, item, path=f"{source}[{index}]")
                    except DataPointError as error:
                        rejected.append(RejectedPoint(error.path, error.message))
                        continue
                    points.append(
                        _make_point(
                            capability, name, key, wrapper, _instant(wrapper, False, now_us)
                        )
                    )
                continue
            try:
                normal = validate_property_value(prop, value, path=source)
            except DataPointError as error:
                rejected.append(RejectedPoint(error.path, error.message))
                continue
            points.append(
                _make_point(capability, name, key, normal, _instant(normal, prop.multiple, now_us))
            )
    return points, rejected


def resolve_brand(environment: Environment, brand: str | None) -> str | None:
    """The stored spelling of `brand`; None keeps the vehicle's known brand."""
    if environment is Environment.sandbox:
        return SANDBOX_BRAND  # docs/sandbox.md: every sandbox vehicle's brand is `sandbox`
    if brand is None:
        return None
    if brand == UNKNOWN_BRAND:
        return brand
    canonical = canonical_brand(brand) if isinstance(brand, str) else None
    if canonical is None:
        raise IngestError("brand", f"{brand!r} is not a known brand")
    problem = sandbox_only_problem(canonical, environment)
    if problem is not None:
        raise IngestError("brand", problem)
    return canonical


@dataclass(slots=True)
class Delivery:
    """One vehicle's data, as `ingest_vehicle_data` takes it; `ingest_many` takes many."""

    vin: str
    brand: str | None
    data: object


@dataclass(slots=True)
class _Prepared:
    report: IngestReport
    points: list[_Point]
    requested_brand: str | None  # the stored spelling; None keeps the known brand


def _prepare_delivery(
    environment: Environment,
    delivery: Delivery,
    *,
    now_us: int,
    source: str,
    maker_codes: MakerCodes,
) -> _Prepared:
    """Everything decided without the database: the VIN, the brand, each point's
    validity. Raises IngestError for the delivery as a whole."""
    vin = delivery.vin
    problem = vin_problem(vin)
    if problem:
        raise IngestError("vin", problem)
    stored_brand = resolve_brand(environment, delivery.brand)
    if stored_brand not in (None, UNKNOWN_BRAND):
        maker = maker_codes.problem(vin, stored_brand)
        if maker is not None:
            raise IngestError("brand", maker)
    points, rejected = prepare(delivery.data, now_us=now_us)
    report = IngestReport(vin=vin, brand=stored_brand, rejected=rejected)
    if rejected:
        # Operators need to see a sender that keeps sending what does not fit.
        log.info(
            "data points rejected",
            source=source,
            environment=str(environment),
            vin=vin,
            rejected=len(rejected),
            first=str(rejected[0].source) + ": " + rejected[0].reason,
        )
    return _Prepared(report, points, stored_brand)


async def ingest_vehicle_data(
    db: Database | Connection,
    *,
    environment: Environment,
    vin: str,
    brand: str | None,
    data: object,
    now_us: int,
    source: str = "api",
    speaks_for: Collection[str] | None = None,
    maker_codes: MakerCodes = MAKER_CODES,
) -> IngestReport:
    """Validate and store the data points of one vehicle; see the module docstring.

    `db` is a Database (a transaction of its own) or a Connection inside the caller's
    transaction. Invalid points are reported in `rejected` and never stored; the valid
    ones are stored together. Raises IngestError for a bad VIN, a brand the VIN's
    manufacturer code contradicts (`maker_codes`: the registry's on request paths), or a
    brand the stored one does not allow this sender to set (`relabel_problem`, 409).
    """
    delivery = Delivery(vin, brand, data)
    item = _prepare_delivery(
        environment, delivery, now_us=now_us, source=source, maker_codes=maker_codes
    )
    report, points = item.report, item.points
    if not points:
        return report
    unchanged_brand = (
        await _brand_if_already_stored(db, environment, vin, points, item.requested_brand)
        if isinstance(db, Database)
        else None
    )
    if unchanged_brand is not None:
        # A re-delivery of exactly what is stored (a data source asked again while the
        # car stood still): nothing to write, not even a transaction.
        report.brand = unchanged_brand
        report.accepted = [AcceptedPoint(p.capability, p.name, False) for p in points]
        return report
    if isinstance(db, Connection):
        await _apply_one(db, environment, item, now_us, speaks_for)
    else:
        async with db.transaction() as conn:
            await _apply_one(conn, environment, item, now_us, speaks_for)
    return report


async def _apply_one(
    conn: Connection,
    environment: Environment,
    item: _Prepared,
    now_us: int,
    speaks_for: Collection[str] | None,
) -> None:
    refused = await _apply(conn, environment, [item], now_us, speaks_for)
    for error in refused.values():
        raise error


async def ingest_many(
    conn: Connection,
    *,
    environment: Environment,
    deliveries: Sequence[Delivery],
    now_us: int,
    source: str = "api",
    speaks_for: Collection[str] | None = None,
    maker_codes: MakerCodes = MAKER_CODES,
) -> list[IngestReport | IngestError]:
    """`ingest_vehicle_data` for each delivery in turn, inside the caller's transaction,
    with the same outcome (a delivery refused as a whole is its IngestError in the
    answer, and stores nothing; a later delivery of a VIN sees an earlier one's data),
    but a few statements for the whole batch instead of several per vehicle: a request
    of many vehicles (`POST /v1/ingest`) costs one lookup, one history write, one
    update and one outbox write."""
    results: list[IngestReport | IngestError] = []
    prepared: list[_Prepared] = []
    for delivery in deliveries:
        try:
            item = _prepare_delivery(
                environment, delivery, now_us=now_us, source=source, maker_codes=maker_codes
            )
        except IngestError as error:
            results.append(error)
            continue
        results.append(item.report)
        if item.points:
            prepared.append(item)
    if prepared:
        refused = await _apply(conn, environment, prepared, now_us, speaks_for)
        for index, result in enumerate(results):
            if isinstance(result, IngestReport) and id(result) in refused:
                results[index] = refused[id(result)]
    return results


async def _brand_if_already_stored(
    db: Database, environment: Environment, vin: str, points: list[_Point], brand: str | None
) -> str | None:
    """The stored brand when every point is the stored value, with the same instant and
    the same bytes (so it is in the history too), and the brand stays; None otherwise."""
    row = await repository.get_vehicle(db.reader, environment=str(environment), vin=vin)
    if row is None or (brand not in (None, UNKNOWN_BRAND) and brand != row["brand"]):
        return None
    stamps = orjson.loads(row["stamps"])
    if any(stamps.get(point.key) != point.instant for point in points):
        return None
    document = orjson.loads(row["document"])
    for point in points:
        if orjson.dumps(document.get(point.capability, {}).get(point.name)) != point.encoded:
            return None
    return str(row["brand"])


@dataclass(slots=True)
class _Stored:
    """A vehicle's row as this transaction leaves it."""

    brand: str | None  # None: no data stored before this transaction
    document: dict[str, dict[str, Any]]
    stamps: dict[str, int]
    written: bool = False


async def _locked_rows(
    conn: Connection, env: str, vins: list[str], now_us: int
) -> dict[str, _Stored]:
    """Every VIN's row, locked (PostgreSQL) until the commit; a VIN not stored yet gets an
    empty row now, so that concurrent first deliveries queue on it like later ones."""
    stored: dict[str, _Stored] = {}
    missing = vins
    while missing:
        for row in await repository.lock_vehicles(conn, environment=env, vins=missing):
            stored[row["vin"]] = _Stored(
                str(row["brand"]), orjson.loads(row["document"]), orjson.loads(row["stamps"])
            )
        missing = [vin for vin in missing if vin not in stored]
        if not missing:
            break
        # Written over with the delivery's data below (a new vehicle's first delivery
        # always changes it): the placeholder brand is never committed.
        created = await repository.create_empty_vehicles(
            conn, environment=env, vins=missing, brand=UNKNOWN_BRAND, now_us=now_us
        )
        for vin in created:
            stored[vin] = _Stored(None, {}, {})
        # The rest were created by another transaction meanwhile: merged into theirs.
        missing = [vin for vin in missing if vin not in created]
    return stored


async def _apply(
    conn: Connection,
    environment: Environment,
    items: list[_Prepared],
    now_us: int,
    speaks_for: Collection[str] | None,
) -> dict[int, IngestError]:
    """Store the items (in order, each seeing the ones before); returns the refused ones
    by the id of their report."""
    env = str(environment)
    stored = await _locked_rows(conn, env, sorted({item.report.vin for item in items}), now_us)
    refused: dict[int, IngestError] = {}
    events: list[outbox.NewEvent] = []
    appended: list[tuple[str, list[tuple[str, str, int, str, str]]]] = []
    for item in items:
        report, points = item.report, item.points
        vin = report.vin
        current = stored[vin]
        # Before anything is written: the stored brand, read under the row's lock, decides.
        relabel = relabel_problem(current.brand, item.requested_brand, speaks_for)
        if relabel is not None:
            refused[id(report)] = IngestError("brand", relabel, status=409)
            continue
        document, stamps = current.document, current.stamps
        changed_keys: dict[str, _Point] = {}
        for point in points:
            known = stamps.get(point.key)
            newer = known is None or point.instant > known
            if not newer and point.instant == known:
                stored_value = document.get(point.capability, {}).get(point.name)
                newer = point.encoded > orjson.dumps(stored_value)
            if newer:
                document.setdefault(point.capability, {})[point.name] = point.value
                stamps[point.key] = point.instant
                changed_keys[point.key] = point
            report.accepted.append(AcceptedPoint(point.capability, point.name, newer))

        known_brand = current.brand
        brand = item.requested_brand
        # No brand given, or `unknown`: keep what is known; a known brand is never forgotten.
        if brand is None or (brand == UNKNOWN_BRAND and known_brand is not None):
            brand = known_brand or UNKNOWN_BRAND
        report.brand = brand
        brand_changed = known_brand is not None and brand != known_brand

        appended.append(
            (
                vin,
                [(p.capability, p.name, p.instant, p.digest, p.encoded.decode()) for p in points],
            )
        )
        if not changed_keys and not brand_changed:
            continue
        current.brand = brand
        current.written = True
        if not changed_keys:
            continue
        changes: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for point in changed_keys.values():
            value = document[point.capability][point.name]
            changes.setdefault(point.capability, {})[point.name] = (
                value if isinstance(value, list) else [value]
            )
        report.changes = changes
        events.append(
            outbox.NewEvent(
                environment, EVENT_TYPE, {"vin": vin, "brand": brand, "data": changes}, vin=vin
            )
        )
    await history.append_many(conn, environment=env, received_at=now_us, deliveries=appended)
    await repository.update_vehicles(
        conn,
        [
            {
                "environment": env,
                "vin": vin,
                "brand": row.brand,
                "document": orjson.dumps(row.document).decode(),
                "stamps": orjson.dumps(row.stamps).decode(),
                "now": now_us,
            }
            for vin, row in stored.items()
            if row.written
        ],
    )
    if events:
        await outbox.emit_many(conn, events, now_us=now_us)
    return refused


@dataclass(frozen=True, slots=True)
class Rebranded:
    environment: Environment
    vin: str
    previous: str | None  # the brand its data was stored for; None: nothing was stored
    brand: str
    history_deleted: int  # data points of the history deleted

    def as_dict(self) -> dict[str, Any]:
        return {
            "environment": str(self.environment),
            "vin": self.vin,
            "previous_brand": self.previous,
            "brand": self.brand,
            "history_deleted": self.history_deleted,
        }


async def rebrand_vehicle(
    conn: Connection,
    *,
    environment: Environment,
    vin: str,
    brand: str,
    now_us: int,
    maker_codes: MakerCodes = MAKER_CODES,
) -> Rebranded:
    """The operator's action for a VIN re-registered under another brand: the vehicle
    starts again as an empty document of `brand`. What was stored for the previous brand
    (the latest values and the whole history, sent by that brand's providers) is deleted,
    never served under the new brand; the previous brand's senders can no longer push for
    it (`relabel_problem`), and its grants and clearances read nothing of it
    (`vehicles.access.brand_serves`). ApiError naming the field otherwise."""
    problem = vin_problem(vin)
    if problem:
        raise ApiError(400, f"vin: {problem}", source="vin")
    if environment is Environment.sandbox:
        raise ApiError(
            422,
            "environment: every sandbox vehicle's brand is sandbox; nothing to rebrand",
            source="environment",
        )
    try:
        canonical = resolve_brand(environment, brand)
    except IngestError as error:
        raise ApiError(422, f"brand: {error.message}", source="brand") from None
    if canonical in (None, UNKNOWN_BRAND):
        raise ApiError(422, "brand: name the brand the vehicle is now", source="brand")
    assert canonical is not None
    maker = maker_codes.problem(vin, canonical)
    if maker is not None:
        raise ApiError(422, f"brand: {maker}", source="brand")
    env = str(environment)
    current = await repository.get_vehicle_for_update(conn, environment=env, vin=vin)
    previous = None if current is None else str(current["brand"])
    if previous == canonical:
        raise ApiError(409, f"brand: the vehicle is already stored for {canonical}", source="brand")
    deleted = await history.delete_vehicle(conn, environment=env, vin=vin)
    values = {
        "environment": env,
        "vin": vin,
        "brand": canonical,
        "document": "{}",
        "stamps": "{}",
        "now": now_us,
    }
    if current is None:
        await repository.create_vehicle(conn, values)
    else:
        await repository.update_vehicle(conn, values)
    log.warning(
        "vehicle rebranded by the operator: its stored data was deleted",
        environment=env,
        vin=vin,
        previous=previous,
        brand=canonical,
        history_deleted=deleted,
    )
    return Rebranded(environment, vin, previous, canonical, deleted)
