"""Deciding the fleet clearances of push-fed brands.

A brand without a carmaker connector that answers clearance requests (every production
brand fed through `POST /v1/ingest`) has nobody on the carmaker's side to ask. The party
that knows its vehicles decides instead: the brand's data provider (authenticated with
its secret, only for the brands it speaks for) or the operator (admin token). A decision
moves a pending clearance through the state machine like the carmaker's answer would
(`Trigger.carmaker`), with its changelog entry and `fleet_clearance_changed` event.
Brands whose connector decides (and the sandbox's emulated carmaker) are not decided
here: 409.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

import orjson

from autoport.brands.registry import BrandRegistry
from autoport.catalog.brands import BRANDS, SANDBOX_BRAND, hyphenated
from autoport.fleet import repository
from autoport.fleet.repository import FleetVehicle, VehicleKey
from autoport.fleet.service import checked_vin, transition
from autoport.fleet.states import Status, Trigger
from autoport.kit import jsonlimit
from autoport.kit.clock import to_iso
from autoport.kit.db import Connection
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_REASON = 500


def decided_here(registry: BrandRegistry, environment: Environment, brand: str) -> bool:
    """Whether clearances of `brand` are decided by its provider or the operator (no
    connector of the carmaker answers them)."""
    if environment is Environment.sandbox or brand == SANDBOX_BRAND:
        return False  # the emulated carmaker decides every sandbox clearance
    return not registry.connector_for(environment, brand).decides_clearances()


def pending_json(vehicle: FleetVehicle) -> dict[str, Any]:
    """What the decider sees: who asks for which vehicle since when (not the
    application's own tags)."""
    return {
        "application_id": vehicle.key.application_id,
        "vin": vehicle.key.vin,
        "brand": hyphenated(vehicle.brand),
        "status": str(vehicle.status),
        "requested_at": to_iso(vehicle.updated_at),
    }


def _encode_cursor(vehicle: FleetVehicle) -> str:
    text = f"{vehicle.updated_at}:{vehicle.key.application_id}:{vehicle.key.vin}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[int, str, str]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        at, application_id, vin = text.split(":")
        if len(vin) == 17 and application_id and 0 <= int(at) < 2**63:
            return int(at), application_id, vin
    except (ValueError, binascii.Error):  # UnicodeDecodeError is a ValueError
        pass
    raise ApiError(400, "cursor: not a cursor this endpoint returned", source="cursor")


async def list_pending(
    conn: Connection,
    registry: BrandRegistry,
    *,
    environment: Environment,
    brands: Sequence[str] | None,
    limit: int | None,
    cursor: str | None,
) -> dict[str, Any]:
    """Pending clearances awaiting a decision here, of `brands` (None: all), oldest
    first, with `next_cursor` when there are more."""
    size = DEFAULT_LIMIT if limit is None else limit
    if not 1 <= size <= MAX_LIMIT:
        raise ApiError(422, f"limit: must be between 1 and {MAX_LIMIT}", source="limit")
    wanted = sorted(BRANDS) if brands is None else list(brands)
    deciding = [b for b in wanted if decided_here(registry, environment, b)]
    if not deciding:
        return {"clearances": [], "next_cursor": None}
    found = await repository.list_pending(
        conn,
        environment=environment,
        brands=deciding,
        after=None if not cursor else _decode_cursor(cursor),
        limit=size + 1,
    )
    page = found[:size]
    return {
        "clearances": [pending_json(v) for v in page],
        "next_cursor": _encode_cursor(page[-1]) if len(found) > size else None,
    }


async def decide(
    conn: Connection,
    registry: BrandRegistry,
    *,
    environment: Environment,
    application_id: str,
    vin: str,
    approve: bool,
    reason: str | None,
    brands: Sequence[str] | None,
    now_us: int,
) -> dict[str, Any]:
    """Approve or reject one pending clearance. `brands`: those the decider speaks for
    (None: the operator, every brand); a clearance of another brand is not found (404),
    as one that does not exist. 409 when it is not pending or a connector decides it.
    In the caller's transaction (nothing here awaits the carmaker: whether a connector
    decides is known without asking it)."""
    key = VehicleKey(environment, application_id, checked_vin(vin))
    if reason is not None and len(reason) > MAX_REASON:
        raise ApiError(422, f"reason: at most {MAX_REASON} characters", source="reason")
    vehicle = await repository.get(conn, key, for_update=True)
    if vehicle is None or (brands is not None and vehicle.brand not in brands):
        raise ApiError(
            404, f"no clearance of VIN {vin} for application {application_id}", source="vin"
        )
    if not decided_here(registry, environment, vehicle.brand):
        raise ApiError(
            409,
            f"clearances of the brand {vehicle.brand!r} are decided by its carmaker",
            source="vin",
        )
    if vehicle.status is not Status.pending:
        raise ApiError(409, f"the clearance is {vehicle.status}, not pending", source="vin")
    new = Status.approved if approve else Status.rejected
    if not await transition(conn, vehicle, new, Trigger.carmaker, now_us=now_us, reason=reason):
        raise ApiError(409, "the clearance changed meanwhile; read it again", source="vin")
    updated = await repository.get(conn, key)
    assert updated is not None
    return pending_json(updated)


def reason_of(body: bytes) -> str | None:
    """The optional `{"reason": "..."}` body of a decision (an empty body: none)."""
    if not body.strip():
        return None
    try:
        parsed = jsonlimit.loads(body)
    except orjson.JSONDecodeError as error:
        raise ApiError(
            400, f"the body is not valid JSON: {error}", title="Malformed JSON"
        ) from None
    if not isinstance(parsed, dict) or set(parsed) - {"reason"}:
        raise ApiError(422, 'the body must be {"reason": "..."} or empty', source="reason")
    reason = parsed.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise ApiError(422, "reason: expected a string", source="reason")
    return reason or None
