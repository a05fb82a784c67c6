"""Fleet clearance: requests of the application (add, list, read, remove) and the one
function that changes a vehicle's status (`transition`), used by requests and worker."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from autoport.brands.registry import brand_problem
from autoport.catalog.brands import MAKER_CODES, MakerCodes, hyphenated
from autoport.fleet import repository
from autoport.fleet.filters import VehicleFilter
from autoport.fleet.repository import FleetVehicle, VehicleKey
from autoport.fleet.states import IN_PROGRESS, Status, Trigger, allowed, target
from autoport.kit import outbox
from autoport.kit.auth import Caller, CallerKind, require_scope
from autoport.kit.clock import to_iso
from autoport.kit.db import Connection
from autoport.kit.errors import ApiError
from autoport.kit.paging import decode_cursor, encode_cursor, page_size
from autoport.vehicles.vin import vin_problem

if TYPE_CHECKING:
    from autoport.apps.schemas import Application

SCOPE = "fleet:clearance"
EVENT = "fleet_clearance_changed"
# Page sizes of GET /v1/fleets/vehicles (docs/fleet.md).
LIST_DEFAULT_LIMIT = 100
LIST_MAX_LIMIT = 1000


def require_fleet_caller(caller: Caller) -> None:
    if caller.kind is not CallerKind.application:
        raise ApiError(
            403, "fleet clearance needs a client_credentials token", source="Authorization"
        )
    require_scope(caller, SCOPE)


def checked_vin(vin: str) -> str:
    problem = vin_problem(vin)
    if problem is not None:
        raise ApiError(422, f"vin: {problem}", source="vin")
    return vin


def changelog_entry(status: Status, now_us: int, reason: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"timestamp": to_iso(now_us), "status": str(status)}
    if reason is not None:
        entry["reason"] = reason
    return entry


async def transition(
    conn: Connection,
    vehicle: FleetVehicle,
    new: Status,
    trigger: Trigger,
    *,
    now_us: int,
    reason: str | None = None,
    brand: str | None = None,
    tags: dict[str, str] | None = None,
) -> bool:
    """Move `vehicle` (as read in this transaction) to `new`: one changelog entry, one
    `fleet_clearance_changed` event, in the caller's transaction. False when the row no
    longer has the status it was read with (another process got there first)."""
    if not allowed(vehicle.status, new, trigger):
        raise ValueError(f"no {trigger} transition from {vehicle.status} to {new}")
    changed = await repository.update_status(
        conn,
        vehicle.key,
        expected=vehicle.status,
        new=new,
        reason=reason,
        changelog=[*vehicle.changelog, changelog_entry(new, now_us, reason)],
        now_us=now_us,
        # Statuses the carmaker still has to settle are due for the worker at once.
        next_check_at=now_us if new in IN_PROGRESS else None,
        approved_at=now_us if new is Status.approved else vehicle.approved_at,
        brand=brand,
        tags=tags,
    )
    if changed:
        await emit_change(conn, vehicle.key, new, reason, now_us)
    return changed


async def emit_change(
    conn: Connection, key: VehicleKey, status: Status, reason: str | None, now_us: int
) -> None:
    await outbox.emit(
        conn,
        environment=key.environment,
        event_type=EVENT,
        payload={"action": str(status), "detail": reason},
        now_us=now_us,
        vin=key.vin,
        application_id=key.application_id,
    )


def vehicle_json(vehicle: FleetVehicle) -> dict[str, Any]:
    return {
        "vin": vehicle.key.vin,
        "brand": hyphenated(vehicle.brand),
        "status": str(vehicle.status),
        "tags": vehicle.tags,
        "changelog": vehicle.changelog,
    }


def _tags_problem(tags: object) -> str | None:
    if tags is None:
        return None
    if not isinstance(tags, dict):
        return "tags must be an object of strings"
    for name, value in tags.items():
        if not isinstance(value, str):
            return f"tags.{name} must be a string"
    return None


def _echo_vin(vin: object) -> str | None:
    """The `vin` an error answer repeats: what was sent, as a string (the original types
    it a non-null string and clients index answers by it); a number or boolean as its JSON
    text; nothing for a missing, null, object or array vin (the field is left out)."""
    if isinstance(vin, str):
        return vin
    if isinstance(vin, bool | int | float):
        return orjson.dumps(vin).decode()
    return None


def _error(vin: object, description: str) -> dict[str, Any]:
    item: dict[str, Any] = {"status": "error", "description": description}
    echoed = _echo_vin(vin)
    if echoed is not None:
        item["vin"] = echoed
    return item


async def add_vehicles(
    conn: Connection,
    *,
    caller: Caller,
    vehicles: list[Any],
    now_us: int,
    limit: int,
    maker_codes: MakerCodes = MAKER_CODES,
) -> list[dict[str, Any]]:
    """One answer per requested vehicle, in order, all in the caller's transaction. Bad
    input is reported per vehicle (a brand the VIN's code contradicts by `maker_codes`:
    the registry's on the API)."""
    require_fleet_caller(caller)
    if len(vehicles) > limit:
        raise ApiError(422, f"vehicles: at most {limit} vehicles per request", source="vehicles")
    return [await _add_one(conn, caller, item, now_us, maker_codes) for item in vehicles]


async def _add_one(
    conn: Connection, caller: Caller, item: Any, now_us: int, maker_codes: MakerCodes
) -> dict[str, Any]:
    if not isinstance(item, dict):
        return _error(None, "each vehicle must be an object with vin and brand")
    vin = item.get("vin")
    problem = vin_problem(vin)
    if problem is not None:
        return _error(vin, f"vin: {problem}")
    assert isinstance(vin, str)
    brand, why = brand_problem(caller, item.get("brand"), vin=vin, codes=maker_codes)
    if brand is None:
        return _error(vin, f"brand: {why}")
    tags_problem = _tags_problem(item.get("tags"))
    if tags_problem is not None:
        return _error(vin, tags_problem)
    tags: dict[str, str] | None = item.get("tags")
    key = VehicleKey(caller.environment, caller.application_id, vin)
    created = await repository.create_pending(
        conn,
        key,
        brand=brand,
        tags=tags or {},
        changelog=[changelog_entry(Status.pending, now_us, None)],
        now_us=now_us,
    )
    if created:
        await emit_change(conn, key, Status.pending, None, now_us)
        return _answer(vin, Status.pending, tags or {}, None)
    existing = await repository.get(conn, key, for_update=True)
    if existing is None:  # removed between the insert and the read: cannot happen here
        raise RuntimeError("fleet vehicle vanished inside a transaction")
    again = target(existing.status, Trigger.request)
    if again is None:
        return _answer(
            vin, existing.status, existing.tags, f"already registered, status {existing.status}"
        )
    new_tags = existing.tags if tags is None else tags
    await transition(
        conn, existing, again, Trigger.request, now_us=now_us, brand=brand, tags=new_tags
    )
    return _answer(vin, again, new_tags, f"clearance requested again (was {existing.status})")


def _answer(
    vin: str, status: Status, tags: dict[str, str], description: str | None
) -> dict[str, Any]:
    item: dict[str, Any] = {"vin": vin, "status": str(status)}
    if description is not None:
        item["description"] = description
    if tags:
        item["tags"] = tags
    return item


@dataclass(frozen=True, slots=True)
class VehiclePage:
    vehicles: list[dict[str, Any]]
    next_cursor: str | None  # None on the last page


def _list_scope(caller: Caller) -> tuple[str, ...]:
    # A cursor pages the list it came from: this application's fleet.
    return ("fleet.vehicles", str(caller.environment), caller.application_id)


async def list_vehicles(
    conn: Connection,
    *,
    caller: Caller,
    vehicle_filter: VehicleFilter,
    limit: int | None,
    cursor: str | None,
    cursor_key: bytes,
) -> VehiclePage:
    """One page of the application's vehicles in VIN order, `limit` at most
    (LIST_DEFAULT_LIMIT when absent), after the vehicle `cursor` names."""
    require_fleet_caller(caller)
    size = page_size(limit, default=LIST_DEFAULT_LIMIT, maximum=LIST_MAX_LIMIT)
    scope = _list_scope(caller)
    after_vin = decode_cursor(cursor_key, scope, cursor, (str,))[0] if cursor else None
    vehicles = await repository.list_vehicles(
        conn,
        environment=caller.environment,
        application_id=caller.application_id,
        conditions=vehicle_filter.conditions(conn.dialect),
        after_vin=after_vin,
        limit=size + 1,  # one more says whether a next page exists
    )
    page = vehicles[:size]
    more = len(vehicles) > size
    return VehiclePage(
        vehicles=[vehicle_json(v) for v in page],
        next_cursor=encode_cursor(cursor_key, scope, [page[-1].key.vin]) if more else None,
    )


async def get_vehicle(conn: Connection, *, caller: Caller, vin: str) -> dict[str, Any]:
    require_fleet_caller(caller)
    key = VehicleKey(caller.environment, caller.application_id, checked_vin(vin))
    vehicle = await repository.get(conn, key)
    if vehicle is None:
        raise ApiError(404, f"no fleet vehicle with VIN {vin}", source="vin")
    return vehicle_json(vehicle)


async def remove_vehicle(
    conn: Connection, *, caller: Caller, vin: str, now_us: int
) -> dict[str, Any]:
    """Approved -> revoking, pending -> canceling, in the caller's transaction; the worker
    finishes with the carmaker."""
    require_fleet_caller(caller)
    key = VehicleKey(caller.environment, caller.application_id, checked_vin(vin))
    vehicle = await repository.get(conn, key, for_update=True)
    if vehicle is None:
        raise ApiError(404, f"no fleet vehicle with VIN {vin}", source="vin")
    new = target(vehicle.status, Trigger.remove)
    if new is None:
        if vehicle.status in IN_PROGRESS:
            detail = f"the vehicle is already being removed (status {vehicle.status})"
        else:
            detail = f"the vehicle's clearance has ended (status {vehicle.status})"
        raise ApiError(409, detail, source="vin")
    await transition(conn, vehicle, new, Trigger.remove, now_us=now_us)
    updated = await repository.get(conn, key)
    assert updated is not None
    return vehicle_json(updated)


# ------------------------------------------------------------------ the console's bulk add


def application_caller(application: Application) -> Caller:
    """The application itself, as the console acts for it once it has checked that the
    signed-in user may manage it: the same Caller a client_credentials token with the
    fleet scope gives, so every rule of the fleet API applies unchanged."""
    return Caller(
        environment=application.environment,
        kind=CallerKind.application,
        application_id=application.id,
        client_id=application.client_id,
        scopes=frozenset({SCOPE}),
        application_properties=frozenset(application.properties),
        application_brands=frozenset(application.brands),
    )


@dataclass(frozen=True, slots=True)
class RowResult:
    """The outcome of one line of a VIN list or CSV upload."""

    row: int  # the line number in the input (1 = first line)
    vin: str | None
    status: str  # a fleet status, or "error"
    description: str | None


@dataclass(frozen=True, slots=True)
class _Row:
    row: int
    item: dict[str, Any] | None  # None: the line itself could not be read
    problem: str | None = None


# Column names of a CSV upload with a header line; any other column is a tag.
_VIN_COLUMN = "vin"
_BRAND_COLUMN = "brand"


def parse_vehicle_rows(text: str, *, default_brand: str | None) -> list[_Row]:
    """Read a pasted VIN list or an uploaded CSV: one vehicle per line, `VIN` or
    `VIN,brand`; or a CSV whose first line is a header naming a `vin` column, an optional
    `brand` column and any other columns as tags (column name -> value, empty cells
    left out). Blank lines and lines starting with # are skipped. A row without a brand
    gets `default_brand`. Nothing is validated here but the shape: VINs, brands and tags
    are checked by `add_vehicles`, like the API's."""
    lines = text.splitlines()
    rows: list[_Row] = []
    header: list[str] | None = None
    numbered = [
        (number, line)
        for number, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if numbered:
        first = next(csv.reader([numbered[0][1]]))
        if any(cell.strip().lower() == _VIN_COLUMN for cell in first):
            header = [cell.strip().lower() for cell in first]
            numbered = numbered[1:]
    for number, line in numbered:
        try:
            cells = [cell.strip() for cell in next(csv.reader(io.StringIO(line)))]
        except (csv.Error, StopIteration) as error:
            rows.append(_Row(number, None, f"the line is not valid CSV: {error}"))
            continue
        if header is None:
            if len(cells) > 2:
                rows.append(
                    _Row(number, None, "expected VIN or VIN,brand (or a CSV with a header line)")
                )
                continue
            item: dict[str, Any] = {"vin": cells[0]}
            brand = cells[1] if len(cells) == 2 and cells[1] else default_brand
        else:
            if len(cells) > len(header):
                rows.append(
                    _Row(number, None, f"{len(cells)} cells but the header names {len(header)}")
                )
                continue
            named = dict(zip(header, cells, strict=False))
            item = {"vin": named.get(_VIN_COLUMN, "")}
            brand = named.get(_BRAND_COLUMN) or default_brand
            tags = {
                name: value
                for name, value in named.items()
                if name not in (_VIN_COLUMN, _BRAND_COLUMN) and name and value
            }
            if tags:
                item["tags"] = tags
        item["brand"] = brand
        rows.append(_Row(number, item))
    return rows


async def add_vehicle_rows(
    conn: Connection,
    *,
    caller: Caller,
    text: str,
    default_brand: str | None,
    now_us: int,
    limit: int,
) -> list[RowResult]:
    """Add the vehicles of a VIN list or CSV upload (`parse_vehicle_rows`) through
    `add_vehicles`: one result per line, a bad line reported on its own, the good ones
    added in the caller's transaction. More than `limit` lines is a 422 naming `vehicles`."""
    rows = parse_vehicle_rows(text, default_brand=default_brand)
    if not rows:
        raise ApiError(422, "vehicles: no VIN given", source="vehicles")
    if len(rows) > limit:
        raise ApiError(422, f"vehicles: at most {limit} vehicles per request", source="vehicles")
    readable = [row for row in rows if row.item is not None]
    answers = await add_vehicles(
        conn, caller=caller, vehicles=[row.item for row in readable], now_us=now_us, limit=limit
    )
    by_row = {row.row: answer for row, answer in zip(readable, answers, strict=True)}
    results: list[RowResult] = []
    for row in rows:
        answer = by_row.get(row.row)
        if answer is None:
            results.append(RowResult(row.row, None, "error", row.problem))
        else:
            results.append(
                RowResult(row.row, answer.get("vin"), answer["status"], answer.get("description"))
            )
    return results
