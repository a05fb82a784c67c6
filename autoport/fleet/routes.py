from __future__ import annotations

from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import Query
from starlette.responses import Response

from autoport.brands.registry import registry_of
from autoport.catalog.brands import MAKER_CODE_RULE
from autoport.fleet import service
from autoport.fleet.filters import parse_filter
from autoport.fleet.schemas import (
    AddVehiclesAnswer,
    AddVehiclesRequest,
    FleetVehicleList,
    FleetVehicleView,
)
from autoport.kit.auth import CallerDep
from autoport.kit.environments import EnvironmentDep, public_base_url
from autoport.kit.routing import api_router, documented, json_response
from autoport.kit.state import StateDep

router = api_router(prefix="/v1/fleets/vehicles", tags=["fleet clearance"])


@router.post("", responses={200: {"model": AddVehiclesAnswer}})
@documented(MAKER_CODE_RULE)
async def add_vehicles(body: AddVehiclesRequest, caller: CallerDep, state: StateDep) -> Response:
    """Ask for vehicles to be cleared (scope `fleet:clearance`). Answers 200 with one item
    per vehicle: `pending` for a new request, the current status for one already
    registered, or `status: "error"` with a `description` for a bad VIN or brand."""
    async with state.database.transaction() as conn:
        results = await service.add_vehicles(
            conn,
            caller=caller,
            vehicles=body.vehicles,
            now_us=state.clock.now_us(),
            limit=state.settings.fleet_max_vehicles_per_request,
            maker_codes=registry_of(state).maker_codes,
        )
    return json_response({"vehicles": results})


@router.get(
    "",
    responses={
        200: {
            "model": FleetVehicleList,
            "description": "A page of vehicles: a bare JSON array. When there is a next page, "
            'the `Link` header names it (RFC 8288, `rel="next"`); no header on the last page.',
            "headers": {"Link": {"schema": {"type": "string"}}},
        }
    },
)
async def list_vehicles(
    caller: CallerDep,
    state: StateDep,
    environment: EnvironmentDep,
    filter: Annotated[
        str | None,
        Query(
            description="URL-encoded JSON, e.g. "
            '{"status": {"operator": "in", "value": ["approved"]}} '
            '(also the short {"status": {"in": ["approved"]}})'
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Query(description=f"1..{service.LIST_MAX_LIMIT}, default {service.LIST_DEFAULT_LIMIT}"),
    ] = None,
    cursor: Annotated[
        str | None, Query(description='from the `Link: <...>; rel="next"` of the previous page')
    ] = None,
) -> Response:
    """The application's fleet vehicles in VIN order, optionally filtered, a page at a
    time: follow the `Link` header's `rel="next"` URL until there is none (docs/fleet.md)."""
    service.require_fleet_caller(caller)
    page = await service.list_vehicles(
        state.database.reader,
        caller=caller,
        vehicle_filter=parse_filter(filter),
        limit=limit,
        cursor=cursor,
        cursor_key=state.token_key,
    )
    headers: dict[str, str] = {}
    if page.next_cursor is not None:
        # Absolute, from the configured base URL (never the request's Host header), with
        # the same filter and page size.
        query = {"filter": filter, "limit": limit, "cursor": page.next_cursor}
        url = f"{public_base_url(state.settings, environment)}{router.prefix}?" + urlencode(
            {k: v for k, v in query.items() if v is not None}, quote_via=quote
        )
        headers["Link"] = f'<{url}>; rel="next"'
    return json_response(page.vehicles, headers=headers)


@router.get("/{vin}", responses={200: {"model": FleetVehicleView}})
async def get_vehicle(vin: str, caller: CallerDep, state: StateDep) -> Response:
    """One fleet vehicle with its changelog; 404 when the application never added it."""
    return json_response(await service.get_vehicle(state.database.reader, caller=caller, vin=vin))


@router.delete("/{vin}", responses={200: {"model": FleetVehicleView}})
async def remove_vehicle(vin: str, caller: CallerDep, state: StateDep) -> Response:
    """Remove a vehicle: an approved clearance is revoked, a pending request canceled
    (both finish asynchronously). 409 when it is already removed or being removed."""
    async with state.database.transaction() as conn:
        vehicle = await service.remove_vehicle(
            conn, caller=caller, vin=vin, now_us=state.clock.now_us()
        )
    return json_response(vehicle)
