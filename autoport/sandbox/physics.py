"""The sandbox vehicle's physics: pure functions of (state, dt, rng).

Nothing here does I/O or reads a clock, so a scenario replays identically from its seed
and every rule is testable on its own. A `VehicleState` holds the physical truth (where
the car is, how fast it goes, how full its battery is); `step` advances it; the catalog
values are derived from it in `autoport.sandbox.snapshot`, so values that belong together
(speed, location, odometer, consumption, trip figures) always move together.

Units inside the state: kilometres, km/h, seconds, kWh, litres, degrees Celsius.
"""

from __future__ import annotations

import enum
import math
import random
from dataclasses import asdict, dataclass, field
from typing import Any

EARTH_RADIUS_M = 6_371_008.8


class Powertrain(enum.StrEnum):
    electric = "electric"
    combustion = "combustion"
    plug_in_hybrid = "plug_in_hybrid"

    @property
    def has_battery(self) -> bool:
        return self is not Powertrain.combustion

    @property
    def has_tank(self) -> bool:
        return self is not Powertrain.electric


class Scenario(enum.StrEnum):
    parked = "parked"
    driving = "driving"
    charging = "charging"
    low_battery = "low_battery"
    doors = "doors"
    crash = "crash"
    maintenance_due = "maintenance_due"


class Mode(enum.StrEnum):
    """What the vehicle is doing right now; a scenario moves between modes."""

    parked = "parked"
    driving = "driving"
    stopped = "stopped"  # in traffic, engine on, speed 0
    charging = "charging"
    refueling = "refueling"
    crashed = "crashed"


def scenario_problem(scenario: Scenario, powertrain: Powertrain) -> str | None:
    """Why a scenario cannot run on a powertrain, in words for an error detail."""
    if scenario is Scenario.charging and not powertrain.has_battery:
        return "the charging scenario needs an electric or plug_in_hybrid powertrain"
    return None


# A loop through central Berlin (Tiergarten, Potsdamer Platz, Alexanderplatz), ~12 km.
# Short straight segments, so a position interpolated along one is on the road.
ROUTE: tuple[tuple[float, float], ...] = (
    (52.51628, 13.37770),  # Brandenburger Tor
    (52.51453, 13.35010),  # Siegessäule
    (52.50700, 13.33250),  # Zoologischer Garten
    (52.50190, 13.34260),  # Wittenbergplatz
    (52.50460, 13.36930),  # Lützowplatz
    (52.50940, 13.37600),  # Potsdamer Platz
    (52.50790, 13.39180),  # Leipziger Straße
    (52.51190, 13.40370),  # Spittelmarkt
    (52.52190, 13.41320),  # Alexanderplatz
    (52.51900, 13.40100),  # Lustgarten
    (52.51710, 13.38880),  # Unter den Linden
)
# Cruise speeds per segment (km/h): city streets and the Tiergarten's faster roads.
SEGMENT_SPEEDS: tuple[float, ...] = (60, 50, 40, 50, 50, 40, 50, 50, 40, 40, 50)


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))


def bearing_deg(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Initial bearing from point 1 to point 2, degrees clockwise from north, [0, 360)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    x = math.sin(dl) * math.cos(p2)
    y = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return (math.degrees(math.atan2(x, y)) + 360.0) % 360.0


def _segment(index: int) -> tuple[tuple[float, float], tuple[float, float], float]:
    a = ROUTE[index % len(ROUTE)]
    b = ROUTE[(index + 1) % len(ROUTE)]
    return a, b, haversine_m(a[0], a[1], b[0], b[1])


@dataclass(frozen=True)
class VehicleState:
    """Everything the simulator knows about one vehicle. JSON-serialisable."""

    powertrain: str
    scenario: str
    mode: str
    sim_seconds: float = 0.0  # simulated time since the scenario started
    # Position on the route.
    segment: int = 0
    segment_progress_m: float = 0.0
    latitude: float = ROUTE[0][0]
    longitude: float = ROUTE[0][1]
    heading_deg: float = 0.0
    altitude_m: float = 34.0
    speed_kmh: float = 0.0
    target_speed_kmh: float = 0.0
    stop_remaining_s: float = 0.0
    odometer_km: float = 12_000.0
    # Energy.
    battery_capacity_kwh: float = 0.0
    soc: float = 0.0  # high-voltage battery state of charge, 0..1
    tank_l: float = 0.0
    fuel_l: float = 0.0
    charge_limit: float = 0.9
    charge_power_max_kw: float = 11.0
    charge_power_kw: float = 0.0
    charging_status: str = "not_charging"
    plugged_in: bool = False
    charging_end_reason: str | None = None
    current_consumption: float = 0.0  # kWh/100 km (electric) or L/100 km (fuel)
    twelve_volt_v: float = 12.6
    # Trips: the running one and the last finished one.
    trip_active: bool = False
    trip_distance_km: float = 0.0
    trip_duration_s: float = 0.0
    trip_energy_kwh: float = 0.0
    trip_fuel_l: float = 0.0
    trip_electric_km: float = 0.0
    trip_start_soc: float = 0.0
    last_trip_distance_km: float | None = None
    last_trip_duration_s: float | None = None
    last_trip_energy_kwh: float | None = None
    last_trip_fuel_l: float | None = None
    last_trip_electric_km: float | None = None
    last_trip_end_s: float | None = None
    last_trip_odometer_km: float | None = None
    last_trip_soc: float | None = None
    # Body: four doors (front_left, front_right, rear_right, rear_left), windows likewise.
    door_locked: tuple[bool, bool, bool, bool] = (True, True, True, True)
    door_open: tuple[bool, bool, bool, bool] = (False, False, False, False)
    window_open: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    trunk_open: bool = False
    trunk_locked: bool = True
    body_phase: int = 0
    body_phase_s: float = 0.0
    # Climate.
    outside_c: float = 12.0
    inside_c: float = 15.0
    # Climate control switched on by a command: the cabin heads for the set temperature.
    hvac_active: bool = False
    hvac_target_c: float = 21.0
    # Commands the car obeyed: horn and lights are recorded (nothing else shows them),
    # and every executed command is counted (at-most-once is visible in tests).
    horn_honks: int = 0
    horn_seconds: float = 0.0
    light_flashes: int = 0
    commands_executed: int = 0
    # Scripted command failures, "capability.command" -> {status, reason, description}.
    command_failures: dict[str, Any] = field(default_factory=dict)
    # Crash.
    crash_at_s: float | None = None
    crashed_s: float | None = None
    crash_severity: int = 0
    # Maintenance.
    service_distance_km: float = 15_000.0
    service_time_s: float = 200 * 86_400.0
    tire_bar: tuple[float, float, float, float] = (2.5, 2.5, 2.4, 2.4)
    extra: dict[str, Any] = field(default_factory=dict)
    # Wall-clock instants (µs) of the last trip's end and of the crash, pinned by the
    # simulator service when they happen (autoport.sandbox.service.pin_event_times):
    # mapping simulated seconds later would move them whenever the time scale changes
    # or time is stepped. The physics never reads them.
    last_trip_end_us: int | None = None
    crashed_us: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> VehicleState:
        values = dict(raw)
        for name in ("door_locked", "door_open", "window_open", "tire_bar"):
            values[name] = tuple(values[name])
        return cls(**values)

    @property
    def moving(self) -> bool:
        return self.mode in (Mode.driving, Mode.stopped)

    @property
    def range_km(self) -> float:
        """Remaining range from the energy on board at the average consumption."""
        electric = self.soc * self.battery_capacity_kwh / ELECTRIC_AVERAGE * 100.0
        fuel = self.fuel_l / FUEL_AVERAGE * 100.0
        if self.powertrain == Powertrain.electric:
            return electric
        if self.powertrain == Powertrain.combustion:
            return fuel
        return electric + fuel

    @property
    def electric_range_km(self) -> float:
        return self.soc * self.battery_capacity_kwh / ELECTRIC_AVERAGE * 100.0


_new_state = object.__new__
_set = object.__setattr__


def replace(state: VehicleState, **changes: Any) -> VehicleState:
    """dataclasses.replace without its per-call introspection: a step makes several
    copies of a 60-field state, and the standard one was 90 % of the step's time. The
    state has no __post_init__, so copying its attribute dict is a faithful copy."""
    new = _new_state(VehicleState)
    _set(new, "__dict__", {**state.__dict__, **changes})
    return new


ELECTRIC_AVERAGE = 17.0  # kWh/100 km, used for range estimates
FUEL_AVERAGE = 6.5  # L/100 km
CHARGE_EFFICIENCY = 0.92
PHEV_ELECTRIC_FLOOR = 0.15  # a plug-in hybrid switches to fuel below this charge


def step_rng(seed: int, step: int) -> random.Random:
    """The random source of one step: a function of (seed, step) only, so any step can be
    recomputed without replaying the generator from the start."""
    return random.Random(f"autoport-sandbox/{seed}/{step}")


def initial_state(scenario: Scenario, powertrain: Powertrain, seed: int) -> VehicleState:
    """The state a scenario starts from; deterministic in (scenario, powertrain, seed)."""
    rng = random.Random(f"autoport-sandbox/{seed}/initial")
    capacity = {"electric": 77.0, "plug_in_hybrid": 14.4, "combustion": 0.0}[powertrain]
    tank = {"electric": 0.0, "plug_in_hybrid": 40.0, "combustion": 55.0}[powertrain]
    state = VehicleState(
        powertrain=powertrain.value,
        scenario=scenario.value,
        mode=Mode.parked.value,
        segment=rng.randrange(len(ROUTE)),
        odometer_km=round(rng.uniform(4_000, 60_000), 1),
        battery_capacity_kwh=capacity,
        soc=round(rng.uniform(0.55, 0.85), 3) if capacity else 0.0,
        tank_l=tank,
        fuel_l=round(tank * rng.uniform(0.5, 0.9), 1),
        outside_c=round(rng.uniform(6, 20), 1),
        service_distance_km=round(rng.uniform(8_000, 20_000)),
        service_time_s=rng.uniform(90, 300) * 86_400,
    )
    start = ROUTE[state.segment]
    state = replace(state, latitude=start[0], longitude=start[1], inside_c=state.outside_c + 2)
    a, b, _ = _segment(state.segment)
    state = replace(state, heading_deg=round(bearing_deg(a[0], a[1], b[0], b[1]), 2))
    if scenario is Scenario.driving or scenario is Scenario.maintenance_due:
        state = _start_trip(replace(state, mode=Mode.driving.value, door_locked=(True,) * 4))
    if scenario is Scenario.maintenance_due:
        # Due within the first minutes of driving: the statuses visibly turn.
        state = replace(state, service_distance_km=3.0, service_time_s=2 * 86_400.0)
    if scenario is Scenario.crash:
        state = _start_trip(
            replace(state, mode=Mode.driving.value, crash_at_s=round(rng.uniform(45, 90), 1))
        )
    if scenario is Scenario.charging:
        state = replace(
            state,
            mode=Mode.charging.value,
            soc=round(rng.uniform(0.15, 0.35), 3) if capacity else 0.0,
            plugged_in=True,
            charging_status="charging",
            charge_power_max_kw=11.0 if powertrain is Powertrain.electric else 3.7,
        )
    if scenario is Scenario.low_battery:
        state = replace(
            state,
            soc=0.12 if capacity else 0.0,
            fuel_l=round(tank * 0.06, 1),
            twelve_volt_v=12.2,
        )
    if scenario is Scenario.doors:
        state = replace(state, door_locked=(False,) * 4, trunk_locked=False)
    return state


def _start_trip(state: VehicleState) -> VehicleState:
    return replace(
        state,
        trip_active=True,
        trip_distance_km=0.0,
        trip_duration_s=0.0,
        trip_energy_kwh=0.0,
        trip_fuel_l=0.0,
        trip_electric_km=0.0,
        trip_start_soc=state.soc,
        door_locked=(True,) * 4,
        door_open=(False,) * 4,
        trunk_open=False,
        trunk_locked=True,
    )


def _end_trip(state: VehicleState) -> VehicleState:
    if not state.trip_active:
        return state
    return replace(
        state,
        trip_active=False,
        speed_kmh=0.0,
        last_trip_distance_km=state.trip_distance_km,
        last_trip_duration_s=state.trip_duration_s,
        last_trip_energy_kwh=state.trip_energy_kwh,
        last_trip_fuel_l=state.trip_fuel_l,
        last_trip_electric_km=state.trip_electric_km,
        last_trip_end_s=state.sim_seconds,
        last_trip_odometer_km=state.odometer_km,
        last_trip_soc=state.soc,
    )


# --------------------------------------------------------------------------- step


def step(state: VehicleState, dt: float, rng: random.Random) -> VehicleState:
    """Advance the vehicle by `dt` simulated seconds."""
    if dt <= 0:
        return state
    scenario = Scenario(state.scenario)
    state = replace(state, sim_seconds=state.sim_seconds + dt)
    state = _climate(state, dt)
    mode = Mode(state.mode)
    if mode in (Mode.driving, Mode.stopped):
        crash_at = state.crash_at_s
        if scenario is Scenario.crash and crash_at is not None and state.sim_seconds >= crash_at:
            return _crash(state, rng)
        state = _drive(state, dt, rng)
        state = _needs_energy(state)
    elif mode is Mode.charging:
        state = _charge(state, dt)
        if scenario is Scenario.driving and state.charging_status == "charging_complete":
            # The driving scenario lives forever: charged, it unplugs and drives on.
            state = _start_trip(
                replace(
                    state,
                    mode=Mode.driving.value,
                    plugged_in=False,
                    charging_status="not_charging",
                    charge_power_kw=0.0,
                )
            )
    elif mode is Mode.refueling:
        state = _refuel(state, dt)
    elif mode is Mode.parked:
        state = _parked(state, dt, scenario)
    if scenario is Scenario.doors:
        state = _body_cycle(state, dt, rng)
    return state


def _climate(state: VehicleState, dt: float) -> VehicleState:
    # A day's swing of ±4 °C around the starting temperature; the cabin follows with a
    # time constant of half an hour, warmer while driving (heating / occupants).
    base = state.extra.get("base_outside_c", state.outside_c)
    hour = (state.sim_seconds / 3600.0) % 24.0
    outside = base + 4.0 * math.sin((hour - 9.0) / 24.0 * 2 * math.pi)
    target = 21.0 if state.moving else outside + 2.0
    constant = 1800.0
    if state.hvac_active:
        # The climate control works much faster than the cabin drifting on its own.
        target, constant = state.hvac_target_c, HVAC_TIME_CONSTANT_S
    inside = state.inside_c + (target - state.inside_c) * min(1.0, dt / constant)
    extra = (
        state.extra if "base_outside_c" in state.extra else {**state.extra, "base_outside_c": base}
    )
    return replace(state, outside_c=outside, inside_c=inside, extra=extra)


def electric_consumption(speed_kmh: float, outside_c: float) -> float:
    """kWh/100 km: rolling resistance, aerodynamic drag and cold-weather heating."""
    cold = max(0.0, 15.0 - outside_c) * 0.15
    return 12.0 + 0.0011 * speed_kmh**2 + cold


def fuel_consumption(speed_kmh: float) -> float:
    """L/100 km while moving."""
    return 4.8 + 0.00045 * speed_kmh**2 + 60.0 / max(speed_kmh, 10.0)


IDLE_FUEL_L_PER_H = 0.7
IDLE_ELECTRIC_KW = 0.6  # auxiliaries while the car is on but standing


def _drive(state: VehicleState, dt: float, rng: random.Random) -> VehicleState:
    a, b, seg_len = _segment(state.segment)
    if state.mode == Mode.stopped:
        remaining = state.stop_remaining_s - dt
        if remaining > 0:
            return _consume(replace(state, stop_remaining_s=remaining), 0.0, 0.0, dt)
        state = replace(state, mode=Mode.driving.value, stop_remaining_s=0.0)
    cruise = SEGMENT_SPEEDS[state.segment % len(SEGMENT_SPEEDS)]
    target = cruise + rng.uniform(-4.0, 4.0)
    left_m = seg_len - state.segment_progress_m
    # Slow down towards the junction at the end of the segment (brake at ~1.5 m/s²).
    v_ms = state.speed_kmh / 3.6
    braking_distance = v_ms * v_ms / (2 * 1.5)
    if left_m < braking_distance + 20:
        target = min(target, 20.0)
    accel = 2.0 if target > state.speed_kmh else -2.5  # m/s²
    new_speed = state.speed_kmh + accel * dt * 3.6
    new_speed = min(new_speed, target) if accel > 0 else max(new_speed, target)
    new_speed = max(0.0, new_speed)
    distance_m = (state.speed_kmh + new_speed) / 2 / 3.6 * dt
    segment, progress = state.segment, state.segment_progress_m + distance_m
    stop_s = 0.0
    while progress >= seg_len:
        progress -= seg_len
        segment = (segment + 1) % len(ROUTE)
        a, b, seg_len = _segment(segment)
        if rng.random() < 0.35:
            stop_s = rng.uniform(15, 60)  # a red light at the junction
    fraction = progress / seg_len if seg_len else 0.0
    lat = a[0] + (b[0] - a[0]) * fraction
    lon = a[1] + (b[1] - a[1]) * fraction
    heading = bearing_deg(a[0], a[1], b[0], b[1])
    altitude = 34.0 + 6.0 * math.sin(segment + fraction)
    state = replace(
        state,
        segment=segment,
        segment_progress_m=progress,
        latitude=lat,
        longitude=lon,
        heading_deg=heading,
        altitude_m=altitude,
        speed_kmh=new_speed,
        target_speed_kmh=target,
        odometer_km=state.odometer_km + distance_m / 1000.0,
        service_distance_km=state.service_distance_km - distance_m / 1000.0,
    )
    if stop_s:
        state = replace(state, mode=Mode.stopped.value, speed_kmh=0.0, stop_remaining_s=stop_s)
    return _consume(state, distance_m / 1000.0, (state.speed_kmh + new_speed) / 2, dt)


def _consume(state: VehicleState, km: float, speed: float, dt: float) -> VehicleState:
    """Energy drawn for `km` driven at `speed` over `dt` seconds, and the trip figures."""
    powertrain = Powertrain(state.powertrain)
    electric = powertrain is Powertrain.electric or (
        powertrain is Powertrain.plug_in_hybrid and state.soc > PHEV_ELECTRIC_FLOOR
    )
    energy_kwh = fuel_l = 0.0
    if electric:
        rate = electric_consumption(speed, state.outside_c)
        energy_kwh = rate * km / 100.0 + IDLE_ELECTRIC_KW * dt / 3600.0
        soc = max(0.0, state.soc - energy_kwh / state.battery_capacity_kwh)
        state = replace(state, soc=soc, current_consumption=rate if km else 0.0)
    else:
        rate = fuel_consumption(speed)
        fuel_l = rate * km / 100.0 + IDLE_FUEL_L_PER_H * dt / 3600.0
        state = replace(
            state,
            fuel_l=max(0.0, state.fuel_l - fuel_l),
            current_consumption=rate if km else 0.0,
        )
    return replace(
        state,
        trip_distance_km=state.trip_distance_km + km,
        trip_duration_s=state.trip_duration_s + dt,
        trip_energy_kwh=state.trip_energy_kwh + energy_kwh,
        trip_fuel_l=state.trip_fuel_l + fuel_l,
        trip_electric_km=state.trip_electric_km + (km if electric else 0.0),
        service_time_s=state.service_time_s - dt,
    )


def _needs_energy(state: VehicleState) -> VehicleState:
    """A driving car low on energy stops to charge (or refuel) instead of running dry."""
    powertrain = Powertrain(state.powertrain)
    if powertrain is Powertrain.electric and state.soc < 0.1:
        return replace(
            _end_trip(state),
            mode=Mode.charging.value,
            plugged_in=True,
            charging_status="charging",
            charge_limit=0.8,
            charge_power_max_kw=50.0,  # a DC fast charger on the way
            charging_end_reason=None,
        )
    if powertrain.has_tank and state.fuel_l < 0.08 * state.tank_l:
        return replace(_end_trip(state), mode=Mode.refueling.value)
    return state


def charge_power_kw(soc: float, max_kw: float) -> float:
    """The charging curve: full power up to 80 %, then tapering to a trickle."""
    if soc < 0.8:
        return max_kw
    return max(1.5, max_kw * (1.0 - (soc - 0.8) / 0.22))


def time_to_charge_s(soc: float, limit: float, capacity_kwh: float, max_kw: float) -> float:
    """Seconds until `limit` along the charging curve (integrated in 1 % slices)."""
    seconds = 0.0
    level = soc
    while level < limit - 1e-9:
        slice_ = min(0.01, limit - level)
        power = charge_power_kw(level, max_kw) * CHARGE_EFFICIENCY
        seconds += slice_ * capacity_kwh / power * 3600.0
        level += slice_
    return seconds


def _charge(state: VehicleState, dt: float) -> VehicleState:
    if not state.plugged_in or state.battery_capacity_kwh <= 0:
        return replace(state, charge_power_kw=0.0)
    if state.soc >= state.charge_limit:
        return replace(
            state,
            charge_power_kw=0.0,
            charging_status="charging_complete",
            charging_end_reason="goal_reached",
        )
    power = charge_power_kw(state.soc, state.charge_power_max_kw)
    gained = power * CHARGE_EFFICIENCY * dt / 3600.0 / state.battery_capacity_kwh
    soc = min(state.charge_limit, state.soc + gained)
    done = soc >= state.charge_limit
    return replace(
        state,
        soc=soc,
        charge_power_kw=0.0 if done else power,
        charging_status="charging_complete" if done else "charging",
        charging_end_reason="goal_reached" if done else None,
    )


def _refuel(state: VehicleState, dt: float) -> VehicleState:
    fuel = min(state.tank_l, state.fuel_l + 0.5 * dt)  # a pump gives ~30 L/min
    if fuel >= state.tank_l:
        return _start_trip(replace(state, fuel_l=fuel, mode=Mode.driving.value))
    return replace(state, fuel_l=fuel)


def _parked(state: VehicleState, dt: float, scenario: Scenario) -> VehicleState:
    if scenario is Scenario.low_battery:
        # A module that keeps the car awake drains both batteries visibly.
        soc = max(0.0, state.soc - 0.01 * dt / 600.0)
        volts = max(10.8, state.twelve_volt_v - 0.1 * dt / 600.0)
        return replace(state, soc=soc, twelve_volt_v=volts)
    # Normal self-discharge: negligible but real.
    soc = max(0.0, state.soc - 0.0002 * dt / 3600.0)
    return replace(state, soc=soc, service_time_s=state.service_time_s - dt)


# The doors scenario: someone arrives, opens a door and a window, loads the trunk,
# closes everything and locks; then it starts again.
BODY_PHASE_SECONDS = 20.0
BODY_PHASES = 8


def _body_cycle(state: VehicleState, dt: float, rng: random.Random) -> VehicleState:
    elapsed = state.body_phase_s + dt
    phase = state.body_phase
    while elapsed >= BODY_PHASE_SECONDS:
        elapsed -= BODY_PHASE_SECONDS
        phase = (phase + 1) % BODY_PHASES
        state = _enter_body_phase(state, phase, rng)
    return replace(state, body_phase=phase, body_phase_s=elapsed)


def _enter_body_phase(state: VehicleState, phase: int, rng: random.Random) -> VehicleState:
    door = state.extra.get("door", 0)
    if phase == 0:  # unlock
        return replace(state, door_locked=(False,) * 4, trunk_locked=False)
    if phase == 1:  # a door opens
        door = rng.randrange(4)
        opened = tuple(i == door for i in range(4))
        return replace(state, door_open=opened, extra={**state.extra, "door": door})
    if phase == 2:  # its window goes down part-way
        windows = list(state.window_open)
        windows[door] = round(rng.uniform(0.2, 1.0), 2)
        return replace(state, window_open=tuple(windows))
    if phase == 3:  # the door closes
        return replace(state, door_open=(False,) * 4)
    if phase == 4:  # the trunk opens
        return replace(state, trunk_open=True)
    if phase == 5:  # the trunk closes
        return replace(state, trunk_open=False)
    if phase == 6:  # the window goes up
        return replace(state, window_open=(0.0,) * 4)
    return replace(state, door_locked=(True,) * 4, trunk_locked=True)  # lock


def _crash(state: VehicleState, rng: random.Random) -> VehicleState:
    state = _end_trip(replace(state, speed_kmh=0.0))
    return replace(
        state,
        mode=Mode.crashed.value,
        crashed_s=state.sim_seconds,
        crash_severity=rng.randrange(120, 220),
        # After an impact the car unlocks so rescuers can get in.
        door_locked=(False,) * 4,
        current_consumption=0.0,
    )


# ------------------------------------------------------------------------- commands

HVAC_TIME_CONSTANT_S = 300.0


def _to_celsius(value: float, unit: str) -> float:
    if unit == "fahrenheit":
        return (value - 32.0) * 5.0 / 9.0
    if unit == "kelvin":
        return value - 273.15
    return value


_START = ("charging", "slow_charging", "fast_charging")
_STOP = ("not_charging", "charging_paused")
_DURATION_TO_S = {
    "seconds": 1.0,
    "milliseconds": 0.001,
    "minutes": 60.0,
    "hours": 3600.0,
}


class CommandRefused(Exception):
    """The vehicle cannot do what it was told (not plugged in, a door open ...)."""


def _lock_doors(state: VehicleState, args: dict[str, Any]) -> VehicleState:
    locked = args["locks_state"] == "locked"
    if locked and any(state.door_open):
        raise CommandRefused("a door is open; the vehicle cannot lock")
    return replace(state, door_locked=(locked,) * 4)


def _start_stop_charging(state: VehicleState, args: dict[str, Any]) -> VehicleState:
    status = args["status"]
    if status in _START:
        if not Powertrain(state.powertrain).has_battery:
            raise CommandRefused("the vehicle has no battery to charge")
        if not state.plugged_in:
            raise CommandRefused("the vehicle is not plugged in; it cannot start charging")
        if state.soc >= state.charge_limit:
            raise CommandRefused(
                f"the battery is at {state.soc:.0%}, already at its charge limit of "
                f"{state.charge_limit:.0%}"
            )
        return replace(
            state, mode=Mode.charging.value, charging_status="charging", charging_end_reason=None
        )
    if status in _STOP:
        if state.mode != Mode.charging:
            return replace(state, charging_status="not_charging", charge_power_kw=0.0)
        return replace(
            state,
            mode=Mode.parked.value,
            charging_status="not_charging",
            charge_power_kw=0.0,
            charging_end_reason=None,
        )
    raise CommandRefused(
        f"status {status!r}: the vehicle starts (charging) or stops (not_charging) charging"
    )


def _set_charge_limit(state: VehicleState, args: dict[str, Any]) -> VehicleState:
    if not Powertrain(state.powertrain).has_battery:
        raise CommandRefused("the vehicle has no battery")
    limit = float(args["charge_limit"])
    if limit < 0.5:
        raise CommandRefused("the vehicle accepts charge limits from 50 % to 100 %")
    state = replace(state, charge_limit=limit)
    if state.mode == Mode.charging and state.soc >= limit:
        # Already above the new limit: charging stops now.
        state = replace(
            state,
            charge_power_kw=0.0,
            charging_status="charging_complete",
            charging_end_reason="goal_reached",
        )
    return state


def _hvac(state: VehicleState, args: dict[str, Any]) -> VehicleState:
    return replace(state, hvac_active=args["hvac_state"] == "active")


def _temperatures(state: VehicleState, args: dict[str, Any]) -> VehicleState:
    setting = args.get("driver_temperature_setting") or args.get("passenger_temperature_setting")
    if setting is None:
        setting = args["rear_temperature_setting"]
    celsius = _to_celsius(float(setting["value"]), setting["unit"])
    if not 15.0 <= celsius <= 30.0:
        raise CommandRefused("the climate control accepts 15 °C to 30 °C")
    return replace(state, hvac_target_c=celsius)


def _honk_flash(state: VehicleState, args: dict[str, Any]) -> VehicleState:
    honk = args.get("honk_time")
    seconds = 0.0
    if honk is not None:
        seconds = float(honk["value"]) * _DURATION_TO_S.get(honk["unit"], 1.0)
        if seconds > 10:
            raise CommandRefused("the horn sounds for at most 10 seconds")
    flashes = int(args.get("flash_times") or 0)
    return replace(
        state,
        horn_honks=state.horn_honks + (1 if seconds > 0 else 0),
        horn_seconds=state.horn_seconds + seconds,
        light_flashes=state.light_flashes + flashes,
    )


def _trunk(state: VehicleState, args: dict[str, Any]) -> VehicleState:
    locked = state.trunk_locked if "lock" not in args else args["lock"] == "locked"
    opened = state.trunk_open if "position" not in args else args["position"] == "open"
    if opened and locked:
        raise CommandRefused("the boot cannot be open and locked")
    if opened and state.trunk_locked and "lock" not in args:
        raise CommandRefused("the boot is locked; unlock it to open it")
    return replace(state, trunk_locked=locked, trunk_open=opened)


COMMAND_HANDLERS = {
    "doors.lock_unlock_doors": _lock_doors,
    "charging.start_stop_charging": _start_stop_charging,
    "charging.set_charge_limit": _set_charge_limit,
    "climate.start_stop_hvac": _hvac,
    "climate.set_temperature_settings": _temperatures,
    "honk_horn_flash_lights.honk_flash": _honk_flash,
    "trunk.control_trunk": _trunk,
}
# What the sandbox car obeys; the demo application registers exactly these.
SANDBOX_COMMANDS: tuple[str, ...] = tuple(COMMAND_HANDLERS)


def apply_command(state: VehicleState, key: str, arguments: dict[str, Any]) -> VehicleState:
    """The vehicle after obeying `key` ("capability.command") with checked `arguments`;
    CommandRefused when it cannot (physics), KeyError when it has no such function."""
    if state.mode == Mode.crashed and key != "honk_horn_flash_lights.honk_flash":
        raise CommandRefused("the vehicle was in a crash and takes no remote commands")
    moved = COMMAND_HANDLERS[key](state, arguments)
    return replace(moved, commands_executed=moved.commands_executed + 1)


def advance(
    state: VehicleState, *, seed: int, first_step: int, steps: int, step_seconds: float
) -> VehicleState:
    """Run `steps` fixed steps starting at step number `first_step` (1-based)."""
    for number in range(first_step, first_step + steps):
        state = step(state, step_seconds, step_rng(seed, number))
    return state
