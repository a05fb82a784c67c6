"""The sandbox admin API: vehicles, the simulator's controls and the emulator.

All under `/admin/v1/sandbox/` with the admin token; vehicles always belong to the
sandbox environment, whichever host or prefix the request came through."""

from __future__ import annotations

from typing import Any

from fastapi import Body, Response

from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.auth import AdminDep
from autoport.kit.clock import from_iso
from autoport.kit.errors import ApiError
from autoport.kit.routing import api_router, json_response
from autoport.kit.state import StateDep
from autoport.proof.service import current_vehicle_code
from autoport.sandbox import service
from autoport.sandbox.physics import scenario_problem
from autoport.sandbox.replay import replay
from autoport.sandbox.schemas import (
    BehaviourChange,
    CommandFailureSet,
    FailureSet,
    ReplayAnswer,
    ReplayRequest,
    SandboxVehicleList,
    SandboxVehicleView,
    ScenarioChange,
    StepRequest,
    VehicleCodeView,
    VehicleCreate,
    vehicle_view,
)
from autoport.sandbox.service import ENVIRONMENT, NewVehicle

router = api_router(prefix="/admin/v1/sandbox", tags=["sandbox"])

# Every route that answers a vehicle answers it in the same view.
VEHICLE: dict[int | str, dict[str, Any]] = {200: {"model": SandboxVehicleView}}


@router.post("/vehicles", status_code=201, responses={201: {"model": SandboxVehicleView}})
async def create_vehicle(body: VehicleCreate, state: StateDep, _: AdminDep) -> Response:
    """Create a sandbox vehicle (brand `sandbox`); its simulation starts at once."""
    vehicle = await service.create_vehicle(
        state.database,
        ingest=ingest_vehicle_data,
        spec=NewVehicle(
            vin=body.vin,
            name=body.name,
            powertrain=body.powertrain,
            profile=body.profile,
            scenario=body.scenario,
            seed=body.seed,
            time_scale=body.time_scale,
            step_seconds=body.step_seconds,
            running=body.running,
            extra_properties=tuple(body.extra_properties),
        ),
        now_us=state.clock.now_us(),
    )
    return json_response(vehicle_view(vehicle), status_code=201)


@router.get("/vehicles", responses={200: {"model": SandboxVehicleList}})
async def list_vehicles(state: StateDep, _: AdminDep) -> Response:
    """Every sandbox vehicle."""
    vehicles = await service.list_vehicles(state.database.reader)
    return json_response({"vehicles": [vehicle_view(v) for v in vehicles]})


@router.get("/vehicles/{vin}", responses=VEHICLE)
async def show_vehicle(vin: str, state: StateDep, _: AdminDep) -> Response:
    """One vehicle, with what it would answer a pull right now (`data`)."""
    vehicle = await service.get_vehicle(state.database.reader, vin)
    data = service.current_data(vehicle, properties=None, now_us=state.clock.now_us())
    return json_response(vehicle_view(vehicle, data=data))


@router.delete("/vehicles/{vin}", status_code=204)
async def delete_vehicle(vin: str, state: StateDep, _: AdminDep) -> Response:
    """Remove a vehicle from the simulator (data already delivered stays delivered)."""
    async with state.database.transaction() as conn:
        await service.delete_vehicle(conn, vin)
    return Response(status_code=204)


@router.put("/vehicles/{vin}/scenario", responses=VEHICLE)
async def change_scenario(vin: str, body: ScenarioChange, state: StateDep, _: AdminDep) -> Response:
    """Switch scenario or seed (the scenario restarts), change the time scale, pause or
    resume."""
    vehicle = await service.set_scenario(
        state.database,
        ingest=ingest_vehicle_data,
        vin=vin,
        now_us=state.clock.now_us(),
        scenario=body.scenario,
        seed=body.seed,
        time_scale=body.time_scale,
        running=body.running,
        reset=body.reset,
    )
    return json_response(vehicle_view(vehicle))


@router.post("/vehicles/{vin}/step", responses=VEHICLE)
async def step_vehicle(vin: str, body: StepRequest, state: StateDep, _: AdminDep) -> Response:
    """Advance the simulation by `seconds` of simulated time now, without waiting."""
    vehicle = await service.step_vehicle(
        state.database,
        ingest=ingest_vehicle_data,
        stepping=service.sandbox_parts(state).stepping,
        vin=vin,
        seconds=body.seconds,
        now_us=state.clock.now_us(),
    )
    return json_response(vehicle_view(vehicle))


@router.patch("/vehicles/{vin}/properties", responses=VEHICLE)
async def set_properties(
    vin: str,
    state: StateDep,
    _: AdminDep,
    body: dict[str, Any] = Body(
        ..., examples=[{"charging.battery_level": 0.42, "doors.locks_state": "unlocked"}]
    ),
) -> Response:
    """Set properties by hand: `{"capability.property": data}` (a list of data for array
    properties), each validated by the catalog."""
    vehicle = await service.set_properties(
        state.database,
        ingest=ingest_vehicle_data,
        vin=vin,
        values=body,
        now_us=state.clock.now_us(),
    )
    return json_response(vehicle_view(vehicle))


@router.delete("/vehicles/{vin}/properties/{key}", responses=VEHICLE)
async def clear_property(vin: str, key: str, state: StateDep, _: AdminDep) -> Response:
    """Unpin a property set by hand; the simulator produces it again."""
    vehicle = await service.clear_property(
        state.database, ingest=ingest_vehicle_data, vin=vin, key=key, now_us=state.clock.now_us()
    )
    return json_response(vehicle_view(vehicle))


@router.put("/vehicles/{vin}/failures/{key}", responses=VEHICLE)
async def inject_failure(
    vin: str, key: str, body: FailureSet, state: StateDep, _: AdminDep
) -> Response:
    """Make one property fail with a failure reason of the spec until cleared."""
    vehicle = await service.set_failure(
        state.database,
        ingest=ingest_vehicle_data,
        vin=vin,
        key=key,
        reason=body.reason,
        description=body.description,
        now_us=state.clock.now_us(),
    )
    return json_response(vehicle_view(vehicle))


@router.delete("/vehicles/{vin}/failures/{key}", responses=VEHICLE)
async def clear_failure(vin: str, key: str, state: StateDep, _: AdminDep) -> Response:
    """The property delivers values again."""
    vehicle = await service.clear_failure(
        state.database, ingest=ingest_vehicle_data, vin=vin, key=key, now_us=state.clock.now_us()
    )
    return json_response(vehicle_view(vehicle))


@router.put("/vehicles/{vin}/command-failures/{key}", responses=VEHICLE)
async def script_command_failure(
    vin: str, key: str, body: CommandFailureSet, state: StateDep, _: AdminDep
) -> Response:
    """Make every `key` command (capability.command) fail or time out with a failure
    reason of the spec until cleared."""
    async with state.database.transaction() as conn:
        vehicle = await service.set_command_failure(
            conn,
            vin=vin,
            key=key,
            status=body.status,
            reason=body.reason,
            description=body.description,
            now_us=state.clock.now_us(),
        )
    return json_response(vehicle_view(vehicle))


@router.delete("/vehicles/{vin}/command-failures/{key}", responses=VEHICLE)
async def clear_command_failure(vin: str, key: str, state: StateDep, _: AdminDep) -> Response:
    """The car obeys `key` commands again."""
    async with state.database.transaction() as conn:
        vehicle = await service.clear_command_failure(
            conn, vin=vin, key=key, now_us=state.clock.now_us()
        )
    return json_response(vehicle_view(vehicle))


@router.patch("/vehicles/{vin}/behaviour", responses=VEHICLE)
async def change_behaviour(
    vin: str, body: BehaviourChange, state: StateDep, _: AdminDep
) -> Response:
    """Offline/asleep (pull → 408), latency (pull → 504 past its timeout), eligibility,
    connectivity status and privacy mode (pull → 403; the car sends nothing meanwhile)."""
    vehicle = await service.set_behaviour(
        state.database,
        outcomes=service.sandbox_parts(state).freshness,
        ingest=ingest_vehicle_data,
        vin=vin,
        now_us=state.clock.now_us(),
        offline=body.offline,
        latency_seconds=body.latency_seconds,
        eligible=body.eligible,
        connectivity_status=body.connectivity_status,
        privacy_mode=body.privacy_mode,
    )
    return json_response(vehicle_view(vehicle))


@router.get("/vehicles/{vin}/vehicle-code", responses={200: {"model": VehicleCodeView}})
async def vehicle_code(vin: str, state: StateDep, _: AdminDep) -> Response:
    """The one-time code the car's display shows during a `vehicle_code` consent flow
    (null while no flow waits for one)."""
    await service.get_vehicle(state.database.reader, vin)
    code = await current_vehicle_code(
        state.database.reader, environment=ENVIRONMENT, vin=vin, now_us=state.clock.now_us()
    )
    return json_response({"vin": vin, "vehicle_code": code})


@router.post("/replay", responses={200: {"model": ReplayAnswer}})
async def replay_scenario(body: ReplayRequest, _: AdminDep) -> Response:
    """A scenario's data step by step from its seed, without any vehicle: identical for
    identical input, for tests that need known data."""
    try:
        start_us = from_iso(body.start)
    except ValueError:
        raise ApiError(
            422, f"start: {body.start!r} is not an ISO 8601 date-time", source="start"
        ) from None
    problem = scenario_problem(body.scenario, body.powertrain)
    if problem:
        raise ApiError(422, f"scenario: {problem}", source="scenario")
    points = list(
        replay(
            scenario=body.scenario,
            powertrain=body.powertrain,
            profile=body.profile,
            seed=body.seed,
            steps=body.steps,
            step_seconds=body.step_seconds,
            start_us=start_us,
        )
    )
    return json_response({"vin": None, "brand": "sandbox", "points": points})
