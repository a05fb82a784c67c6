"""From physical state to catalog values, and the equipment profiles.

Every property the simulator can produce has one producer here: a function of the
`VehicleState` returning the property's `data` (a list of data values for array
properties), or None when the vehicle cannot say (no trip finished yet, no crash). A
producer is tied to the powertrains that have the part it describes, so an electric car
never reports a fuel level.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from autoport.catalog import CATALOG
from autoport.kit.clock import MICROS, to_iso
from autoport.sandbox.physics import Mode, Powertrain, VehicleState

CapabilityData = dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Timebase:
    """Maps simulated seconds since the scenario started to wall-clock instants."""

    start_us: int
    time_scale: float = 1.0

    def at_us(self, sim_seconds: float) -> int:
        return self.start_us + int(sim_seconds / self.time_scale * MICROS)

    def at(self, sim_seconds: float, pinned_us: int | None = None) -> str:
        """The instant of a simulated moment: as pinned when it happened, else mapped."""
        return to_iso(pinned_us if pinned_us is not None else self.at_us(sim_seconds))


Producer = Callable[[VehicleState, Timebase], Any]

ALL = frozenset(Powertrain)
BATTERY = frozenset({Powertrain.electric, Powertrain.plug_in_hybrid})
TANK = frozenset({Powertrain.combustion, Powertrain.plug_in_hybrid})
DOORS = ("front_left", "front_right", "rear_right", "rear_left")


@dataclass(frozen=True, slots=True)
class Producible:
    key: str  # "capability.property"
    powertrains: frozenset[Powertrain]
    produce: Producer


def _q(unit: str, value: float, digits: int = 2) -> dict[str, Any]:
    return {"unit": unit, "value": round(value, digits)}


def _lock(locked: bool) -> str:
    return "locked" if locked else "unlocked"


def _tire_locations(s: VehicleState) -> list[tuple[str, float]]:
    # Tyre pressure follows temperature (Gay-Lussac, ~0.01 bar per °C around 20 °C).
    drift = (s.outside_c - 20.0) * 0.01 + (0.05 if s.moving else 0.0)
    return [(loc, bar + drift) for loc, bar in zip(DOORS, s.tire_bar, strict=True)]


def _service_status(s: VehicleState) -> str:
    if s.service_distance_km <= 0 or s.service_time_s <= 0:
        return "critical"
    if s.service_distance_km < 1_000 or s.service_time_s < 30 * 86_400:
        return "warning"
    return "ok"


def _starter_battery_state(s: VehicleState) -> str:
    if s.twelve_volt_v >= 12.3:
        return "green"
    if s.twelve_volt_v >= 11.9:
        return "yellow"
    return "red"


def _low_voltage_level(s: VehicleState) -> str:
    if s.twelve_volt_v >= 12.0:
        return "ok"
    if s.twelve_volt_v >= 11.6:
        return "deactivation_level_1"
    if s.twelve_volt_v >= 11.2:
        return "deactivation_level_2"
    return "deactivation_level_3"


def _charging_status(s: VehicleState) -> str:
    if s.mode == Mode.charging:
        return s.charging_status
    return "not_charging"


def _time_to_complete_min(s: VehicleState) -> float:
    from autoport.sandbox.physics import time_to_charge_s

    if s.mode != Mode.charging or s.charging_status != "charging":
        return 0.0
    seconds = time_to_charge_s(s.soc, s.charge_limit, s.battery_capacity_kwh, s.charge_power_max_kw)
    return seconds / 60.0


def _trip_avg_speed(distance_km: float | None, duration_s: float | None) -> float | None:
    if distance_km is None or not duration_s:
        return None
    return distance_km / (duration_s / 3600.0)


def _electric_rate(energy: float | None, km: float | None) -> float | None:
    if energy is None or not km:
        return None
    return energy / km * 100.0


def _crash_value(value: Any) -> Producer:
    def produce(s: VehicleState, timebase: Timebase) -> Any:
        return value if s.crashed_s is not None else None

    return produce


# What each property is made of, grouped by capability: the key, the
# powertrains that have it, and how it is read off the simulated state (and the
# timebase, for instants). One row per property; a new property is one more row.
PRODUCERS: tuple[Producible, ...] = (
    # vehicle_location
    Producible(
        "vehicle_location.coordinates",
        ALL,
        lambda s, _: {"latitude": round(s.latitude, 6), "longitude": round(s.longitude, 6)},
    ),
    Producible(
        "vehicle_location.fuzzy_coordinates",
        ALL,
        lambda s, _: {"latitude": round(s.latitude, 2), "longitude": round(s.longitude, 2)},
    ),
    Producible("vehicle_location.heading", ALL, lambda s, _: _q("degrees", s.heading_deg, 1)),
    Producible("vehicle_location.altitude", ALL, lambda s, _: _q("meters", s.altitude_m, 1)),
    Producible("vehicle_location.precision", ALL, lambda s, _: _q("meters", 4.0, 1)),
    Producible("vehicle_location.gps_source", ALL, lambda s, _: "real"),
    Producible("vehicle_location.gps_signal_strength", ALL, lambda s, _: 0.9),
    # diagnostics
    Producible("diagnostics.odometer", ALL, lambda s, _: _q("kilometers", s.odometer_km, 3)),
    Producible("diagnostics.speed", ALL, lambda s, _: _q("kilometers_per_hour", s.speed_kmh, 1)),
    Producible(
        "diagnostics.wheel_based_speed",
        ALL,
        lambda s, _: _q("kilometers_per_hour", s.speed_kmh * 1.02, 1),
    ),
    Producible("diagnostics.estimated_range", ALL, lambda s, _: _q("kilometers", s.range_km, 1)),
    Producible("diagnostics.battery_voltage", ALL, lambda s, _: _q("volts", s.twelve_volt_v, 2)),
    Producible(
        "diagnostics.low_voltage_battery_charge_level", ALL, lambda s, _: _low_voltage_level(s)
    ),
    Producible("diagnostics.battery_level", BATTERY, lambda s, _: round(s.soc, 4)),
    Producible(
        "diagnostics.fuel_level",
        TANK,
        lambda s, _: round(s.fuel_l / s.tank_l, 4) if s.tank_l else None,
    ),
    Producible("diagnostics.fuel_volume", TANK, lambda s, _: _q("liters", s.fuel_l, 2)),
    Producible(
        "diagnostics.engine_rpm",
        TANK,
        lambda s, _: _q(
            "revolutions_per_minute",
            (800.0 + s.speed_kmh * 28.0)
            if s.moving and (s.powertrain == Powertrain.combustion or s.soc <= 0.15)
            else 0.0,
            0,
        ),
    ),
    Producible(
        "diagnostics.engine_coolant_temperature",
        TANK,
        lambda s, _: _q("celsius", 90.0 if s.moving else s.outside_c, 1),
    ),
    Producible("diagnostics.washer_fluid_level", ALL, lambda s, _: "filled"),
    Producible(
        "diagnostics.tire_pressures",
        ALL,
        lambda s, _: [
            {"location": loc, "pressure": _q("bars", bar, 2)} for loc, bar in _tire_locations(s)
        ],
    ),
    Producible(
        "diagnostics.tire_pressure_statuses",
        ALL,
        lambda s, _: [
            {"location": loc, "status": "normal" if bar > 2.0 else "low"}
            for loc, bar in _tire_locations(s)
        ],
    ),
    # charging
    Producible("charging.battery_level", BATTERY, lambda s, _: round(s.soc, 4)),
    Producible(
        "charging.estimated_range",
        BATTERY,
        lambda s, _: _q("kilometers", s.electric_range_km, 1),
    ),
    Producible(
        "charging.max_range",
        BATTERY,
        lambda s, _: _q("kilometers", s.battery_capacity_kwh / 17.0 * 100.0, 0),
    ),
    Producible(
        "charging.battery_capacity",
        BATTERY,
        lambda s, _: _q("kilowatt_hours", s.battery_capacity_kwh),
    ),
    Producible(
        "charging.battery_energy",
        BATTERY,
        lambda s, _: _q("kilowatt_hours", s.soc * s.battery_capacity_kwh, 2),
    ),
    Producible("charging.status", BATTERY, lambda s, _: _charging_status(s)),
    Producible(
        "charging.charging_rate",
        BATTERY,
        lambda s, _: _q("kilowatts", s.charge_power_kw if s.mode == Mode.charging else 0.0, 2),
    ),
    Producible(
        "charging.charger_power",
        BATTERY,
        lambda s, _: _q("kilowatts", s.charge_power_max_kw if s.plugged_in else 0.0, 1),
    ),
    Producible(
        "charging.time_to_complete_charge",
        BATTERY,
        lambda s, _: _q("minutes", _time_to_complete_min(s), 1),
    ),
    Producible(
        "charging.plugged_in",
        BATTERY,
        lambda s, _: "plugged_in" if s.plugged_in else "disconnected",
    ),
    Producible(
        "charging.charge_port_state",
        BATTERY,
        lambda s, _: "open" if s.plugged_in else "closed",
    ),
    Producible(
        "charging.plug_lock_status",
        BATTERY,
        lambda s, _: "locked" if s.plugged_in else "unlocked",
    ),
    Producible(
        "charging.current_type",
        BATTERY,
        lambda s, _: "direct_current" if s.charge_power_max_kw > 22 else "alternating_current",
    ),
    Producible("charging.charge_mode", BATTERY, lambda s, _: "immediate"),
    Producible("charging.charge_limit", BATTERY, lambda s, _: round(s.charge_limit, 2)),
    Producible("charging.charging_end_reason", BATTERY, lambda s, _: s.charging_end_reason),
    Producible(
        "charging.battery_temperature",
        BATTERY,
        lambda s, _: _q("celsius", s.outside_c + (12.0 if s.charge_power_kw > 0 else 4.0), 1),
    ),
    Producible("charging.starter_battery_state", ALL, lambda s, _: _starter_battery_state(s)),
    # usage: the running trip ("since start") and the last finished one.
    Producible(
        "usage.distance_over_time",
        ALL,
        lambda s, _: (
            {
                "distance": _q("kilometers", s.trip_distance_km, 3),
                "time": _q("seconds", s.trip_duration_s, 0),
            }
            if s.trip_active
            else None
        ),
    ),
    Producible(
        "usage.trip_meters",
        ALL,
        lambda s, _: [{"id": 1, "distance": _q("kilometers", s.trip_distance_km, 3)}],
    ),
    Producible(
        "usage.electric_consumption_rate_since_start",
        BATTERY,
        lambda s, _: (
            None
            if (rate := _electric_rate(s.trip_energy_kwh, s.trip_electric_km)) is None
            else _q("kwh_per_100_kilometers", rate, 2)
        ),
    ),
    Producible(
        "usage.current_fuel_consumption",
        TANK,
        lambda s, _: _q(
            "liters_per_100_kilometers",
            s.current_consumption if s.powertrain == Powertrain.combustion or s.soc <= 0.15 else 0,
            2,
        ),
    ),
    Producible(
        "usage.average_speed_last_trip",
        ALL,
        lambda s, _: (
            None
            if (v := _trip_avg_speed(s.last_trip_distance_km, s.last_trip_duration_s)) is None
            else _q("kilometers_per_hour", v, 1)
        ),
    ),
    Producible(
        "usage.driving_duration_last_trip",
        ALL,
        lambda s, _: (
            None if s.last_trip_duration_s is None else _q("seconds", s.last_trip_duration_s, 0)
        ),
    ),
    Producible(
        "usage.last_trip_date",
        ALL,
        lambda s, t: (
            None if s.last_trip_end_s is None else t.at(s.last_trip_end_s, s.last_trip_end_us)
        ),
    ),
    Producible(
        "usage.odometer_after_last_trip",
        ALL,
        lambda s, _: (
            None
            if s.last_trip_odometer_km is None
            else _q("kilometers", s.last_trip_odometer_km, 3)
        ),
    ),
    Producible(
        "usage.last_trip_energy_consumption",
        BATTERY,
        lambda s, _: (
            None
            if s.last_trip_energy_kwh is None
            else _q("kilowatt_hours", s.last_trip_energy_kwh, 3)
        ),
    ),
    Producible(
        "usage.last_trip_fuel_consumption",
        TANK,
        lambda s, _: None if s.last_trip_fuel_l is None else _q("liters", s.last_trip_fuel_l, 3),
    ),
    Producible(
        "usage.electric_distance_last_trip",
        BATTERY,
        lambda s, _: (
            None
            if s.last_trip_electric_km is None
            else _q("kilometers", s.last_trip_electric_km, 3)
        ),
    ),
    Producible(
        "usage.last_trip_battery_remaining",
        BATTERY,
        lambda s, _: None if s.last_trip_soc is None else round(s.last_trip_soc, 4),
    ),
    Producible(
        "usage.last_trip_electric_portion",
        frozenset({Powertrain.plug_in_hybrid}),
        lambda s, _: (
            None
            if not s.last_trip_distance_km or s.last_trip_electric_km is None
            else round(min(1.0, s.last_trip_electric_km / s.last_trip_distance_km), 4)
        ),
    ),
    # doors, windows, trunk
    Producible(
        "doors.locks",
        ALL,
        lambda s, _: [
            {"location": loc, "lock_state": _lock(locked)}
            for loc, locked in zip(DOORS, s.door_locked, strict=True)
        ],
    ),
    Producible("doors.locks_state", ALL, lambda s, _: _lock(all(s.door_locked))),
    Producible(
        "doors.positions",
        ALL,
        lambda s, _: [
            {"location": loc, "position": "open" if opened else "closed"}
            for loc, opened in zip(DOORS, s.door_open, strict=True)
        ],
    ),
    Producible(
        "windows.open_percentages",
        ALL,
        lambda s, _: [
            {"location": loc, "open_percentage": round(value, 2)}
            for loc, value in zip(DOORS, s.window_open, strict=True)
        ],
    ),
    Producible(
        "windows.positions",
        ALL,
        lambda s, _: [
            {"location": loc, "position": "closed" if value == 0 else "open"}
            for loc, value in zip(DOORS, s.window_open, strict=True)
        ],
    ),
    Producible("trunk.lock", ALL, lambda s, _: _lock(s.trunk_locked)),
    Producible("trunk.position", ALL, lambda s, _: "open" if s.trunk_open else "closed"),
    Producible(
        "theft_alarm.status", ALL, lambda s, _: "armed" if all(s.door_locked) else "unarmed"
    ),
    # ignition, engine, parking brake
    Producible("ignition.state", ALL, lambda s, _: "on" if s.moving else "lock"),
    Producible("engine.status", TANK, lambda s, _: "on" if s.moving else "off"),
    Producible(
        "parking_brake.status", ALL, lambda s, _: "inactive" if s.mode == Mode.driving else "active"
    ),
    # climate
    Producible("climate.outside_temperature", ALL, lambda s, _: _q("celsius", s.outside_c, 1)),
    Producible("climate.inside_temperature", ALL, lambda s, _: _q("celsius", s.inside_c, 1)),
    Producible(
        "climate.hvac_state",
        ALL,
        lambda s, _: "active" if s.moving or s.hvac_active else "inactive",
    ),
    # dashboard lights
    Producible(
        "dashboard_lights.dashboard_lights",
        ALL,
        lambda s, _: [
            {"name": "hazard_warning", "state": "on" if s.crashed_s is not None else "off"},
            {
                "name": "fuel_level",
                "state": "on" if s.tank_l and s.fuel_l < 0.1 * s.tank_l else "off",
            },
            {
                "name": "battery_charging_condition",
                "state": "on" if s.twelve_volt_v < 11.9 else "off",
            },
        ],
    ),
    # crash: a capability every car has, events once it happened
    Producible("crash.automatic_ecall", ALL, lambda s, _: "enabled"),
    Producible(
        "crash.status",
        ALL,
        lambda s, _: "airbag_triggered" if s.crashed_s is not None else "normal",
    ),
    Producible("crash.tipped_state", ALL, lambda s, _: "not_tipped"),
    Producible("crash.type", ALL, _crash_value("non_pedestrian")),
    Producible(
        "crash.severity", ALL, lambda s, _: s.crash_severity if s.crashed_s is not None else 0
    ),
    Producible(
        "crash.impact_zone",
        ALL,
        _crash_value(["front_driver_side", "front_passenger_side"]),
    ),
    Producible(
        "crash.incidents",
        ALL,
        lambda s, _: (
            [
                {
                    "location": "front",
                    "severity": "high" if s.crash_severity > 160 else "medium",
                    "repairs": "needed",
                }
            ]
            if s.crashed_s is not None
            else None
        ),
    ),
    Producible(
        "maintenance.last_ecall",
        ALL,
        lambda s, t: None if s.crashed_s is None else t.at(s.crashed_s, s.crashed_us),
    ),
    # maintenance
    Producible(
        "maintenance.distance_to_next_service",
        ALL,
        lambda s, _: _q("kilometers", s.service_distance_km, 1),
    ),
    Producible(
        "maintenance.time_to_next_service",
        ALL,
        lambda s, _: _q("days", math.floor(s.service_time_s / 86_400), 0),
    ),
    Producible("maintenance.service_status", ALL, lambda s, _: _service_status(s)),
    Producible("maintenance.inspection_status", ALL, lambda s, _: _service_status(s)),
)
PRODUCER_BY_KEY = {item.key: item for item in PRODUCERS}

for _item in PRODUCERS:  # the catalog is the authority on names; fail at import if not
    _cap, _, _name = _item.key.partition(".")
    CATALOG.property(_cap, _name)


# --------------------------------------------------------------------------- profiles

_BASIC = (
    "vehicle_location.coordinates",
    "vehicle_location.heading",
    "diagnostics.odometer",
    "diagnostics.speed",
    "diagnostics.estimated_range",
    "diagnostics.fuel_level",
    "charging.battery_level",
    "charging.status",
    "charging.estimated_range",
    "doors.locks_state",
    "ignition.state",
)
_STANDARD = (
    *_BASIC,
    "vehicle_location.altitude",
    "diagnostics.tire_pressures",
    "diagnostics.battery_voltage",
    "diagnostics.fuel_volume",
    "charging.charging_rate",
    "charging.time_to_complete_charge",
    "charging.plugged_in",
    "charging.charge_limit",
    "usage.distance_over_time",
    "usage.average_speed_last_trip",
    "usage.electric_consumption_rate_since_start",
    "usage.current_fuel_consumption",
    "usage.last_trip_energy_consumption",
    "usage.last_trip_fuel_consumption",
    "usage.odometer_after_last_trip",
    "doors.locks",
    "doors.positions",
    "windows.positions",
    "trunk.position",
    "crash.status",
    "crash.automatic_ecall",
    "maintenance.distance_to_next_service",
    "maintenance.service_status",
    "climate.outside_temperature",
    "climate.inside_temperature",
)

PROFILES: dict[str, tuple[str, ...]] = {
    "basic": _BASIC,
    "standard": _STANDARD,
    "full": tuple(item.key for item in PRODUCERS),
}


def equipped_properties(
    powertrain: Powertrain, profile: str, extra: Iterable[str] = ()
) -> list[str]:
    """The properties a vehicle of `powertrain` with `profile` has, in catalog order.

    `extra` adds catalog properties the simulator does not produce; they have values once
    the emulator sets them."""
    wanted = {key for key in PROFILES[profile] if powertrain in PRODUCER_BY_KEY[key].powertrains}
    wanted.update(extra)
    return [prop.key for prop in CATALOG.properties() if prop.key in wanted]


def simulated_values(
    state: VehicleState, properties: Iterable[str], timebase: Timebase | int
) -> dict[str, Any]:
    """{"capability.property": data} for the equipped properties the state can tell."""
    if isinstance(timebase, int):
        timebase = Timebase(timebase)
    out: dict[str, Any] = {}
    powertrain = Powertrain(state.powertrain)
    for key in properties:
        producer = PRODUCER_BY_KEY.get(key)
        if producer is None or powertrain not in producer.powertrains:
            continue
        value = producer.produce(state, timebase)
        if value is not None:
            out[key] = value
    return out


def to_capabilities(values: dict[str, Any], timestamp: str) -> CapabilityData:
    """Flat {"cap.prop": data} to the pull layout with wrappers (lists for arrays)."""
    out: CapabilityData = {}
    for key, value in values.items():
        capability, _, name = key.partition(".")
        prop = CATALOG.property(capability, name)
        group = out.setdefault(capability, {})
        if prop.multiple:
            group[name] = [{"data": item, "timestamp": timestamp} for item in value]
        else:
            group[name] = {"data": value, "timestamp": timestamp}
    return out


def changed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The values of `after` that are new or differ from `before`."""
    return {key: value for key, value in after.items() if before.get(key) != value}
