from __future__ import annotations

from typing import Annotated

from fastapi import Query
from starlette.responses import Response

from autoport.fleet import service
from autoport.fleet.filters import parse_filter
from autoport.fleet.schemas import (
    AddVehiclesAnswer,
    AddVehiclesRequest,
    FleetVehicleList,
    FleetVehicleView,
)
from autoport.kit.auth import CallerDep
from autoport.kit.routing import api_router, json_response
from autoport.kit.state import StateDep

router = api_router(prefix="/v1/fleets/vehicles", tags=["fleet clearance"])


@router.post("", responses={200: {"model": AddVehiclesAnswer}})
async def add_vehicles(body: AddVehiclesRequest, caller: CallerDep, state: StateDep) -> Response:
    """Ask for vehicles to be cleared (scope `fleet:clearance`). Answers 200 with one item
    per vehicle: `pending` for a new request, the current status for one already
    registered, or `status: "error"` with a `description` for a bad VIN or brand."""
    results = await service.add_vehicles(
        state.database,
        caller=caller,
        vehicles=body.vehicles,
        now_us=state.clock.now_us(),
        limit=state.settings.fleet_max_vehicles_per_request,
    )
    return json_response({"vehicles": results})


@router.get("", responses={200: {"model": FleetVehicleList}})
async def list_vehicles(
    caller: CallerDep,
    state: StateDep,
    filter: Annotated[
        str | None,
        Query(description='URL-encoded JSON, e.g. {"status": {"in": ["approved"]}}'),
    ] = None,
) -> Response:
    """The application's fleet vehicles, optionally filtered (docs/fleet.md)."""
    service.require_fleet_caller(caller)
    vehicles = await service.list_vehicles(
        state.database, caller=caller, vehicle_filter=parse_filter(filter)
    )
    return json_response({"vehicles": vehicles})


@router.get("/{vin}", responses={200: {"model": FleetVehicleView}})
async def get_vehicle(vin: str, caller: CallerDep, state: StateDep) -> Response:
    """One fleet vehicle with its changelog; 404 when the application never added it."""
    return json_response(await service.get_vehicle(state.database, caller=caller, vin=vin))


@router.delete("/{vin}", responses={200: {"model": FleetVehicleView}})
async def remove_vehicle(vin: str, caller: CallerDep, state: StateDep) -> Response:
    """Remove a vehicle: an approved clearance is revoked, a pending request canceled
    (both finish asynchronously). 409 when it is already removed or being removed."""
    vehicle = await service.remove_vehicle(
        state.database, caller=caller, vin=vin, now_us=state.clock.now_us()
    )
    return json_response(vehicle)
