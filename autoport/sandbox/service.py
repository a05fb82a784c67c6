"""Sandbox vehicles: creation, the simulator's clock, and the emulator's controls.

Every value a sandbox vehicle produces, simulated or set by hand, leaves through one
door: the ingestion port `Ingest` (autoport.brands.push), which is
autoport.ingestion.service.ingest_vehicle_data in the running service (validated, stored,
kept in history, streamed), so pull, history, streams and webhooks see sandbox data
exactly like a carmaker's.

`Ingest` runs its own transaction, so it is always called after ours has committed. That is
why the functions that send (create_vehicle, set_scenario, step_vehicle, set_properties,
clear_property, set_failure, clear_failure, set_behaviour, execute_command, tick) take the
`Database` and open their transaction themselves: a write, its commit, then the send (the
service boundary's exception, docs/development.md). The others take a `Connection` in the
caller's transaction.

A vehicle in privacy mode (the owner switched data sharing off in the car) sends nothing:
the simulation goes on, but nothing leaves through `Ingest` until privacy mode is switched
off; then the car reports its whole current state at once.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any, Protocol

import structlog

from autoport.brands.base import CommandOutcome, CommandRequest
from autoport.brands.push import Ingest
from autoport.catalog import CATALOG, DataPointError, validate_data
from autoport.catalog.catalog import UnknownProperty
from autoport.catalog.validation import FAILURE_REASONS
from autoport.kit.clock import MICROS, to_iso
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.state import AppState, parts_of
from autoport.sandbox import repository
from autoport.sandbox.physics import (
    COMMAND_HANDLERS,
    SANDBOX_COMMANDS,
    CommandRefused,
    Powertrain,
    Scenario,
    VehicleState,
    advance,
    apply_command,
    initial_state,
    scenario_problem,
)
from autoport.sandbox.physics import replace as physics_replace
from autoport.sandbox.repository import VehicleRow
from autoport.sandbox.snapshot import (
    PROFILES,
    CapabilityData,
    Timebase,
    changed,
    equipped_properties,
    simulated_values,
    to_capabilities,
)
from autoport.vehicle_data import freshness
from autoport.vehicles.vin import generate_vin, vin_problem

log = structlog.get_logger("autoport.sandbox")

# Simulation steps run between two yields to the event loop: a step of 7 days (604,800
# steps, about 12 s of CPU) held every other request of the process for its whole length.
_STEPS_PER_YIELD = 1_000

BRAND = "sandbox"
SOURCE = "sandbox"
ENVIRONMENT = Environment.sandbox
CONNECTIVITY_STATUSES = ("activated", "deactivated", "unknown")
MAX_TIME_SCALE = 3600.0
# Steps are placed in real time at step_seconds / time_scale: a scale near 0 would put
# them past any instant (a 500 on step, and in the runner). One simulated millisecond per
# real second is slow enough for anyone.
MIN_TIME_SCALE = 0.001
TIME_SCALE_RANGE = f"time_scale: must be between {MIN_TIME_SCALE:g} and {MAX_TIME_SCALE:g}"


# --------------------------------------------------------------------------- helpers


def property_key(key: str, *, source: str = "property") -> str:
    """Check a "capability.property" name against the catalog; 422 naming it if unknown."""
    capability, dot, name = key.partition(".")
    if not dot:
        raise ApiError(
            422, f"{key!r} is not a property name (expected capability.property)", source=source
        )
    try:
        CATALOG.property(capability, name)
    except UnknownProperty as error:
        raise ApiError(422, f"{key}: {error}", source=source) from None
    return key


def check_value(key: str, value: Any) -> Any:
    """Validate a bare data value (a list of them for array properties); 422 naming the
    property and what is wrong."""
    property_key(key, source=key)
    capability, _, name = key.partition(".")
    prop = CATALOG.property(capability, name)
    try:
        if prop.multiple:
            if not isinstance(value, list):
                raise DataPointError(key, "expected an array of values (the property is an array)")
            return [validate_data(prop, item, path=f"{key}[{i}]") for i, item in enumerate(value)]
        return validate_data(prop, value, path=key)
    except DataPointError as error:
        raise ApiError(422, str(error), source=error.path) from None


def _not_found(vin: str) -> ApiError:
    return ApiError(404, f"no sandbox vehicle with VIN {vin}", source="vin")


def _bump(vehicle: VehicleRow, now_us: int) -> int:
    # updated_at is the row's version: it must change on every write.
    return max(now_us, vehicle.updated_at + 1)


def values_of(vehicle: VehicleRow) -> dict[str, Any]:
    """The simulated values of the vehicle's equipped properties at its current step."""
    return simulated_values(
        vehicle.state, vehicle.properties, Timebase(vehicle.started_at, vehicle.time_scale)
    )


def simulated_timestamp_us(vehicle: VehicleRow) -> int:
    """The instant of the vehicle's simulated values: when its current step was due."""
    return vehicle.step_time_us(vehicle.step)


def anchored_now(vehicle: VehicleRow, now_us: int) -> VehicleRow:
    """The vehicle with its wall-clock anchor moved so that its current step is due now:
    no jump forward, and its simulated values carry the instant `now_us`."""
    elapsed_us = int(vehicle.step * vehicle.step_seconds / vehicle.time_scale * MICROS)
    return replace(vehicle, started_at=now_us - elapsed_us)


def changed_by_hand(vehicle: VehicleRow, state: VehicleState, now_us: int) -> VehicleRow:
    """The vehicle with a state the emulator set at `now_us`. The snapshot's instant is
    the current step's, which lies in the past (all the way back to the pause on a paused
    car, up to a step on a running one): the values it already delivered carry that same
    instant, so the new ones would tie with them and could lose. Re-anchoring to now gives
    the change its own, later instant; event instants are pinned first, with the anchor
    they happened under."""
    pinned = replace(vehicle, state=pin_event_times(vehicle, vehicle.state, vehicle.state))
    return anchored_now(replace(pinned, state=state), now_us)


# --------------------------------------------------------------------------- vehicles


@dataclass(frozen=True, slots=True)
class NewVehicle:
    vin: str | None = None
    name: str | None = None
    powertrain: Powertrain = Powertrain.electric
    profile: str = "standard"
    scenario: Scenario = Scenario.parked
    seed: int | None = None
    time_scale: float = 1.0
    step_seconds: float = 1.0
    running: bool = True
    extra_properties: tuple[str, ...] = ()
    # Made in the console by a developer of this account (only its users see it there).
    account_id: str | None = None


async def create_vehicle(
    db: Database, *, ingest: Ingest, spec: NewVehicle, now_us: int
) -> VehicleRow:
    if spec.vin is not None:
        problem = vin_problem(spec.vin)
        if problem:
            raise ApiError(422, f"vin: {problem}", source="vin")
    if spec.profile not in PROFILES:
        raise ApiError(422, f"profile: must be one of {', '.join(PROFILES)}", source="profile")
    problem = scenario_problem(spec.scenario, spec.powertrain)
    if problem:
        raise ApiError(422, f"scenario: {problem}", source="scenario")
    if not MIN_TIME_SCALE <= spec.time_scale <= MAX_TIME_SCALE:
        raise ApiError(422, TIME_SCALE_RANGE, source="time_scale")
    if not 0.1 <= spec.step_seconds <= 60:
        raise ApiError(422, "step_seconds: must be between 0.1 and 60", source="step_seconds")
    extra = [property_key(key, source="extra_properties") for key in spec.extra_properties]
    seed = spec.seed if spec.seed is not None else random.SystemRandom().randrange(2**31)
    vin = spec.vin or generate_vin(random.Random(f"{seed}/{now_us}"))
    vehicle = VehicleRow(
        environment=ENVIRONMENT,
        vin=vin,
        name=spec.name,
        powertrain=spec.powertrain.value,
        profile=spec.profile,
        properties=tuple(equipped_properties(spec.powertrain, spec.profile, extra)),
        scenario=spec.scenario.value,
        seed=seed,
        time_scale=spec.time_scale,
        step_seconds=spec.step_seconds,
        running=spec.running,
        started_at=now_us,
        step=0,
        state=initial_state(spec.scenario, spec.powertrain, seed),
        overrides={},
        failures={},
        offline=False,
        latency_seconds=0.0,
        eligible=True,
        connectivity_status="activated",
        privacy_mode=False,
        created_at=now_us,
        updated_at=now_us,
        account_id=spec.account_id,
    )
    async with db.transaction() as conn:
        if not await repository.create(conn, vehicle):
            raise ApiError(409, f"a sandbox vehicle with VIN {vin} already exists", source="vin")
    await _ingest_values(db, ingest, vehicle, values_of(vehicle), now_us)
    return vehicle


async def get_vehicle(conn: Connection, vin: str) -> VehicleRow:
    vehicle = await repository.get(conn, ENVIRONMENT, vin)
    if vehicle is None:
        raise _not_found(vin)
    return vehicle


async def list_vehicles(conn: Connection) -> list[VehicleRow]:
    return await repository.list_vehicles(conn, ENVIRONMENT)


async def list_account_vehicles(conn: Connection, account_id: str | None) -> list[VehicleRow]:
    """The console's list: an account's own vehicles; every vehicle for the operator
    (`account_id` None)."""
    if account_id is None:
        return await list_vehicles(conn)
    return await repository.list_vehicles_of_account(conn, ENVIRONMENT, account_id)


async def get_account_vehicle(conn: Connection, vin: str, account_id: str | None) -> VehicleRow:
    """The vehicle if the account may see it (the operator, `account_id` None, sees all);
    another account's vehicle is answered like an unknown VIN (404), never 403: whether a
    VIN exists in another account is not this account's business."""
    vehicle = await get_vehicle(conn, vin)
    if account_id is not None and vehicle.account_id != account_id:
        raise _not_found(vin)
    return vehicle


async def delete_vehicle(conn: Connection, vin: str) -> None:
    if not await repository.delete(conn, ENVIRONMENT, vin):
        raise _not_found(vin)


async def _send(
    db: Database, ingest: Ingest, vehicle: VehicleRow, data: dict[str, Any], now_us: int
) -> None:
    """What the emulated car sends to the platform: every path goes through here, so a
    car in privacy mode sends nothing, whatever changed."""
    if vehicle.privacy_mode or not data:
        return
    await ingest(
        db,
        environment=vehicle.environment,
        vin=vehicle.vin,
        brand=BRAND,
        data=data,
        now_us=now_us,
        source=SOURCE,
    )


async def _ingest_values(
    db: Database, ingest: Ingest, vehicle: VehicleRow, values: dict[str, Any], now_us: int
) -> None:
    """Send simulated values, minus the ones the emulator pinned or made fail."""
    values = {
        k: v for k, v in values.items() if k not in vehicle.overrides and k not in vehicle.failures
    }
    if values:
        timestamp = to_iso(min(simulated_timestamp_us(vehicle), now_us))
        await _send(db, ingest, vehicle, to_capabilities(values, timestamp), now_us)


# --------------------------------------------------------------------------- simulator


async def set_scenario(
    db: Database,
    *,
    ingest: Ingest,
    vin: str,
    now_us: int,
    scenario: Scenario | None = None,
    seed: int | None = None,
    time_scale: float | None = None,
    running: bool | None = None,
    reset: bool = False,
) -> VehicleRow:
    """Switch scenario (restarting it from its seed), speed time up, pause or resume.

    A new scenario keeps what a real car keeps (odometer, position, service counters)
    unless `reset`; its energy levels are the scenario's own."""
    if time_scale is not None and not MIN_TIME_SCALE <= time_scale <= MAX_TIME_SCALE:
        raise ApiError(422, TIME_SCALE_RANGE, source="time_scale")
    async with db.transaction() as conn:
        vehicle = await repository.get_for_update(conn, ENVIRONMENT, vin)
        if vehicle is None:
            raise _not_found(vin)
        before = values_of(vehicle)
        # Events are pinned with the anchor and scale they happened under, before
        # either changes below.
        updated = replace(vehicle, state=pin_event_times(vehicle, vehicle.state, vehicle.state))
        restart = scenario is not None or seed is not None or reset
        if restart:
            new_scenario = scenario or Scenario(vehicle.scenario)
            powertrain = Powertrain(vehicle.powertrain)
            problem = scenario_problem(new_scenario, powertrain)
            if problem:
                raise ApiError(422, f"scenario: {problem}", source="scenario")
            new_seed = seed if seed is not None else vehicle.seed
            state = initial_state(new_scenario, powertrain, new_seed)
            if not reset:
                state = _carry_over(updated.state, state)
            updated = replace(
                updated,
                scenario=new_scenario.value,
                seed=new_seed,
                state=state,
                step=0,
                started_at=now_us,
            )
        if time_scale is not None or (running is True and not vehicle.running):
            scale = time_scale if time_scale is not None else updated.time_scale
            updated = anchored_now(replace(updated, time_scale=scale), now_us)
        if running is not None:
            updated = replace(updated, running=running)
        updated = replace(updated, updated_at=_bump(vehicle, now_us))
        await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
    if restart:
        await _ingest_values(db, ingest, updated, changed(before, values_of(updated)), now_us)
    return updated


def _carry_over(old: VehicleState, new: VehicleState) -> VehicleState:
    return replace(
        new,
        odometer_km=max(old.odometer_km, new.odometer_km) if old.odometer_km else new.odometer_km,
        segment=old.segment,
        segment_progress_m=old.segment_progress_m,
        latitude=old.latitude,
        longitude=old.longitude,
        heading_deg=old.heading_deg,
        altitude_m=old.altitude_m,
        service_distance_km=min(old.service_distance_km, new.service_distance_km),
        service_time_s=min(old.service_time_s, new.service_time_s),
        last_trip_distance_km=old.last_trip_distance_km,
        last_trip_duration_s=old.last_trip_duration_s,
        last_trip_energy_kwh=old.last_trip_energy_kwh,
        last_trip_fuel_l=old.last_trip_fuel_l,
        last_trip_electric_km=old.last_trip_electric_km,
        last_trip_odometer_km=old.last_trip_odometer_km,
        last_trip_soc=old.last_trip_soc,
        # The trip's end keeps its pinned instant; its simulated second only says that
        # there was one (the new scenario's clock starts again at zero).
        last_trip_end_s=old.last_trip_end_s,
        last_trip_end_us=old.last_trip_end_us,
    )


def pin_event_times(vehicle: VehicleRow, before: VehicleState, after: VehicleState) -> VehicleState:
    """`after` with the wall-clock instants of a trip end or crash that happened since
    `before` (or was never pinned), mapped with the vehicle's anchor and time scale in
    force now. Once pinned they stay put when the time scale changes or time is stepped."""
    timebase = Timebase(vehicle.started_at, vehicle.time_scale)
    trip_end, crashed = after.last_trip_end_s, after.crashed_s
    if trip_end is not None and (
        trip_end != before.last_trip_end_s or after.last_trip_end_us is None
    ):
        after = replace(after, last_trip_end_us=timebase.at_us(trip_end))
    if crashed is not None and (crashed != before.crashed_s or after.crashed_us is None):
        after = replace(after, crashed_us=timebase.at_us(crashed))
    return after


async def advance_vehicle(
    db: Database, *, ingest: Ingest, vehicle: VehicleRow, steps: int, now_us: int
) -> VehicleRow | None:
    """Run `steps` simulation steps and ingest what changed. None when another writer
    changed the vehicle meanwhile (the caller simply tries again later)."""
    if steps <= 0:
        return vehicle
    state = vehicle.state
    for done in range(0, steps, _STEPS_PER_YIELD):
        if done:
            await asyncio.sleep(0)  # other requests in between (_STEPS_PER_YIELD)
        state = advance(
            state,
            seed=vehicle.seed,
            first_step=vehicle.step + 1 + done,
            steps=min(_STEPS_PER_YIELD, steps - done),
            step_seconds=vehicle.step_seconds,
        )
    updated = replace(
        vehicle,
        state=pin_event_times(vehicle, vehicle.state, state),
        step=vehicle.step + steps,
        updated_at=_bump(vehicle, now_us),
    )
    async with db.transaction() as conn:
        if not await repository.update(conn, updated, seen_updated_at=vehicle.updated_at):
            return None
    await _ingest_values(
        db, ingest, updated, changed(values_of(vehicle), values_of(updated)), now_us
    )
    return updated


class SandboxParts(Protocol):
    """The parts the emulator's changes take (autoport.state.Parts; mypy checks it has
    them)."""

    # The VINs this app is stepping now (`step_vehicle`): the runner (`tick`) leaves
    # them alone, or its own advance would make the step's write a conflict (409) at
    # its end.
    @property
    def stepping(self) -> set[str]: ...
    # The pull's freshness windows: a behaviour change forgets what they keep.
    @property
    def freshness(self) -> freshness.FreshnessWindows: ...


def sandbox_parts(state: AppState) -> SandboxParts:
    parts: SandboxParts = parts_of(state)
    return parts


async def step_vehicle(
    db: Database,
    *,
    ingest: Ingest,
    stepping: set[str],
    vin: str,
    seconds: float,
    now_us: int,
) -> VehicleRow:
    """Advance one vehicle by `seconds` of simulated time now (for scripts and CI that
    do not want to wait); the wall-clock anchor moves back so the runner does not redo
    them. `stepping`: the VINs this app is stepping (SandboxParts), `vin` among them
    meanwhile."""
    vehicle = await get_vehicle(db.reader, vin)
    steps = round(seconds / vehicle.step_seconds)
    if steps < 1 or steps > 7 * 86_400:
        raise ApiError(
            422, "seconds: must cover at least one step and at most 7 days", source="seconds"
        )
    shift = int(steps * vehicle.step_seconds / vehicle.time_scale * MICROS)
    # The anchor moves with the new row; `save` still finds the stored version.
    anchored = replace(vehicle, started_at=vehicle.started_at - shift)
    if vehicle.vin in stepping:
        raise ApiError(409, "the vehicle is being stepped already; try again", source="vin")
    stepping.add(vehicle.vin)
    try:
        result = await advance_vehicle(
            db, ingest=ingest, vehicle=anchored, steps=steps, now_us=now_us
        )
    finally:
        stepping.discard(vehicle.vin)
    if result is None:
        raise ApiError(409, "the vehicle changed meanwhile; try again", source="vin")
    return result


async def tick(
    db: Database,
    *,
    ingest: Ingest,
    stepping: Collection[str],
    now_us: int,
    limit: int = 500,
    max_catch_up: int = 3600,
) -> int:
    """One round of the runner: every running vehicle whose next step is due advances to
    now, but those `step_vehicle` is stepping (`stepping`). Returns how many vehicles
    advanced."""
    advanced = 0
    for vehicle in await repository.list_running(db.reader, limit):
        if vehicle.vin in stepping:
            continue  # step_vehicle advances it now, and moves its anchor
        due = vehicle.due_step(now_us)
        if due <= vehicle.step:
            continue
        if due - vehicle.step > max_catch_up:
            # Long downtime: simulate the last stretch only and move the anchor, rather
            # than block the loop on days of catch-up.
            skipped = due - vehicle.step - max_catch_up
            vehicle = replace(
                vehicle,
                started_at=vehicle.started_at
                + int(skipped * vehicle.step_seconds / vehicle.time_scale * MICROS),
            )
            due = vehicle.step + max_catch_up
        try:
            result = await advance_vehicle(
                db, ingest=ingest, vehicle=vehicle, steps=due - vehicle.step, now_us=now_us
            )
        except Exception:
            # One vehicle's bad moment must not stop the others; it is retried next tick.
            log.exception("sandbox vehicle could not advance", vin=vehicle.vin)
            continue
        if result is not None:
            advanced += 1
    return advanced


# --------------------------------------------------------------------------- emulator

# Properties that are physical state: setting them moves the simulation itself, which
# then carries on from the new value (a battery set to 20 % keeps draining from 20 %).
_UNITS_TO_KM = {"kilometers": 1.0, "meters": 0.001, "miles": 1.609344}


def _apply_to_state(state: VehicleState, key: str, value: Any) -> VehicleState | None:
    powertrain = Powertrain(state.powertrain)
    if key in ("charging.battery_level", "diagnostics.battery_level") and powertrain.has_battery:
        return replace(state, soc=float(value))
    if key == "charging.charge_limit" and powertrain.has_battery:
        return replace(state, charge_limit=float(value))
    if key == "diagnostics.fuel_level" and powertrain.has_tank:
        return replace(state, fuel_l=float(value) * state.tank_l)
    if key == "diagnostics.odometer" and value["unit"] in _UNITS_TO_KM:
        return replace(state, odometer_km=float(value["value"]) * _UNITS_TO_KM[value["unit"]])
    if key == "doors.locks_state":
        locked = value == "locked"
        return replace(state, door_locked=(locked,) * 4)
    return None


async def set_properties(
    db: Database, *, ingest: Ingest, vin: str, values: dict[str, Any], now_us: int
) -> VehicleRow:
    """Set properties by hand, validated by the catalog. Physical ones change the
    simulation; every other one is pinned (the simulator stops producing it) until
    cleared. Nothing is stored when any value is invalid."""
    if not values:
        raise ApiError(422, 'give at least one property: {"capability.property": value}')
    checked = {key: check_value(key, value) for key, value in values.items()}
    async with db.transaction() as conn:
        vehicle = await repository.get_for_update(conn, ENVIRONMENT, vin)
        if vehicle is None:
            raise _not_found(vin)
        before = values_of(vehicle)
        state = vehicle.state
        overrides = dict(vehicle.overrides)
        pinned: dict[str, Any] = {}
        for key, value in checked.items():
            moved = _apply_to_state(state, key, value)
            if moved is not None and key not in overrides:
                state = moved
            else:
                overrides[key] = {"data": value, "timestamp_us": now_us}
                pinned[key] = value
        updated = vehicle if state == vehicle.state else changed_by_hand(vehicle, state, now_us)
        updated = replace(updated, overrides=overrides, updated_at=_bump(vehicle, now_us))
        await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
    simulated = changed(before, values_of(updated))
    # The simulator's consequences (range follows the battery) ride along.
    await _ingest_values(db, ingest, updated, simulated, now_us)
    sent = {k: v for k, v in pinned.items() if k not in updated.failures}
    if sent:
        await _send(db, ingest, updated, to_capabilities(sent, to_iso(now_us)), now_us)
    return updated


async def clear_property(
    db: Database, *, ingest: Ingest, vin: str, key: str, now_us: int
) -> VehicleRow:
    """Unpin a property: the simulator produces it again (at once, when it can)."""
    property_key(key)
    async with db.transaction() as conn:
        vehicle = await repository.get_for_update(conn, ENVIRONMENT, vin)
        if vehicle is None:
            raise _not_found(vin)
        if key not in vehicle.overrides:
            raise ApiError(404, f"{key} is not set by hand on {vin}", source="property")
        overrides = {k: v for k, v in vehicle.overrides.items() if k != key}
        # The simulated value comes back now, after the pinned one it replaces.
        updated = replace(
            changed_by_hand(vehicle, vehicle.state, now_us),
            overrides=overrides,
            updated_at=_bump(vehicle, now_us),
        )
        await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
    current = values_of(updated)
    if key in current:
        await _ingest_values(db, ingest, updated, {key: current[key]}, now_us)
    return updated


async def set_failure(
    db: Database,
    *,
    ingest: Ingest,
    vin: str,
    key: str,
    reason: str,
    description: str | None,
    now_us: int,
) -> VehicleRow:
    """Make a property fail with one of the spec's failure reasons, until cleared."""
    property_key(key)
    if reason not in FAILURE_REASONS:
        raise ApiError(
            422, f"reason: {reason!r} is not one of {', '.join(FAILURE_REASONS)}", source="reason"
        )
    text = description or f"{key} failed ({reason}), injected by the sandbox emulator"
    async with db.transaction() as conn:
        vehicle = await repository.get_for_update(conn, ENVIRONMENT, vin)
        if vehicle is None:
            raise _not_found(vin)
        failures = {
            **vehicle.failures,
            key: {"reason": reason, "description": text, "timestamp_us": now_us},
        }
        updated = replace(vehicle, failures=failures, updated_at=_bump(vehicle, now_us))
        await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
    await _send(db, ingest, updated, failure_capabilities({key: failures[key]}, now_us), now_us)
    return updated


async def clear_failure(
    db: Database, *, ingest: Ingest, vin: str, key: str, now_us: int
) -> VehicleRow:
    property_key(key)
    async with db.transaction() as conn:
        vehicle = await repository.get_for_update(conn, ENVIRONMENT, vin)
        if vehicle is None:
            raise _not_found(vin)
        if key not in vehicle.failures:
            raise ApiError(404, f"{key} has no injected failure on {vin}", source="property")
        failures = {k: v for k, v in vehicle.failures.items() if k != key}
        updated = replace(vehicle, failures=failures, updated_at=_bump(vehicle, now_us))
        await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
    # The property recovers: its value is delivered again at once.
    value = current_values(updated).get(key)
    if value is not None:
        await _send(db, ingest, updated, to_capabilities({key: value}, to_iso(now_us)), now_us)
    return updated


async def set_behaviour(
    db: Database,
    *,
    ingest: Ingest,
    vin: str,
    now_us: int,
    offline: bool | None = None,
    latency_seconds: float | None = None,
    eligible: bool | None = None,
    connectivity_status: str | None = None,
    privacy_mode: bool | None = None,
    outcomes: freshness.FreshnessWindows | None = None,
) -> VehicleRow:
    """Offline/asleep (pull → 408), slow (pull → 504 past the pull's timeout), eligibility
    and connectivity as the eligibility endpoint reports them, privacy mode (pull → 403;
    the car sends nothing meanwhile). When privacy mode is switched off, the car reports
    its whole current state at once through `ingest`. `outcomes`: the app's freshness
    windows, whose kept answers about `vin` are forgotten too (None in a CLI: it keeps
    none)."""
    if latency_seconds is not None and not 0 <= latency_seconds <= 600:
        raise ApiError(422, "latency_seconds: must be between 0 and 600", source="latency_seconds")
    if connectivity_status is not None and connectivity_status not in CONNECTIVITY_STATUSES:
        raise ApiError(
            422,
            f"connectivity_status: must be one of {', '.join(CONNECTIVITY_STATUSES)}",
            source="connectivity_status",
        )
    async with db.transaction() as conn:
        vehicle = await repository.get_for_update(conn, ENVIRONMENT, vin)
        if vehicle is None:
            raise _not_found(vin)
        updated = replace(
            vehicle,
            offline=vehicle.offline if offline is None else offline,
            latency_seconds=vehicle.latency_seconds if latency_seconds is None else latency_seconds,
            eligible=vehicle.eligible if eligible is None else eligible,
            connectivity_status=connectivity_status or vehicle.connectivity_status,
            privacy_mode=vehicle.privacy_mode if privacy_mode is None else privacy_mode,
            updated_at=_bump(vehicle, now_us),
        )
        await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
        # The car now answers differently: the next pull asks it, whatever the window.
        await freshness.forget(conn, outcomes, environment=str(ENVIRONMENT), vin=vin)
    if vehicle.privacy_mode and not updated.privacy_mode:
        # Sharing is on again: what changed meanwhile (simulated, pinned or failing)
        # arrives now; points already delivered are identical and change nothing.
        await _send(
            db, ingest, updated, current_data(updated, properties=None, now_us=now_us), now_us
        )
    return updated


# --------------------------------------------------------------------------- reading


def current_values(vehicle: VehicleRow) -> dict[str, Any]:
    """Simulated values with the pinned ones on top (failures not applied)."""
    values = values_of(vehicle)
    for key, pinned in vehicle.overrides.items():
        values[key] = pinned["data"]
    return values


def failure_capabilities(failures: dict[str, dict[str, Any]], now_us: int) -> CapabilityData:
    out: CapabilityData = {}
    for key, failure in failures.items():
        capability, _, name = key.partition(".")
        prop = CATALOG.property(capability, name)
        wrapper = {
            "failure": {"reason": failure["reason"], "description": failure["description"]},
            "timestamp": to_iso(failure.get("timestamp_us", now_us)),
        }
        out.setdefault(capability, {})[name] = [wrapper] if prop.multiple else wrapper
    return out


def current_data(
    vehicle: VehicleRow, *, properties: frozenset[str] | None, now_us: int
) -> CapabilityData:
    """What the vehicle answers when asked now: its values in the pull layout, failing
    properties as failure wrappers; only `properties` ("cap.prop") when given."""
    values = values_of(vehicle)
    simulated_ts = to_iso(min(simulated_timestamp_us(vehicle), now_us))
    data: CapabilityData = {}
    wanted = (lambda key: True) if properties is None else properties.__contains__
    simulated = {
        k: v
        for k, v in values.items()
        if wanted(k) and k not in vehicle.overrides and k not in vehicle.failures
    }
    for capability, group in to_capabilities(simulated, simulated_ts).items():
        data.setdefault(capability, {}).update(group)
    for key, pinned in vehicle.overrides.items():
        if wanted(key) and key not in vehicle.failures:
            for capability, group in to_capabilities(
                {key: pinned["data"]}, to_iso(pinned["timestamp_us"])
            ).items():
                data.setdefault(capability, {}).update(group)
    failing = {k: v for k, v in vehicle.failures.items() if wanted(k)}
    for capability, group in failure_capabilities(failing, now_us).items():
        data.setdefault(capability, {}).update(group)
    return data


# --------------------------------------------------------------------------- commands

COMMAND_FAILURE_STATUSES = ("failed", "timed_out")


def command_key(key: str, *, source: str = "command") -> str:
    """A "capability.command" the sandbox car obeys; 422 naming it otherwise."""
    if key not in COMMAND_HANDLERS:
        raise ApiError(
            422,
            f"{key!r} is not a command the sandbox vehicle obeys ({', '.join(SANDBOX_COMMANDS)})",
            source=source,
        )
    return key


async def execute_command(
    db: Database, *, ingest: Ingest, request: CommandRequest, now_us: int
) -> CommandOutcome:
    """The emulated vehicle obeys (physics: autoport.sandbox.physics.apply_command) or
    fails the command, as a scripted failure says first. What changed is ingested like
    every value the car sends, so pull, history and streams show it."""
    key = f"{request.capability}.{request.command}"
    async with db.transaction() as conn:
        vehicle = await repository.get_for_update(conn, ENVIRONMENT, request.vin)
        if vehicle is None:
            return CommandOutcome(
                "failed", "oem_error", f"no sandbox vehicle with VIN {request.vin}"
            )
        scripted = vehicle.state.command_failures.get(key)
        if scripted is not None:
            return CommandOutcome(scripted["status"], scripted["reason"], scripted["description"])
        if key not in COMMAND_HANDLERS:
            return CommandOutcome(
                "failed", "oem_error", f"the sandbox vehicle does not support {key}"
            )
        try:
            state = apply_command(vehicle.state, key, dict(request.arguments))
        except CommandRefused as refused:
            return CommandOutcome("failed", "oem_error", str(refused))
        before = values_of(vehicle)
        updated = replace(
            changed_by_hand(vehicle, state, now_us), updated_at=_bump(vehicle, now_us)
        )
        await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
    await _ingest_values(db, ingest, updated, changed(before, values_of(updated)), now_us)
    return CommandOutcome("executed")


async def set_command_failure(
    conn: Connection,
    *,
    vin: str,
    key: str,
    status: str,
    reason: str,
    description: str | None,
    now_us: int,
) -> VehicleRow:
    """Script a command's outcome: every `key` command fails (or times out) this way
    until cleared."""
    command_key(key)
    if status not in COMMAND_FAILURE_STATUSES:
        raise ApiError(
            422, f"status: must be one of {', '.join(COMMAND_FAILURE_STATUSES)}", source="status"
        )
    if reason not in FAILURE_REASONS:
        raise ApiError(
            422, f"reason: {reason!r} is not one of {', '.join(FAILURE_REASONS)}", source="reason"
        )
    text = description or f"{key} {status} ({reason}), scripted by the sandbox emulator"
    return await _change_command_failures(
        conn,
        vin,
        now_us,
        lambda failures: {
            **failures,
            key: {"status": status, "reason": reason, "description": text},
        },
    )


async def clear_command_failure(conn: Connection, *, vin: str, key: str, now_us: int) -> VehicleRow:
    command_key(key)

    def drop(failures: dict[str, Any]) -> dict[str, Any]:
        if key not in failures:
            raise ApiError(404, f"{key} has no scripted failure on {vin}", source="command")
        return {k: v for k, v in failures.items() if k != key}

    return await _change_command_failures(conn, vin, now_us, drop)


async def _change_command_failures(
    conn: Connection, vin: str, now_us: int, change: Any
) -> VehicleRow:
    vehicle = await repository.get_for_update(conn, ENVIRONMENT, vin)
    if vehicle is None:
        raise _not_found(vin)
    state = physics_replace(
        vehicle.state, command_failures=change(dict(vehicle.state.command_failures))
    )
    updated = replace(vehicle, state=state, updated_at=_bump(vehicle, now_us))
    await repository.update(conn, updated, seen_updated_at=vehicle.updated_at)
    return updated
