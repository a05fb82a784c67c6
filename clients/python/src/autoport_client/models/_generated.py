"""Generated from autoport's catalog of the level-13 vehicle data interface by clients/python/scripts/generate_models.py.

Do not edit: run the script. Every capability and property of the catalog, enums
as Literals, quantities with their units."""

# ruff: noqa: E501
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from autoport_client.models._base import (
    Capability,
    ObjectValue,
    Quantity,
    Value,
    VehicleDataBase,
    missing,
)

Brand = Literal["abarth", "alfaromeo", "alpine", "audi", "bmw", "cadillac", "chevrolet", "chrysler", "citroen", "cupra", "dacia", "dodge", "ds", "fiat", "ford", "honda", "hyundai", "iveco", "jaguar", "jeep", "kia", "lancia", "land_rover", "lexus", "man", "mazda", "mercedes_benz", "mini", "mitsubishi", "nissan", "opel", "peugeot", "porsche", "renault", "sandbox", "seat", "skoda", "smart", "subaru", "toyota", "unknown", "volkswagen", "volvo_cars"]

AccelerationUnit = Literal["meters_per_second_squared", "gravity"]
AngleUnit = Literal["degrees", "radians", "revolutions"]
AngularVelocityUnit = Literal["revolutions_per_minute", "degrees_per_second", "radians_per_second"]
DurationUnit = Literal["seconds", "minutes", "hours", "days", "weeks", "months", "milliseconds"]
ElectricCurrentUnit = Literal["amperes", "milliamperes", "kiloamperes"]
ElectricPotentialDifferenceUnit = Literal["volts", "millivolts", "kilovolts"]
EnergyUnit = Literal["joules", "kilojoules", "watt_hours", "kilowatt_hours", "ampere_hours"]
EnergyEfficiencyUnit = Literal["kwh_per_100_kilometers", "miles_per_kwh", "kilometers_per_kwh", "miles_per_gallon_equivalent", "miles_per_imperial_gallon_equivalent"]
FuelEfficiencyUnit = Literal["liters_per_100_kilometers", "miles_per_imperial_gallon", "miles_per_gallon", "kilometers_per_liter"]
IlluminanceUnit = Literal["lux"]
LengthUnit = Literal["meters", "millimeters", "centimeters", "decimeters", "kilometers", "megameters", "inches", "feet", "yards", "miles", "scandinavian_miles", "nautical_miles"]
PowerUnit = Literal["watts", "milliwatts", "kilowatts", "megawatts", "horsepower"]
PressureUnit = Literal["pascals", "kilopascals", "inches_of_mercury", "bars", "millibars", "millimeters_of_mercury", "pounds_force_per_square_inch"]
SpeedUnit = Literal["meters_per_second", "kilometers_per_hour", "miles_per_hour", "knots"]
TemperatureUnit = Literal["kelvin", "celsius", "fahrenheit"]
TorqueUnit = Literal["newton_meters", "newton_millimeters", "pound_feet"]
VolumeUnit = Literal["liters", "milliliters", "centiliters", "deciliters", "cubic_millimeters", "cubic_centimeters", "cubic_decimeters", "cubic_meters", "cubic_inches", "cubic_feet", "fluid_ounces", "gallons", "imperial_fluid_ounces", "imperial_gallons"]


@dataclass(frozen=True, slots=True)
class AdasLaneKeepAssistsStates(ObjectValue):
    location: Literal["left", "right"]
    state: Literal["inactive", "active"]
    extra: Mapping[str, Any] = field(default_factory=dict)


AdasLaneKeepAssistsStates._FIELDS = {"location": "enum", "state": "enum"}


@dataclass(frozen=True, slots=True)
class AdasParkAssists(ObjectValue):
    location: Literal["front", "rear"]
    alarm: Literal["inactive", "active"]
    muted: Literal["not_muted", "muted"]
    extra: Mapping[str, Any] = field(default_factory=dict)


AdasParkAssists._FIELDS = {"location": "enum", "alarm": "enum", "muted": "enum"}


@dataclass(frozen=True, slots=True)
class ChargingBatteryTemperatureExtremes(ObjectValue):
    extreme: Literal["highest", "lowest"]
    temperature: Quantity[TemperatureUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingBatteryTemperatureExtremes._FIELDS = {"extreme": "enum", "temperature": "quantity"}


@dataclass(frozen=True, slots=True)
class ChargingBatteryTempretatureExtremes(ObjectValue):
    extreme: Literal["highest", "lowest"]
    temperature: Quantity[TemperatureUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingBatteryTempretatureExtremes._FIELDS = {"extreme": "enum", "temperature": "quantity"}


@dataclass(frozen=True, slots=True)
class ChargingChargingRateDistance(ObjectValue):
    distance: Quantity[LengthUnit]
    time: Quantity[DurationUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingChargingRateDistance._FIELDS = {"distance": "quantity", "time": "quantity"}


@dataclass(frozen=True, slots=True)
class ChargingDepartureTimesTime(ObjectValue):
    hour: int
    minute: int
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingDepartureTimesTime._FIELDS = {"hour": "integer", "minute": "integer"}


@dataclass(frozen=True, slots=True)
class ChargingDepartureTimes(ObjectValue):
    state: Literal["inactive", "active"]
    time: ChargingDepartureTimesTime
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingDepartureTimes._FIELDS = {"state": "enum", "time": ChargingDepartureTimesTime}


@dataclass(frozen=True, slots=True)
class ChargingFullyChargedEndTimesTime(ObjectValue):
    hour: int
    minute: int
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingFullyChargedEndTimesTime._FIELDS = {"hour": "integer", "minute": "integer"}


@dataclass(frozen=True, slots=True)
class ChargingFullyChargedEndTimes(ObjectValue):
    weekday: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "automatic"]
    time: ChargingFullyChargedEndTimesTime
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingFullyChargedEndTimes._FIELDS = {"weekday": "enum", "time": ChargingFullyChargedEndTimesTime}


@dataclass(frozen=True, slots=True)
class ChargingPreconditioningScheduledTime(ObjectValue):
    hour: int
    minute: int
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingPreconditioningScheduledTime._FIELDS = {"hour": "integer", "minute": "integer"}


@dataclass(frozen=True, slots=True)
class ChargingReductionTimesTime(ObjectValue):
    hour: int
    minute: int
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingReductionTimesTime._FIELDS = {"hour": "integer", "minute": "integer"}


@dataclass(frozen=True, slots=True)
class ChargingReductionTimes(ObjectValue):
    start_stop: Literal["start", "stop"]
    time: ChargingReductionTimesTime
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingReductionTimes._FIELDS = {"start_stop": "enum", "time": ChargingReductionTimesTime}


@dataclass(frozen=True, slots=True)
class ChargingRestriction(ObjectValue):
    active: Literal["inactive", "active"]
    limit: Literal["max", "reduced", "min"]
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingRestriction._FIELDS = {"active": "enum", "limit": "enum"}


@dataclass(frozen=True, slots=True)
class ChargingTimers(ObjectValue):
    timer_type: Literal["preferred_start_time", "preferred_end_time", "departure_date"]
    date: datetime
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingTimers._FIELDS = {"timer_type": "enum", "date": "date-time"}


@dataclass(frozen=True, slots=True)
class ChargingSessionChargingCost(ObjectValue):
    currency: str
    calculated_charging_cost: float
    calculated_savings: float
    simulated_immediate_charging_cost: float
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingSessionChargingCost._FIELDS = {"currency": "string", "calculated_charging_cost": "number", "calculated_savings": "number", "simulated_immediate_charging_cost": "number"}


@dataclass(frozen=True, slots=True)
class ChargingSessionLocation(ObjectValue):
    municipality: str
    formatted_address: str
    street_address: str
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingSessionLocation._FIELDS = {"municipality": "string", "formatted_address": "string", "street_address": "string"}


@dataclass(frozen=True, slots=True)
class ChargingSessionPublicChargingPoints(ObjectValue):
    city: str
    postal_code: str
    street: str
    provider: str
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingSessionPublicChargingPoints._FIELDS = {"city": "string", "postal_code": "string", "street": "string", "provider": "string"}


@dataclass(frozen=True, slots=True)
class ChassisSettingsCurrentSpringRates(ObjectValue):
    axle: Literal["front", "rear"]
    spring_rate: Quantity[TorqueUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


ChassisSettingsCurrentSpringRates._FIELDS = {"axle": "enum", "spring_rate": "quantity"}


@dataclass(frozen=True, slots=True)
class ChassisSettingsMaximumSpringRates(ObjectValue):
    axle: Literal["front", "rear"]
    spring_rate: Quantity[TorqueUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


ChassisSettingsMaximumSpringRates._FIELDS = {"axle": "enum", "spring_rate": "quantity"}


@dataclass(frozen=True, slots=True)
class ChassisSettingsMinimumSpringRates(ObjectValue):
    axle: Literal["front", "rear"]
    spring_rate: Quantity[TorqueUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


ChassisSettingsMinimumSpringRates._FIELDS = {"axle": "enum", "spring_rate": "quantity"}


@dataclass(frozen=True, slots=True)
class ClimateHvacWeekdayStartingTimesTime(ObjectValue):
    hour: int
    minute: int
    extra: Mapping[str, Any] = field(default_factory=dict)


ClimateHvacWeekdayStartingTimesTime._FIELDS = {"hour": "integer", "minute": "integer"}


@dataclass(frozen=True, slots=True)
class ClimateHvacWeekdayStartingTimes(ObjectValue):
    weekday: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "automatic"]
    time: ClimateHvacWeekdayStartingTimesTime
    extra: Mapping[str, Any] = field(default_factory=dict)


ClimateHvacWeekdayStartingTimes._FIELDS = {"weekday": "enum", "time": ClimateHvacWeekdayStartingTimesTime}


@dataclass(frozen=True, slots=True)
class CrashIncidents(ObjectValue):
    location: Literal["front", "lateral", "rear"]
    severity: Literal["very_high", "high", "medium", "low", "unknown"]
    repairs: Literal["unknown", "needed", "not_needed"]
    extra: Mapping[str, Any] = field(default_factory=dict)


CrashIncidents._FIELDS = {"location": "enum", "severity": "enum", "repairs": "enum"}


@dataclass(frozen=True, slots=True)
class DashboardLightsDashboardLights(ObjectValue):
    name: Literal["high_beam", "low_beam", "hazard_warning", "brake_failure", "hatch_open", "fuel_level", "engine_coolant_temperature", "battery_charging_condition", "engine_oil", "position_lights", "front_fog_light", "rear_fog_light", "park_heating", "engine_indicator", "service_call", "transmission_fluid_temperature", "transmission_failure", "anti_lock_brake_failure", "worn_brake_linings", "windscreen_washer_fluid", "tire_failure", "engine_oil_level", "engine_coolant_level", "steering_failure", "esc_indication", "brake_lights", "adblue_level", "fuel_filter_diff_pressure", "seat_belt", "advanced_braking", "acc", "trailer_connected", "airbag", "esc_switched_off", "lane_departure_warning_off", "air_filter_minder", "air_suspension_ride_control_fault", "all_wheel_drive_disabled", "anti_theft", "blind_spot_detection", "charge_system_fault", "check_fuel_cap", "check_fuel_fill_inlet", "check_fuel_filter", "dc_temp_warning", "dc_warning_status", "diesel_engine_idle_shutdown", "diesel_engine_warning", "diesel_exhaust_fluid_system_fault", "diesel_exhaust_over_temp", "diesel_exhaust_fluid_quality", "diesel_filter_regeneration", "diesel_particulate_filter", "diesel_pre_heat", "electric_trailer_brake_connection", "ev_battery_cell_max_volt_warning", "ev_battery_cell_min_volt_warning", "ev_battery_charge_energy_storage_warning", "ev_battery_high_level_warning", "ev_battery_high_temperature_warning", "ev_battery_insulation_resist_warning", "ev_battery_jump_level_warning", "ev_battery_low_level_warning", "ev_battery_max_volt_veh_energy_warning", "ev_battery_min_volt_veh_energy_warning", "ev_battery_over_charge_warning", "ev_battery_poor_cell_warning", "ev_battery_temp_diff_warning", "forward_collision_warning", "fuel_door_open", "hill_descent_control_fault", "hill_start_assist_warning", "hv_interlocking_status_warning", "lighting_system_failure", "malfunction_indicator", "motor_controller_temp_warning", "park_aid_malfunction", "passive_entry_passive_start", "powertrain_malfunction", "restraints_indicator_warning", "start_stop_engine_warning", "traction_control_disabled", "traction_control_active", "traction_motor_temp_warning", "tire_pressure_monitor_system_warning", "water_in_fuel", "tire_warning_front_right", "tire_warning_front_left", "tire_warning_rear_right", "tire_warning_rear_left", "tire_warning_system_error", "battery_low_warning", "brake_fluid_warning", "active_hood_fault", "active_spoiler_fault", "adjust_tire_pressure", "steering_lock_alert", "anti_pollution_failure_engine_start_impossible", "anti_pollution_system_failure", "anti_reverse_system_failing", "auto_parking_brake", "automatic_braking_deactive", "automatic_braking_system_fault", "automatic_lights_settings_failure", "keyfob_battery_alarm", "trunk_open", "check_reversing_lamp", "crossing_line_system_alert_failure", "dipped_beam_headlamps_front_left_failure", "dipped_beam_headlamps_front_right_failure", "directional_headlamps_failure", "directional_light_failure", "dsg_failing", "electric_mode_not_available", "electronic_lock_failure", "engine_control_system_failure", "engine_oil_pressure_alert", "esp_failure", "excessive_oil_temperature", "tire_front_left_flat", "tire_front_right_flat", "tire_rear_left_flat", "tire_rear_right_flat", "fog_light_front_left_failure", "fog_light_front_right_failure", "fog_light_rear_left_failure", "fog_light_rear_right_failure", "fog_light_front_fault", "door_front_left_open", "door_front_left_open_high_speed", "tire_front_left_not_monitored", "door_front_right_open", "door_front_right_open_high_speed", "tire_front_right_not_monitored", "headlights_left_failure", "headlights_right_failure", "hybrid_system_fault", "hybrid_system_fault_repaired_vehicle", "hydraulic_pressure_or_brake_fluid_insufficient", "lane_departure_fault", "limited_visibility_aids_camera", "tire_pressure_low", "maintenance_date_exceeded", "maintenance_odometer_exceeded", "other_failing_system", "parking_brake_control_failing", "parking_space_measuring_system_failure", "place_gear_to_parking", "power_steering_assistance_failure", "power_steering_failure", "preheating_deactivated_battery_too_low", "preheating_deactivated_fuel_level_too_low", "preheating_deactivated_battery_set_the_clock", "fog_light_rear_fault", "door_rear_left_open", "door_rear_left_open_high_speed", "tire_rear_left_not_monitored", "door_rear_right_open", "door_rear_right_open_high_speed", "tire_rear_right_not_monitored", "screen_rear_open", "retractable_roof_mechanism_fault", "reverse_light_left_failure", "reverse_light_right_failure", "risk_of_ice", "roof_operation_impossible_apply_parking_break", "roof_operation_impossible_apply_start_engine", "roof_operation_impossible_temperature_too_high", "seatbelt_passenger_front_right_unbuckled", "seatbelt_passenger_rear_left_unbuckled", "seatbelt_passenger_rear_center_unbuckled", "seatbelt_passenger_rear_right_unbuckled", "battery_secondary_low", "shock_sensor_failing", "side_lights_front_left_failure", "side_lights_front_right_failure", "side_lights_rear_left_failure", "side_lights_rear_right_failure", "spare_wheel_fitter_driving_aids_deactivated", "speed_control_failure", "stop_light_left_failure", "stop_light_right_failure", "suspension_failure", "suspension_failure_reduce_speed", "suspension_fault_limited_to_90kmh", "tire_pressure_sensor_failure", "trunk_open_high_speed", "trunk_window_open", "turn_signal_front_left_failure", "turn_signal_front_right_failure", "turn_signal_rear_left_failure", "turn_signal_rear_right_failure", "tire_under_inflation", "wheel_pressure_fault", "oil_change_warning", "inspection_warning", "diesel_oil_filter_water_presence", "engine_drag_torque_control_failure", "high_beam_left_failure", "high_beam_right_failure", "daytime_running_light_left_failure", "daytime_running_light_right_failure", "side_mark_lights_failure", "licence_plate_light_failure"]
    state: Literal["off", "on"]
    extra: Mapping[str, Any] = field(default_factory=dict)


DashboardLightsDashboardLights._FIELDS = {"name": "enum", "state": "enum"}


@dataclass(frozen=True, slots=True)
class DashboardLightsDynamicWarnings(ObjectValue):
    category: str
    id: str
    description: str
    extra: Mapping[str, Any] = field(default_factory=dict)


DashboardLightsDynamicWarnings._FIELDS = {"category": "string", "id": "string", "description": "string"}


@dataclass(frozen=True, slots=True)
class DiagnosticsCheckControlMessages(ObjectValue):
    id: int
    remaining_time: Quantity[DurationUnit]
    text: str
    status: str
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsCheckControlMessages._FIELDS = {"id": "integer", "remaining_time": "quantity", "text": "string", "status": "string"}


@dataclass(frozen=True, slots=True)
class DiagnosticsConfirmedTroubleCodes(ObjectValue):
    id: str
    ecu_address: str
    ecu_variant_name: str
    status: str
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsConfirmedTroubleCodes._FIELDS = {"id": "string", "ecu_address": "string", "ecu_variant_name": "string", "status": "string"}


@dataclass(frozen=True, slots=True)
class DiagnosticsDieselExhaustFilterStatus(ObjectValue):
    status: Literal["unknown", "normal_operation", "overloaded", "at_limit", "over_limit"]
    component: Literal["unknown", "exhaust_filter", "diesel_particulate_filter", "overboost_code_regulator", "off_board_regeneration"]
    cleaning: Literal["unknown", "in_progress", "complete", "interrupted"]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsDieselExhaustFilterStatus._FIELDS = {"status": "enum", "component": "enum", "cleaning": "enum"}


@dataclass(frozen=True, slots=True)
class DiagnosticsOemTroubleCodeValuesKeyValue(ObjectValue):
    key: str
    value: str
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsOemTroubleCodeValuesKeyValue._FIELDS = {"key": "string", "value": "string"}


@dataclass(frozen=True, slots=True)
class DiagnosticsOemTroubleCodeValues(ObjectValue):
    id: str
    key_value: DiagnosticsOemTroubleCodeValuesKeyValue
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsOemTroubleCodeValues._FIELDS = {"id": "string", "key_value": DiagnosticsOemTroubleCodeValuesKeyValue}


@dataclass(frozen=True, slots=True)
class DiagnosticsTirePressureStatuses(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_right_outer", "rear_left_outer", "spare"]
    status: Literal["normal", "low", "alert", "soft", "deflation"]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsTirePressureStatuses._FIELDS = {"location": "enum", "status": "enum"}


@dataclass(frozen=True, slots=True)
class DiagnosticsTirePressures(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_right_outer", "rear_left_outer", "spare"]
    pressure: Quantity[PressureUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsTirePressures._FIELDS = {"location": "enum", "pressure": "quantity"}


@dataclass(frozen=True, slots=True)
class DiagnosticsTirePressuresDifferences(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_right_outer", "rear_left_outer", "spare"]
    pressure: Quantity[PressureUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsTirePressuresDifferences._FIELDS = {"location": "enum", "pressure": "quantity"}


@dataclass(frozen=True, slots=True)
class DiagnosticsTirePressuresTargets(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_right_outer", "rear_left_outer", "spare"]
    pressure: Quantity[PressureUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsTirePressuresTargets._FIELDS = {"location": "enum", "pressure": "quantity"}


@dataclass(frozen=True, slots=True)
class DiagnosticsTireTemperatures(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_right_outer", "rear_left_outer", "spare"]
    temperature: Quantity[TemperatureUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsTireTemperatures._FIELDS = {"location": "enum", "temperature": "quantity"}


@dataclass(frozen=True, slots=True)
class DiagnosticsTroubleCodes(ObjectValue):
    occurrences: int
    id: str
    ecu_id: str
    status: str
    system: Literal["unknown", "body", "chassis", "powertrain", "network"]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsTroubleCodes._FIELDS = {"occurrences": "integer", "id": "string", "ecu_id": "string", "status": "string", "system": "enum"}


@dataclass(frozen=True, slots=True)
class DiagnosticsWheelRpms(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_right_outer", "rear_left_outer", "spare"]
    rpm: Quantity[AngularVelocityUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


DiagnosticsWheelRpms._FIELDS = {"location": "enum", "rpm": "quantity"}


@dataclass(frozen=True, slots=True)
class DoorsInsideLocks(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left"]
    lock_state: Literal["unlocked", "locked"]
    extra: Mapping[str, Any] = field(default_factory=dict)


DoorsInsideLocks._FIELDS = {"location": "enum", "lock_state": "enum"}


@dataclass(frozen=True, slots=True)
class DoorsLocks(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left"]
    lock_state: Literal["unlocked", "locked"]
    extra: Mapping[str, Any] = field(default_factory=dict)


DoorsLocks._FIELDS = {"location": "enum", "lock_state": "enum"}


@dataclass(frozen=True, slots=True)
class DoorsPositions(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "all"]
    position: Literal["closed", "open"]
    extra: Mapping[str, Any] = field(default_factory=dict)


DoorsPositions._FIELDS = {"location": "enum", "position": "enum"}


@dataclass(frozen=True, slots=True)
class LightsAmbientLightColour(ObjectValue):
    red: int
    green: int
    blue: int
    extra: Mapping[str, Any] = field(default_factory=dict)


LightsAmbientLightColour._FIELDS = {"red": "integer", "green": "integer", "blue": "integer"}


@dataclass(frozen=True, slots=True)
class LightsFogLights(ObjectValue):
    location: Literal["front", "rear"]
    state: Literal["inactive", "active"]
    extra: Mapping[str, Any] = field(default_factory=dict)


LightsFogLights._FIELDS = {"location": "enum", "state": "enum"}


@dataclass(frozen=True, slots=True)
class LightsInteriorLights(ObjectValue):
    location: Literal["front", "rear"]
    state: Literal["inactive", "active"]
    extra: Mapping[str, Any] = field(default_factory=dict)


LightsInteriorLights._FIELDS = {"location": "enum", "state": "enum"}


@dataclass(frozen=True, slots=True)
class LightsReadingLamps(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left"]
    state: Literal["inactive", "active"]
    extra: Mapping[str, Any] = field(default_factory=dict)


LightsReadingLamps._FIELDS = {"location": "enum", "state": "enum"}


@dataclass(frozen=True, slots=True)
class MaintenanceBrakesServiceDueDates(ObjectValue):
    axle: Literal["front", "rear"]
    due_date: datetime
    extra: Mapping[str, Any] = field(default_factory=dict)


MaintenanceBrakesServiceDueDates._FIELDS = {"axle": "enum", "due_date": "date-time"}


@dataclass(frozen=True, slots=True)
class MaintenanceBrakesServiceRemainingDistances(ObjectValue):
    axle: Literal["front", "rear"]
    distance: Quantity[LengthUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


MaintenanceBrakesServiceRemainingDistances._FIELDS = {"axle": "enum", "distance": "quantity"}


@dataclass(frozen=True, slots=True)
class MaintenanceBrakesServiceStatuses(ObjectValue):
    axle: Literal["front", "rear"]
    status: Literal["ok", "warning", "critical"]
    extra: Mapping[str, Any] = field(default_factory=dict)


MaintenanceBrakesServiceStatuses._FIELDS = {"axle": "enum", "status": "enum"}


@dataclass(frozen=True, slots=True)
class MaintenanceConditionBasedServices(ObjectValue):
    year: int
    month: int
    id: int
    due_status: Literal["ok", "pending", "overdue"]
    text: str
    description: str
    extra: Mapping[str, Any] = field(default_factory=dict)


MaintenanceConditionBasedServices._FIELDS = {"year": "integer", "month": "integer", "id": "integer", "due_status": "enum", "text": "string", "description": "string"}


@dataclass(frozen=True, slots=True)
class NotificationsActionItems(ObjectValue):
    id: int
    name: str
    extra: Mapping[str, Any] = field(default_factory=dict)


NotificationsActionItems._FIELDS = {"id": "integer", "name": "string"}


@dataclass(frozen=True, slots=True)
class RaceAccelerations(ObjectValue):
    direction: Literal["longitudinal", "lateral", "front_lateral", "rear_lateral"]
    acceleration: Quantity[AccelerationUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


RaceAccelerations._FIELDS = {"direction": "enum", "acceleration": "quantity"}


@dataclass(frozen=True, slots=True)
class RaceAcceleratorDurations(ObjectValue):
    pedal_position_threshold: float
    duration: Quantity[DurationUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


RaceAcceleratorDurations._FIELDS = {"pedal_position_threshold": "number", "duration": "quantity"}


@dataclass(frozen=True, slots=True)
class RaceBrakeTorqueVectorings(ObjectValue):
    axle: Literal["front", "rear"]
    state: Literal["inactive", "active"]
    extra: Mapping[str, Any] = field(default_factory=dict)


RaceBrakeTorqueVectorings._FIELDS = {"axle": "enum", "state": "enum"}


@dataclass(frozen=True, slots=True)
class SeatsPersonsDetected(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_center", "driver", "passenger"]
    detected: Literal["not_detected", "detected"]
    extra: Mapping[str, Any] = field(default_factory=dict)


SeatsPersonsDetected._FIELDS = {"location": "enum", "detected": "enum"}


@dataclass(frozen=True, slots=True)
class SeatsSeatbeltsState(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "rear_center", "driver", "passenger"]
    fastened_state: Literal["not_fastened", "fastened"]
    extra: Mapping[str, Any] = field(default_factory=dict)


SeatsSeatbeltsState._FIELDS = {"location": "enum", "fastened_state": "enum"}


@dataclass(frozen=True, slots=True)
class UsageAccelerationDurations(ObjectValue):
    direction: Literal["longitudinal", "lateral"]
    type: Literal["regular", "positive_outlier", "negative_outlier"]
    duration: Quantity[DurationUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


UsageAccelerationDurations._FIELDS = {"direction": "enum", "type": "enum", "duration": "quantity"}


@dataclass(frozen=True, slots=True)
class UsageDistanceOverTime(ObjectValue):
    distance: Quantity[LengthUnit]
    time: Quantity[DurationUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


UsageDistanceOverTime._FIELDS = {"distance": "quantity", "time": "quantity"}


@dataclass(frozen=True, slots=True)
class UsageDrivingModesActivationPeriods(ObjectValue):
    driving_mode: Literal["regular", "eco", "sport", "sport_plus", "eco_plus", "comfort"]
    period: float
    extra: Mapping[str, Any] = field(default_factory=dict)


UsageDrivingModesActivationPeriods._FIELDS = {"driving_mode": "enum", "period": "number"}


@dataclass(frozen=True, slots=True)
class UsageDrivingModesEnergyConsumptions(ObjectValue):
    driving_mode: Literal["regular", "eco", "sport", "sport_plus", "eco_plus", "comfort"]
    consumption: Quantity[EnergyUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


UsageDrivingModesEnergyConsumptions._FIELDS = {"driving_mode": "enum", "consumption": "quantity"}


@dataclass(frozen=True, slots=True)
class UsageTripMeters(ObjectValue):
    id: int
    distance: Quantity[LengthUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)


UsageTripMeters._FIELDS = {"id": "integer", "distance": "quantity"}


@dataclass(frozen=True, slots=True)
class VehicleLocationCoordinates(ObjectValue):
    latitude: float
    longitude: float
    extra: Mapping[str, Any] = field(default_factory=dict)


VehicleLocationCoordinates._FIELDS = {"latitude": "number", "longitude": "number"}


@dataclass(frozen=True, slots=True)
class VehicleLocationFuzzyCoordinates(ObjectValue):
    latitude: float
    longitude: float
    extra: Mapping[str, Any] = field(default_factory=dict)


VehicleLocationFuzzyCoordinates._FIELDS = {"latitude": "number", "longitude": "number"}


@dataclass(frozen=True, slots=True)
class WindowsOpenPercentages(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "hatch"]
    open_percentage: float
    extra: Mapping[str, Any] = field(default_factory=dict)


WindowsOpenPercentages._FIELDS = {"location": "enum", "open_percentage": "number"}


@dataclass(frozen=True, slots=True)
class WindowsPositions(ObjectValue):
    location: Literal["front_left", "front_right", "rear_right", "rear_left", "hatch"]
    position: Literal["closed", "open", "intermediate"]
    extra: Mapping[str, Any] = field(default_factory=dict)


WindowsPositions._FIELDS = {"location": "enum", "position": "enum"}


@dataclass(frozen=True, slots=True)
class WindscreenWindscreenDamageZone(ObjectValue):
    horizontal: int
    vertical: int
    extra: Mapping[str, Any] = field(default_factory=dict)


WindscreenWindscreenDamageZone._FIELDS = {"horizontal": "integer", "vertical": "integer"}


@dataclass(frozen=True, slots=True)
class WindscreenWindscreenZoneMatrix(ObjectValue):
    horizontal: int
    vertical: int
    extra: Mapping[str, Any] = field(default_factory=dict)


WindscreenWindscreenZoneMatrix._FIELDS = {"horizontal": "integer", "vertical": "integer"}


@dataclass(frozen=True, slots=True)
class Adas(Capability):
    """Driver assistance (ADAS) (`adas`)."""

    alertness_system_status: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    automated_parking_brake: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    blind_spot_warning_state: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    blind_spot_warning_system: Value[Literal["off", "on"]] = field(default_factory=missing)
    blind_spot_warning_system_coverage: Value[Literal["regular", "trailer"]] = field(default_factory=missing)
    forward_collision_warning_system: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    lane_keep_assist_system: Value[Literal["off", "on"]] = field(default_factory=missing)
    lane_keep_assists_states: list[Value[AdasLaneKeepAssistsStates]] = field(default_factory=list)
    launch_control: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    park_assists: list[Value[AdasParkAssists]] = field(default_factory=list)
    rear_cross_warning_system: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    status: Value[Literal["off", "on"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Adas._PROPERTIES = {"alertness_system_status": (False, "enum"), "automated_parking_brake": (False, "enum"), "blind_spot_warning_state": (False, "enum"), "blind_spot_warning_system": (False, "enum"), "blind_spot_warning_system_coverage": (False, "enum"), "forward_collision_warning_system": (False, "enum"), "lane_keep_assist_system": (False, "enum"), "lane_keep_assists_states": (True, AdasLaneKeepAssistsStates), "launch_control": (False, "enum"), "park_assists": (True, AdasParkAssists), "rear_cross_warning_system": (False, "enum"), "status": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Charging(Capability):
    """Charging (`charging`)."""

    acoustic_limit: Value[Literal["no_action", "automatic", "unlimited", "limited"]] = field(default_factory=missing)
    auxiliary_power: Value[Quantity[PowerUnit]] = field(default_factory=missing)
    battery_capacity: Value[Quantity[EnergyUnit]] = field(default_factory=missing)
    battery_charge_transfer_event: Value[Literal["low_voltage_battery_service_required", "low_voltage_battery_high_usage", "vehicle_service_required"]] = field(default_factory=missing)
    battery_charge_type: Value[Literal["no_charge", "normal", "accelerated", "fast", "quick", "ultra_fast", "not_used", "vehicle_to_home", "vehicle_to_grid"]] = field(default_factory=missing)
    battery_cooling_temperature: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    battery_current: Value[Quantity[ElectricCurrentUnit]] = field(default_factory=missing)
    battery_current_ac: Value[Quantity[ElectricCurrentUnit]] = field(default_factory=missing)
    battery_current_dc: Value[Quantity[ElectricCurrentUnit]] = field(default_factory=missing)
    battery_energy: Value[Quantity[EnergyUnit]] = field(default_factory=missing)
    battery_energy_chargable: Value[Quantity[EnergyUnit]] = field(default_factory=missing)
    battery_led: Value[Literal["no_colour", "white", "yellow", "green", "red", "yellow_pulsing", "green_pulsing", "red_pulsing", "green_red_pulsing", "green_flashing", "initialising", "error", "blue"]] = field(default_factory=missing)
    battery_level: Value[float] = field(default_factory=missing)
    battery_level_at_departure: Value[float] = field(default_factory=missing)
    battery_max_available: Value[Quantity[EnergyUnit]] = field(default_factory=missing)
    battery_performance_status: Value[Literal["normal", "caution", "reduced", "severly_reduced"]] = field(default_factory=missing)
    battery_status: Value[Literal["inactive", "active", "balancing", "external_load", "load", "error", "initialising", "conditioning"]] = field(default_factory=missing)
    battery_temperature: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    battery_temperature_control_demand: Value[Literal["high_cooling", "medium_cooling", "low_cooling", "no_temperature_requirement", "low_heating", "medium_heating", "high_heating", "circulation_requirement"]] = field(default_factory=missing)
    battery_temperature_extremes: Value[ChargingBatteryTemperatureExtremes] = field(default_factory=missing)
    battery_tempretature_extremes: Value[ChargingBatteryTempretatureExtremes] = field(default_factory=missing)
    battery_voltage: Value[Quantity[ElectricPotentialDifferenceUnit]] = field(default_factory=missing)
    charge_limit: Value[float] = field(default_factory=missing)
    charge_mode: Value[Literal["immediate", "timer_based", "inductive", "conductive", "push_button"]] = field(default_factory=missing)
    charge_port_state: Value[Literal["closed", "open"]] = field(default_factory=missing)
    charger_power: Value[Quantity[PowerUnit]] = field(default_factory=missing)
    charger_voltage: Value[Quantity[ElectricPotentialDifferenceUnit]] = field(default_factory=missing)
    charger_voltage_ac: Value[Quantity[ElectricPotentialDifferenceUnit]] = field(default_factory=missing)
    charger_voltage_dc: Value[Quantity[ElectricPotentialDifferenceUnit]] = field(default_factory=missing)
    charging_complete_lock: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    charging_current: Value[Quantity[ElectricCurrentUnit]] = field(default_factory=missing)
    charging_end_reason: Value[Literal["unknown", "goal_reached", "requested_by_driver", "connector_removed", "powergrid_failed", "hv_system_failure", "charging_station_failure", "parking_lock_failed", "no_parking_lock", "signal_invalid"]] = field(default_factory=missing)
    charging_phases: Value[Literal["no_charging", "one", "two", "three"]] = field(default_factory=missing)
    charging_rate: Value[Quantity[PowerUnit]] = field(default_factory=missing)
    charging_rate_distance: Value[ChargingChargingRateDistance] = field(default_factory=missing)
    charging_rate_kw: Value[Quantity[PowerUnit]] = field(default_factory=missing)
    charging_scenario: Value[Literal["off", "charging_to_departure_time_finished", "immediately_charging_finished", "optimised_charging_finished", "charging_to_departure_time_active", "immediately_charging_active", "optimised_charging_active", "charging_to_departure_time_waiting", "optimised_charging_waiting", "no_grid_voltage", "error_lock", "error_charging_system", "initialization_charging_communication", "immediately_optimised_charging_active", "immediately_optimised_charging_finished", "emergency_charging", "charging_interrupt_by_user", "plug_releasable"]] = field(default_factory=missing)
    charging_single_immediate: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    charging_time_display: Value[Literal["no_display", "display_duration", "no_display_duration"]] = field(default_factory=missing)
    charging_window_chosen: Value[Literal["not_chosen", "chosen"]] = field(default_factory=missing)
    conserving_charge: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    current_limit: Value[Quantity[ElectricCurrentUnit]] = field(default_factory=missing)
    current_type: Value[Literal["alternating_current", "direct_current", "wireless"]] = field(default_factory=missing)
    departure_time_display: Value[Literal["no_display", "reachable", "not_reachable"]] = field(default_factory=missing)
    departure_times: list[Value[ChargingDepartureTimes]] = field(default_factory=list)
    distance_to_complete_charge: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    driving_mode_phev: Value[Literal["not_in_traction", "in_charge", "full_electric", "hybrid_serial", "thermic", "hybrid_parallel"]] = field(default_factory=missing)
    estimated_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    estimated_range_target: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    flap_lock_status: Value[Literal["unlocked", "locked"]] = field(default_factory=missing)
    fully_charged_end_times: Value[ChargingFullyChargedEndTimes] = field(default_factory=missing)
    hybrid_operating_mode: Value[Literal["auto_charge_deplete", "auto_charge_sustain", "forced_charge_sustain", "forced_electric", "forced_non_electric", "temporary_charge_sustain", "prioritize_charge_generation"]] = field(default_factory=missing)
    limit_status: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    max_charging_current: Value[Quantity[ElectricCurrentUnit]] = field(default_factory=missing)
    max_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    min_charging_current: Value[Quantity[ElectricCurrentUnit]] = field(default_factory=missing)
    plug_lock_status: Value[Literal["unlocked", "locked"]] = field(default_factory=missing)
    plug_type: Value[Literal["type_1", "type_2", "ccs", "chademo"]] = field(default_factory=missing)
    plugged_in: Value[Literal["disconnected", "plugged_in", "plugged_in_both_sides"]] = field(default_factory=missing)
    preconditioning_departure_enabled: Value[Literal["disabled", "enabled"]] = field(default_factory=missing)
    preconditioning_departure_status: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    preconditioning_error: Value[Literal["no_change", "not_possible_low", "not_possible_finished", "available_after_engine_restart", "general_error"]] = field(default_factory=missing)
    preconditioning_immediate_status: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    preconditioning_remaining_time: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    preconditioning_scheduled_time: Value[ChargingPreconditioningScheduledTime] = field(default_factory=missing)
    reduction_times: list[Value[ChargingReductionTimes]] = field(default_factory=list)
    restriction: Value[ChargingRestriction] = field(default_factory=missing)
    smart_charging_option: Value[Literal["price_optimized", "renewable_energy", "co2_optimized"]] = field(default_factory=missing)
    smart_charging_status: Value[Literal["wallbox_is_active", "scc_is_active", "peak_setting_active"]] = field(default_factory=missing)
    starter_battery_state: Value[Literal["red", "yellow", "green", "orange", "green_yellow"]] = field(default_factory=missing)
    state_of_health: Value[float] = field(default_factory=missing)
    station_displayed_status: Value[Literal["not_plugged_in", "fault", "station_not_compatible", "station_not_detected", "in_progress", "scheduled", "paused", "stopped", "completed", "discharging", "not_ready"]] = field(default_factory=missing)
    station_power_type: Value[Literal["ac_basic", "ac_smart", "dc_fast", "wireless"]] = field(default_factory=missing)
    station_status: Value[Literal["not_compatible", "not_detected", "digital_communication_established", "digital_communication_ended", "station_ready", "active", "initialising", "fault", "inactive"]] = field(default_factory=missing)
    status: Value[Literal["not_charging", "charging", "charging_complete", "initialising", "charging_paused", "charging_error", "cable_unplugged", "slow_charging", "fast_charging", "discharging", "foreign_object_detected", "conditioning", "flap_open", "ready_for_charging"]] = field(default_factory=missing)
    time_to_complete_charge: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    timers: list[Value[ChargingTimers]] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


Charging._PROPERTIES = {"acoustic_limit": (False, "enum"), "auxiliary_power": (False, "quantity"), "battery_capacity": (False, "quantity"), "battery_charge_transfer_event": (False, "enum"), "battery_charge_type": (False, "enum"), "battery_cooling_temperature": (False, "quantity"), "battery_current": (False, "quantity"), "battery_current_ac": (False, "quantity"), "battery_current_dc": (False, "quantity"), "battery_energy": (False, "quantity"), "battery_energy_chargable": (False, "quantity"), "battery_led": (False, "enum"), "battery_level": (False, "number"), "battery_level_at_departure": (False, "number"), "battery_max_available": (False, "quantity"), "battery_performance_status": (False, "enum"), "battery_status": (False, "enum"), "battery_temperature": (False, "quantity"), "battery_temperature_control_demand": (False, "enum"), "battery_temperature_extremes": (False, ChargingBatteryTemperatureExtremes), "battery_tempretature_extremes": (False, ChargingBatteryTempretatureExtremes), "battery_voltage": (False, "quantity"), "charge_limit": (False, "number"), "charge_mode": (False, "enum"), "charge_port_state": (False, "enum"), "charger_power": (False, "quantity"), "charger_voltage": (False, "quantity"), "charger_voltage_ac": (False, "quantity"), "charger_voltage_dc": (False, "quantity"), "charging_complete_lock": (False, "enum"), "charging_current": (False, "quantity"), "charging_end_reason": (False, "enum"), "charging_phases": (False, "enum"), "charging_rate": (False, "quantity"), "charging_rate_distance": (False, ChargingChargingRateDistance), "charging_rate_kw": (False, "quantity"), "charging_scenario": (False, "enum"), "charging_single_immediate": (False, "enum"), "charging_time_display": (False, "enum"), "charging_window_chosen": (False, "enum"), "conserving_charge": (False, "enum"), "current_limit": (False, "quantity"), "current_type": (False, "enum"), "departure_time_display": (False, "enum"), "departure_times": (True, ChargingDepartureTimes), "distance_to_complete_charge": (False, "quantity"), "driving_mode_phev": (False, "enum"), "estimated_range": (False, "quantity"), "estimated_range_target": (False, "quantity"), "flap_lock_status": (False, "enum"), "fully_charged_end_times": (False, ChargingFullyChargedEndTimes), "hybrid_operating_mode": (False, "enum"), "limit_status": (False, "enum"), "max_charging_current": (False, "quantity"), "max_range": (False, "quantity"), "min_charging_current": (False, "quantity"), "plug_lock_status": (False, "enum"), "plug_type": (False, "enum"), "plugged_in": (False, "enum"), "preconditioning_departure_enabled": (False, "enum"), "preconditioning_departure_status": (False, "enum"), "preconditioning_error": (False, "enum"), "preconditioning_immediate_status": (False, "enum"), "preconditioning_remaining_time": (False, "quantity"), "preconditioning_scheduled_time": (False, ChargingPreconditioningScheduledTime), "reduction_times": (True, ChargingReductionTimes), "restriction": (False, ChargingRestriction), "smart_charging_option": (False, "enum"), "smart_charging_status": (False, "enum"), "starter_battery_state": (False, "enum"), "state_of_health": (False, "number"), "station_displayed_status": (False, "enum"), "station_power_type": (False, "enum"), "station_status": (False, "enum"), "status": (False, "enum"), "time_to_complete_charge": (False, "quantity"), "timers": (True, ChargingTimers)}


@dataclass(frozen=True, slots=True)
class ChargingSession(Capability):
    """Charging session (`charging_session`)."""

    business_errors: list[Value[str]] = field(default_factory=list)
    calculated_energy_charged: Value[Quantity[EnergyUnit]] = field(default_factory=missing)
    charging_cost: Value[ChargingSessionChargingCost] = field(default_factory=missing)
    displayed_start_state_of_charge: Value[float] = field(default_factory=missing)
    displayed_state_of_charge: Value[float] = field(default_factory=missing)
    end_time: Value[datetime] = field(default_factory=missing)
    energy_charged: Value[Quantity[EnergyUnit]] = field(default_factory=missing)
    location: Value[ChargingSessionLocation] = field(default_factory=missing)
    odometer: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    preconditioning_state: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    public_charging_points: list[Value[ChargingSessionPublicChargingPoints]] = field(default_factory=list)
    start_time: Value[datetime] = field(default_factory=missing)
    time_zone: Value[str] = field(default_factory=missing)
    total_charging_duration: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


ChargingSession._PROPERTIES = {"business_errors": (True, "string"), "calculated_energy_charged": (False, "quantity"), "charging_cost": (False, ChargingSessionChargingCost), "displayed_start_state_of_charge": (False, "number"), "displayed_state_of_charge": (False, "number"), "end_time": (False, "date-time"), "energy_charged": (False, "quantity"), "location": (False, ChargingSessionLocation), "odometer": (False, "quantity"), "preconditioning_state": (False, "enum"), "public_charging_points": (True, ChargingSessionPublicChargingPoints), "start_time": (False, "date-time"), "time_zone": (False, "string"), "total_charging_duration": (False, "quantity")}


@dataclass(frozen=True, slots=True)
class ChassisSettings(Capability):
    """Chassis settings (`chassis_settings`)."""

    current_chassis_position: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    current_spring_rates: list[Value[ChassisSettingsCurrentSpringRates]] = field(default_factory=list)
    driving_mode: Value[Literal["regular", "eco", "sport", "sport_plus", "eco_plus", "comfort"]] = field(default_factory=missing)
    maximum_chassis_position: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    maximum_spring_rates: list[Value[ChassisSettingsMaximumSpringRates]] = field(default_factory=list)
    minimum_chassis_position: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    minimum_spring_rates: list[Value[ChassisSettingsMinimumSpringRates]] = field(default_factory=list)
    sport_chrono: Value[Literal["inactive", "active", "reset"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


ChassisSettings._PROPERTIES = {"current_chassis_position": (False, "quantity"), "current_spring_rates": (True, ChassisSettingsCurrentSpringRates), "driving_mode": (False, "enum"), "maximum_chassis_position": (False, "quantity"), "maximum_spring_rates": (True, ChassisSettingsMaximumSpringRates), "minimum_chassis_position": (False, "quantity"), "minimum_spring_rates": (True, ChassisSettingsMinimumSpringRates), "sport_chrono": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Climate(Capability):
    """Climate (`climate`)."""

    air_conditioner_compressor_power: Value[Quantity[PowerUnit]] = field(default_factory=missing)
    defogging_state: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    defrosting_state: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    defrosting_temperature_setting: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    driver_temperature_setting: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    humidity: Value[float] = field(default_factory=missing)
    hvac_state: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    hvac_weekday_starting_times: list[Value[ClimateHvacWeekdayStartingTimes]] = field(default_factory=list)
    inside_temperature: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    ionising_state: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    outside_temperature: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    passenger_temperature_setting: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    rear_temperature_setting: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Climate._PROPERTIES = {"air_conditioner_compressor_power": (False, "quantity"), "defogging_state": (False, "enum"), "defrosting_state": (False, "enum"), "defrosting_temperature_setting": (False, "quantity"), "driver_temperature_setting": (False, "quantity"), "humidity": (False, "number"), "hvac_state": (False, "enum"), "hvac_weekday_starting_times": (True, ClimateHvacWeekdayStartingTimes), "inside_temperature": (False, "quantity"), "ionising_state": (False, "enum"), "outside_temperature": (False, "quantity"), "passenger_temperature_setting": (False, "quantity"), "rear_temperature_setting": (False, "quantity")}


@dataclass(frozen=True, slots=True)
class Crash(Capability):
    """Crash (`crash`)."""

    automatic_ecall: Value[Literal["disabled", "enabled"]] = field(default_factory=missing)
    impact_zone: list[Value[Literal["pedestrian_protection", "rollover", "rear_passenger_side", "rear_driver_side", "side_passenger_side", "side_driver_side", "front_passenger_side", "front_driver_side"]]] = field(default_factory=list)
    incidents: list[Value[CrashIncidents]] = field(default_factory=list)
    severity: Value[int] = field(default_factory=missing)
    status: Value[Literal["normal", "restraints_engaged", "airbag_triggered"]] = field(default_factory=missing)
    tipped_state: Value[Literal["tipped_over", "not_tipped"]] = field(default_factory=missing)
    type: Value[Literal["pedestrian", "non_pedestrian"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Crash._PROPERTIES = {"automatic_ecall": (False, "enum"), "impact_zone": (True, "enum"), "incidents": (True, CrashIncidents), "severity": (False, "integer"), "status": (False, "enum"), "tipped_state": (False, "enum"), "type": (False, "enum")}


@dataclass(frozen=True, slots=True)
class CruiseControl(Capability):
    """Cruise control (`cruise_control`)."""

    acc_target_speed: Value[Quantity[SpeedUnit]] = field(default_factory=missing)
    adaptive_cruise_control: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    cruise_control: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    limiter: Value[Literal["not_set", "higher_speed_requested", "lower_speed_requested", "speed_fixed"]] = field(default_factory=missing)
    target_speed: Value[Quantity[SpeedUnit]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


CruiseControl._PROPERTIES = {"acc_target_speed": (False, "quantity"), "adaptive_cruise_control": (False, "enum"), "cruise_control": (False, "enum"), "limiter": (False, "enum"), "target_speed": (False, "quantity")}


@dataclass(frozen=True, slots=True)
class DashboardLights(Capability):
    """Dashboard lights (`dashboard_lights`)."""

    bulb_failures: list[Value[Literal["turn_signal_left", "turn_signal_right", "low_beam", "low_beam_left", "low_beam_right", "high_beam", "high_beam_left", "high_beam_right", "fog_light_front", "fog_light_rear", "stop", "position", "day_running", "trailer_turn", "trailer_turn_left", "trailer_turn_right", "trailer_stop", "trailer_electrical_failure", "multiple"]]] = field(default_factory=list)
    dashboard_lights: list[Value[DashboardLightsDashboardLights]] = field(default_factory=list)
    dynamic_warnings: list[Value[DashboardLightsDynamicWarnings]] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


DashboardLights._PROPERTIES = {"bulb_failures": (True, "enum"), "dashboard_lights": (True, DashboardLightsDashboardLights), "dynamic_warnings": (True, DashboardLightsDynamicWarnings)}


@dataclass(frozen=True, slots=True)
class Diagnostics(Capability):
    """Diagnostics (`diagnostics`)."""

    adblue_level: Value[float] = field(default_factory=missing)
    anti_lock_braking: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    backup_battery_remaining_time: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    battery_level: Value[float] = field(default_factory=missing)
    battery_voltage: Value[Quantity[ElectricPotentialDifferenceUnit]] = field(default_factory=missing)
    brake_fluid_level: Value[Literal["low", "filled", "very_low", "normal", "high", "very_high"]] = field(default_factory=missing)
    brake_lining_wear_pre_warning: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    check_control_messages: list[Value[DiagnosticsCheckControlMessages]] = field(default_factory=list)
    confirmed_trouble_codes: list[Value[DiagnosticsConfirmedTroubleCodes]] = field(default_factory=list)
    diesel_exhaust_filter_status: list[Value[DiagnosticsDieselExhaustFilterStatus]] = field(default_factory=list)
    diesel_exhaust_fluid_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    diesel_particulate_filter_soot_level: Value[float] = field(default_factory=missing)
    distance_since_reset: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    distance_since_start: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    engine_coolant_fluid_level: Value[Literal["low", "filled", "very_low", "normal", "high", "very_high"]] = field(default_factory=missing)
    engine_coolant_temperature: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    engine_load: Value[float] = field(default_factory=missing)
    engine_oil_amount: Value[Quantity[VolumeUnit]] = field(default_factory=missing)
    engine_oil_fluid_level: Value[Literal["low", "filled", "very_low", "normal", "high", "very_high"]] = field(default_factory=missing)
    engine_oil_level: Value[float] = field(default_factory=missing)
    engine_oil_life_remaining: Value[float] = field(default_factory=missing)
    engine_oil_pressure_level: Value[Literal["low", "normal", "high", "low_soft", "low_hard", "no_sensor", "system_fault"]] = field(default_factory=missing)
    engine_oil_service_status: Value[Literal["ok", "warning", "critical"]] = field(default_factory=missing)
    engine_oil_temperature: Value[Quantity[TemperatureUnit]] = field(default_factory=missing)
    engine_rpm: Value[Quantity[AngularVelocityUnit]] = field(default_factory=missing)
    engine_time_to_next_service: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    engine_torque: Value[float] = field(default_factory=missing)
    engine_total_fuel_consumption: Value[Quantity[VolumeUnit]] = field(default_factory=missing)
    engine_total_idle_operating_time: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    engine_total_operating_hours: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    engine_total_operating_time: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    estimated_mixed_powertrain_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    estimated_primary_powertrain_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    estimated_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    estimated_secondary_powertrain_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    fuel_level: Value[float] = field(default_factory=missing)
    fuel_level_accuracy: Value[Literal["measured", "calculated"]] = field(default_factory=missing)
    fuel_volume: Value[Quantity[VolumeUnit]] = field(default_factory=missing)
    low_voltage_battery_charge_level: Value[Literal["ok", "deactivation_level_1", "deactivation_level_2", "deactivation_level_3"]] = field(default_factory=missing)
    mileage: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    mileage_meters: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    odometer: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    oem_trouble_code_values: list[Value[DiagnosticsOemTroubleCodeValues]] = field(default_factory=list)
    passenger_airbag_status: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    primary_energy_level: Value[float] = field(default_factory=missing)
    secondary_energy_level: Value[float] = field(default_factory=missing)
    speed: Value[Quantity[SpeedUnit]] = field(default_factory=missing)
    tire_pressure_statuses: list[Value[DiagnosticsTirePressureStatuses]] = field(default_factory=list)
    tire_pressures: list[Value[DiagnosticsTirePressures]] = field(default_factory=list)
    tire_pressures_differences: list[Value[DiagnosticsTirePressuresDifferences]] = field(default_factory=list)
    tire_pressures_targets: list[Value[DiagnosticsTirePressuresTargets]] = field(default_factory=list)
    tire_temperatures: list[Value[DiagnosticsTireTemperatures]] = field(default_factory=list)
    trouble_codes: list[Value[DiagnosticsTroubleCodes]] = field(default_factory=list)
    washer_fluid_level: Value[Literal["low", "filled", "very_low", "normal", "high", "very_high"]] = field(default_factory=missing)
    wheel_based_speed: Value[Quantity[SpeedUnit]] = field(default_factory=missing)
    wheel_rpms: list[Value[DiagnosticsWheelRpms]] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


Diagnostics._PROPERTIES = {"adblue_level": (False, "number"), "anti_lock_braking": (False, "enum"), "backup_battery_remaining_time": (False, "quantity"), "battery_level": (False, "number"), "battery_voltage": (False, "quantity"), "brake_fluid_level": (False, "enum"), "brake_lining_wear_pre_warning": (False, "enum"), "check_control_messages": (True, DiagnosticsCheckControlMessages), "confirmed_trouble_codes": (True, DiagnosticsConfirmedTroubleCodes), "diesel_exhaust_filter_status": (True, DiagnosticsDieselExhaustFilterStatus), "diesel_exhaust_fluid_range": (False, "quantity"), "diesel_particulate_filter_soot_level": (False, "number"), "distance_since_reset": (False, "quantity"), "distance_since_start": (False, "quantity"), "engine_coolant_fluid_level": (False, "enum"), "engine_coolant_temperature": (False, "quantity"), "engine_load": (False, "number"), "engine_oil_amount": (False, "quantity"), "engine_oil_fluid_level": (False, "enum"), "engine_oil_level": (False, "number"), "engine_oil_life_remaining": (False, "number"), "engine_oil_pressure_level": (False, "enum"), "engine_oil_service_status": (False, "enum"), "engine_oil_temperature": (False, "quantity"), "engine_rpm": (False, "quantity"), "engine_time_to_next_service": (False, "quantity"), "engine_torque": (False, "number"), "engine_total_fuel_consumption": (False, "quantity"), "engine_total_idle_operating_time": (False, "quantity"), "engine_total_operating_hours": (False, "quantity"), "engine_total_operating_time": (False, "quantity"), "estimated_mixed_powertrain_range": (False, "quantity"), "estimated_primary_powertrain_range": (False, "quantity"), "estimated_range": (False, "quantity"), "estimated_secondary_powertrain_range": (False, "quantity"), "fuel_level": (False, "number"), "fuel_level_accuracy": (False, "enum"), "fuel_volume": (False, "quantity"), "low_voltage_battery_charge_level": (False, "enum"), "mileage": (False, "quantity"), "mileage_meters": (False, "quantity"), "odometer": (False, "quantity"), "oem_trouble_code_values": (True, DiagnosticsOemTroubleCodeValues), "passenger_airbag_status": (False, "enum"), "primary_energy_level": (False, "number"), "secondary_energy_level": (False, "number"), "speed": (False, "quantity"), "tire_pressure_statuses": (True, DiagnosticsTirePressureStatuses), "tire_pressures": (True, DiagnosticsTirePressures), "tire_pressures_differences": (True, DiagnosticsTirePressuresDifferences), "tire_pressures_targets": (True, DiagnosticsTirePressuresTargets), "tire_temperatures": (True, DiagnosticsTireTemperatures), "trouble_codes": (True, DiagnosticsTroubleCodes), "washer_fluid_level": (False, "enum"), "wheel_based_speed": (False, "quantity"), "wheel_rpms": (True, DiagnosticsWheelRpms)}


@dataclass(frozen=True, slots=True)
class Doors(Capability):
    """Doors (`doors`)."""

    inside_locks: list[Value[DoorsInsideLocks]] = field(default_factory=list)
    inside_locks_state: Value[Literal["unlocked", "locked"]] = field(default_factory=missing)
    locks: list[Value[DoorsLocks]] = field(default_factory=list)
    locks_state: Value[Literal["unlocked", "locked"]] = field(default_factory=missing)
    positions: list[Value[DoorsPositions]] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


Doors._PROPERTIES = {"inside_locks": (True, DoorsInsideLocks), "inside_locks_state": (False, "enum"), "locks": (True, DoorsLocks), "locks_state": (False, "enum"), "positions": (True, DoorsPositions)}


@dataclass(frozen=True, slots=True)
class Engine(Capability):
    """Engine (`engine`)."""

    limp_mode: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    preconditioning_active: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    preconditioning_enabled: Value[Literal["disabled", "enabled"]] = field(default_factory=missing)
    preconditioning_error: Value[Literal["low_fuel", "low_battery", "quota_exceeded", "heater_failure", "component_failure", "open_or_unlocked", "ok"]] = field(default_factory=missing)
    preconditioning_remaining_time: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    preconditioning_status: Value[Literal["standby", "heating", "cooling", "ventilation", "inactive"]] = field(default_factory=missing)
    start_stop_enabled: Value[Literal["disabled", "enabled"]] = field(default_factory=missing)
    start_stop_state: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    status: Value[Literal["off", "on"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Engine._PROPERTIES = {"limp_mode": (False, "enum"), "preconditioning_active": (False, "enum"), "preconditioning_enabled": (False, "enum"), "preconditioning_error": (False, "enum"), "preconditioning_remaining_time": (False, "quantity"), "preconditioning_status": (False, "enum"), "start_stop_enabled": (False, "enum"), "start_stop_state": (False, "enum"), "status": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Fueling(Capability):
    """Fueling (`fueling`)."""

    gas_flap_lock: Value[Literal["unlocked", "locked"]] = field(default_factory=missing)
    gas_flap_position: Value[Literal["closed", "open"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Fueling._PROPERTIES = {"gas_flap_lock": (False, "enum"), "gas_flap_position": (False, "enum")}


@dataclass(frozen=True, slots=True)
class HonkHornFlashLights(Capability):
    """Horn and flash lights (`honk_horn_flash_lights`)."""

    flashers: Value[Literal["inactive", "emergency_flasher_active", "left_flasher_active", "right_flasher_active"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


HonkHornFlashLights._PROPERTIES = {"flashers": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Hood(Capability):
    """Hood (`hood`)."""

    lock: Value[Literal["unlocked", "locked"]] = field(default_factory=missing)
    lock_safety: Value[Literal["safe", "unsafe"]] = field(default_factory=missing)
    position: Value[Literal["closed", "open", "intermediate"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Hood._PROPERTIES = {"lock": (False, "enum"), "lock_safety": (False, "enum"), "position": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Ignition(Capability):
    """Ignition (`ignition`)."""

    accessories_status: Value[Literal["lock", "off", "accessory", "on", "start"]] = field(default_factory=missing)
    state: Value[Literal["lock", "off", "accessory", "on", "start"]] = field(default_factory=missing)
    status: Value[Literal["lock", "off", "accessory", "on", "start"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Ignition._PROPERTIES = {"accessories_status": (False, "enum"), "state": (False, "enum"), "status": (False, "enum")}


@dataclass(frozen=True, slots=True)
class LightConditions(Capability):
    """Light conditions (`light_conditions`)."""

    inside_light: Value[Quantity[IlluminanceUnit]] = field(default_factory=missing)
    outside_light: Value[Quantity[IlluminanceUnit]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


LightConditions._PROPERTIES = {"inside_light": (False, "quantity"), "outside_light": (False, "quantity")}


@dataclass(frozen=True, slots=True)
class Lights(Capability):
    """Lights (`lights`)."""

    ambient_light_colour: Value[LightsAmbientLightColour] = field(default_factory=missing)
    emergency_brake_light: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    fog_lights: list[Value[LightsFogLights]] = field(default_factory=list)
    front_exterior_light: Value[Literal["inactive", "active", "active_with_full_beam", "drl", "automatic"]] = field(default_factory=missing)
    interior_lights: list[Value[LightsInteriorLights]] = field(default_factory=list)
    parking_light_status: Value[Literal["off", "left", "right", "both"]] = field(default_factory=missing)
    reading_lamps: list[Value[LightsReadingLamps]] = field(default_factory=list)
    rear_exterior_light: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    reverse_light: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    switch_position: Value[Literal["automatic", "dipped_headlights", "parking_light_right", "parking_light_left", "sidelights"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Lights._PROPERTIES = {"ambient_light_colour": (False, LightsAmbientLightColour), "emergency_brake_light": (False, "enum"), "fog_lights": (True, LightsFogLights), "front_exterior_light": (False, "enum"), "interior_lights": (True, LightsInteriorLights), "parking_light_status": (False, "enum"), "reading_lamps": (True, LightsReadingLamps), "rear_exterior_light": (False, "enum"), "reverse_light": (False, "enum"), "switch_position": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Maintenance(Capability):
    """Maintenance (`maintenance`)."""

    automatic_teleservice_call_date: Value[datetime] = field(default_factory=missing)
    brake_fluid_change_date: Value[datetime] = field(default_factory=missing)
    brake_fluid_remaining_distance: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    brake_fluid_status: Value[Literal["ok", "warning", "critical"]] = field(default_factory=missing)
    brakes_service_due_dates: list[Value[MaintenanceBrakesServiceDueDates]] = field(default_factory=list)
    brakes_service_remaining_distances: list[Value[MaintenanceBrakesServiceRemainingDistances]] = field(default_factory=list)
    brakes_service_statuses: list[Value[MaintenanceBrakesServiceStatuses]] = field(default_factory=list)
    cbs_reports_count: Value[int] = field(default_factory=missing)
    condition_based_services: list[Value[MaintenanceConditionBasedServices]] = field(default_factory=list)
    days_to_next_service: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    distance_to_next_oil_service: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    distance_to_next_service: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    drive_in_inspection_date: Value[datetime] = field(default_factory=missing)
    drive_in_inspection_distance_to: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    drive_in_inspection_status: Value[Literal["ok", "warning", "critical"]] = field(default_factory=missing)
    inspection_status: Value[Literal["ok", "warning", "critical"]] = field(default_factory=missing)
    kilometers_to_next_service: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    last_ecall: Value[datetime] = field(default_factory=missing)
    legal_inspection_date: Value[datetime] = field(default_factory=missing)
    months_to_exhaust_inspection: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    next_inspection_date: Value[datetime] = field(default_factory=missing)
    next_inspection_distance_to: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    next_oil_service_date: Value[datetime] = field(default_factory=missing)
    service_date: Value[datetime] = field(default_factory=missing)
    service_distance_threshold: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    service_status: Value[Literal["ok", "warning", "critical"]] = field(default_factory=missing)
    service_time_threshold: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    teleservice_availability: Value[Literal["pending", "idle", "successful", "error"]] = field(default_factory=missing)
    teleservice_battery_call_date: Value[datetime] = field(default_factory=missing)
    time_to_exhaust_inspection: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    time_to_next_oil_service: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    time_to_next_service: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    vehicle_check_date: Value[datetime] = field(default_factory=missing)
    vehicle_check_distance_to: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    vehicle_check_status: Value[Literal["ok", "warning", "critical"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Maintenance._PROPERTIES = {"automatic_teleservice_call_date": (False, "date-time"), "brake_fluid_change_date": (False, "date-time"), "brake_fluid_remaining_distance": (False, "quantity"), "brake_fluid_status": (False, "enum"), "brakes_service_due_dates": (True, MaintenanceBrakesServiceDueDates), "brakes_service_remaining_distances": (True, MaintenanceBrakesServiceRemainingDistances), "brakes_service_statuses": (True, MaintenanceBrakesServiceStatuses), "cbs_reports_count": (False, "integer"), "condition_based_services": (True, MaintenanceConditionBasedServices), "days_to_next_service": (False, "quantity"), "distance_to_next_oil_service": (False, "quantity"), "distance_to_next_service": (False, "quantity"), "drive_in_inspection_date": (False, "date-time"), "drive_in_inspection_distance_to": (False, "quantity"), "drive_in_inspection_status": (False, "enum"), "inspection_status": (False, "enum"), "kilometers_to_next_service": (False, "quantity"), "last_ecall": (False, "date-time"), "legal_inspection_date": (False, "date-time"), "months_to_exhaust_inspection": (False, "quantity"), "next_inspection_date": (False, "date-time"), "next_inspection_distance_to": (False, "quantity"), "next_oil_service_date": (False, "date-time"), "service_date": (False, "date-time"), "service_distance_threshold": (False, "quantity"), "service_status": (False, "enum"), "service_time_threshold": (False, "quantity"), "teleservice_availability": (False, "enum"), "teleservice_battery_call_date": (False, "date-time"), "time_to_exhaust_inspection": (False, "quantity"), "time_to_next_oil_service": (False, "quantity"), "time_to_next_service": (False, "quantity"), "vehicle_check_date": (False, "date-time"), "vehicle_check_distance_to": (False, "quantity"), "vehicle_check_status": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Messaging(Capability):
    """Messaging (`messaging`)."""

    handle: Value[str] = field(default_factory=missing)
    text: Value[str] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Messaging._PROPERTIES = {"handle": (False, "string"), "text": (False, "string")}


@dataclass(frozen=True, slots=True)
class Notifications(Capability):
    """Notifications (`notifications`)."""

    action_items: list[Value[NotificationsActionItems]] = field(default_factory=list)
    activated_action: Value[int] = field(default_factory=missing)
    clear: Value[Literal["clear"]] = field(default_factory=missing)
    text: Value[str] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Notifications._PROPERTIES = {"action_items": (True, NotificationsActionItems), "activated_action": (False, "integer"), "clear": (False, "enum"), "text": (False, "string")}


@dataclass(frozen=True, slots=True)
class Offroad(Capability):
    """Offroad (`offroad`)."""

    route_incline: Value[Quantity[AngleUnit]] = field(default_factory=missing)
    wheel_suspension: Value[float] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Offroad._PROPERTIES = {"route_incline": (False, "quantity"), "wheel_suspension": (False, "number")}


@dataclass(frozen=True, slots=True)
class ParkingBrake(Capability):
    """Parking brake (`parking_brake`)."""

    status: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


ParkingBrake._PROPERTIES = {"status": (False, "enum")}


@dataclass(frozen=True, slots=True)
class PowerTakeoff(Capability):
    """Power take-off (`power_takeoff`)."""

    engaged: Value[Literal["not_engaged", "engaged"]] = field(default_factory=missing)
    status: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


PowerTakeoff._PROPERTIES = {"engaged": (False, "enum"), "status": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Race(Capability):
    """Race (`race`)."""

    accelerations: list[Value[RaceAccelerations]] = field(default_factory=list)
    accelerator_durations: list[Value[RaceAcceleratorDurations]] = field(default_factory=list)
    accelerator_pedal_idle_switch: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    accelerator_pedal_kickdown_switch: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    brake_pedal_position: Value[float] = field(default_factory=missing)
    brake_pedal_switch: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    brake_pressure: Value[Quantity[PressureUnit]] = field(default_factory=missing)
    brake_torque_vectorings: list[Value[RaceBrakeTorqueVectorings]] = field(default_factory=list)
    clutch_pedal_switch: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    drivetrain_state: Value[Literal["inactive", "race_start_preparation", "race_start", "start", "comfort_start", "start_idle_run_control", "ready_for_overpressing", "low_speed_mode", "e_launch"]] = field(default_factory=missing)
    electronic_stability_program: Value[Literal["inactive", "active"]] = field(default_factory=missing)
    gas_pedal_position: Value[float] = field(default_factory=missing)
    gear_mode: Value[Literal["manual", "park", "reverse", "neutral", "drive", "low_gear", "sport"]] = field(default_factory=missing)
    oversteering: Value[float] = field(default_factory=missing)
    rear_suspension_steering: Value[Quantity[AngleUnit]] = field(default_factory=missing)
    selected_gear: Value[int] = field(default_factory=missing)
    steering_angle: Value[Quantity[AngleUnit]] = field(default_factory=missing)
    understeering: Value[float] = field(default_factory=missing)
    vehicle_moving: Value[Literal["not_moving", "moving"]] = field(default_factory=missing)
    yaw_rate: Value[Quantity[AngularVelocityUnit]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Race._PROPERTIES = {"accelerations": (True, RaceAccelerations), "accelerator_durations": (True, RaceAcceleratorDurations), "accelerator_pedal_idle_switch": (False, "enum"), "accelerator_pedal_kickdown_switch": (False, "enum"), "brake_pedal_position": (False, "number"), "brake_pedal_switch": (False, "enum"), "brake_pressure": (False, "quantity"), "brake_torque_vectorings": (True, RaceBrakeTorqueVectorings), "clutch_pedal_switch": (False, "enum"), "drivetrain_state": (False, "enum"), "electronic_stability_program": (False, "enum"), "gas_pedal_position": (False, "number"), "gear_mode": (False, "enum"), "oversteering": (False, "number"), "rear_suspension_steering": (False, "quantity"), "selected_gear": (False, "integer"), "steering_angle": (False, "quantity"), "understeering": (False, "number"), "vehicle_moving": (False, "enum"), "yaw_rate": (False, "quantity")}


@dataclass(frozen=True, slots=True)
class RemoteControl(Capability):
    """Remote control (`remote_control`)."""

    angle: Value[Quantity[AngleUnit]] = field(default_factory=missing)
    control_mode: Value[Literal["unavailable", "available", "started", "failed_to_start", "aborted", "ended"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


RemoteControl._PROPERTIES = {"angle": (False, "quantity"), "control_mode": (False, "enum")}


@dataclass(frozen=True, slots=True)
class RooftopControl(Capability):
    """Rooftop control (`rooftop_control`)."""

    convertible_roof_state: Value[Literal["closed", "open", "emergency_locked", "closed_secured", "open_secured", "hard_top_mounted", "intermediate_position", "loading_position", "loading_position_immediate"]] = field(default_factory=missing)
    dimming: Value[float] = field(default_factory=missing)
    position: Value[float] = field(default_factory=missing)
    sunroof_rain_event: Value[Literal["no_event", "in_stroke_position_because_of_rain", "automatically_in_stroke_position", "timer"]] = field(default_factory=missing)
    sunroof_state: Value[Literal["closed", "open", "intermediate"]] = field(default_factory=missing)
    sunroof_tilt_state: Value[Literal["closed", "tilted", "half_tilted"]] = field(default_factory=missing)
    tilt_position: Value[float] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


RooftopControl._PROPERTIES = {"convertible_roof_state": (False, "enum"), "dimming": (False, "number"), "position": (False, "number"), "sunroof_rain_event": (False, "enum"), "sunroof_state": (False, "enum"), "sunroof_tilt_state": (False, "enum"), "tilt_position": (False, "number")}


@dataclass(frozen=True, slots=True)
class Seats(Capability):
    """Seats (`seats`)."""

    persons_detected: list[Value[SeatsPersonsDetected]] = field(default_factory=list)
    seatbelts_state: list[Value[SeatsSeatbeltsState]] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


Seats._PROPERTIES = {"persons_detected": (True, SeatsPersonsDetected), "seatbelts_state": (True, SeatsSeatbeltsState)}


@dataclass(frozen=True, slots=True)
class TheftAlarm(Capability):
    """Theft alarm (`theft_alarm`)."""

    event_type: Value[Literal["idle", "front_left", "front_middle", "front_right", "right", "rear_right", "rear_middle", "rear_left", "left", "unknown"]] = field(default_factory=missing)
    interior_protection_status: Value[Literal["inactive_selected", "inactive_not_selected", "active"]] = field(default_factory=missing)
    interior_protection_triggered: Value[Literal["not_triggered", "triggered"]] = field(default_factory=missing)
    last_event: Value[datetime] = field(default_factory=missing)
    last_event_level: Value[Literal["low", "medium", "high"]] = field(default_factory=missing)
    last_warning_reason: Value[Literal["no_alarm", "basic_alarm", "door_front_left", "door_front_right", "door_rear_left", "door_rear_right", "hood", "trunk", "common_alm_in", "panic", "glovebox", "center_box", "rear_box", "sensor_vta", "its", "its_slv", "tps", "horn", "hold_com", "remote", "unknown", "siren"]] = field(default_factory=missing)
    status: Value[Literal["unarmed", "armed", "triggered"]] = field(default_factory=missing)
    tow_protection_status: Value[Literal["inactive_selected", "inactive_not_selected", "active"]] = field(default_factory=missing)
    tow_protection_triggered: Value[Literal["not_triggered", "triggered"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


TheftAlarm._PROPERTIES = {"event_type": (False, "enum"), "interior_protection_status": (False, "enum"), "interior_protection_triggered": (False, "enum"), "last_event": (False, "date-time"), "last_event_level": (False, "enum"), "last_warning_reason": (False, "enum"), "status": (False, "enum"), "tow_protection_status": (False, "enum"), "tow_protection_triggered": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Trunk(Capability):
    """Trunk (`trunk`)."""

    lock: Value[Literal["unlocked", "locked"]] = field(default_factory=missing)
    lock_safety: Value[Literal["safe", "unsafe"]] = field(default_factory=missing)
    position: Value[Literal["closed", "open"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Trunk._PROPERTIES = {"lock": (False, "enum"), "lock_safety": (False, "enum"), "position": (False, "enum")}


@dataclass(frozen=True, slots=True)
class Usage(Capability):
    """Usage (`usage`)."""

    acceleration_durations: list[Value[UsageAccelerationDurations]] = field(default_factory=list)
    acceleration_evaluation: Value[float] = field(default_factory=missing)
    average_fuel_consumption: Value[Quantity[FuelEfficiencyUnit]] = field(default_factory=missing)
    average_speed: Value[Quantity[SpeedUnit]] = field(default_factory=missing)
    average_speed_last_trip: Value[Quantity[SpeedUnit]] = field(default_factory=missing)
    average_speed_since_reset: Value[Quantity[SpeedUnit]] = field(default_factory=missing)
    average_weekly_distance: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    average_weekly_distance_long_run: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    braking_evaluation: Value[float] = field(default_factory=missing)
    current_fuel_consumption: Value[Quantity[FuelEfficiencyUnit]] = field(default_factory=missing)
    distance_over_time: Value[UsageDistanceOverTime] = field(default_factory=missing)
    driving_duration_last_trip: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    driving_duration_since_reset: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    driving_modes_activation_periods: list[Value[UsageDrivingModesActivationPeriods]] = field(default_factory=list)
    driving_modes_energy_consumptions: list[Value[UsageDrivingModesEnergyConsumptions]] = field(default_factory=list)
    driving_style_evaluation: Value[float] = field(default_factory=missing)
    eco_score_bonus_range: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    eco_score_constant: Value[float] = field(default_factory=missing)
    eco_score_free_wheel: Value[float] = field(default_factory=missing)
    eco_score_total: Value[float] = field(default_factory=missing)
    electric_consumption_average: Value[Quantity[EnergyEfficiencyUnit]] = field(default_factory=missing)
    electric_consumption_rate_since_reset: Value[Quantity[EnergyEfficiencyUnit]] = field(default_factory=missing)
    electric_consumption_rate_since_start: Value[Quantity[EnergyEfficiencyUnit]] = field(default_factory=missing)
    electric_distance_last_trip: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    electric_distance_since_reset: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    electric_duration_last_trip: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    electric_duration_since_reset: Value[Quantity[DurationUnit]] = field(default_factory=missing)
    fuel_consumption_rate_last_trip: Value[Quantity[FuelEfficiencyUnit]] = field(default_factory=missing)
    fuel_consumption_rate_since_reset: Value[Quantity[FuelEfficiencyUnit]] = field(default_factory=missing)
    fuel_distance_last_trip: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    fuel_distance_since_reset: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    last_trip_average_energy_recuperation: Value[Quantity[EnergyEfficiencyUnit]] = field(default_factory=missing)
    last_trip_battery_regenerated: Value[float] = field(default_factory=missing)
    last_trip_battery_remaining: Value[float] = field(default_factory=missing)
    last_trip_date: Value[datetime] = field(default_factory=missing)
    last_trip_electric_portion: Value[float] = field(default_factory=missing)
    last_trip_energy_consumption: Value[Quantity[EnergyUnit]] = field(default_factory=missing)
    last_trip_fuel_consumption: Value[Quantity[VolumeUnit]] = field(default_factory=missing)
    late_night_grade: Value[Literal["excellent", "normal", "warning"]] = field(default_factory=missing)
    mileage_after_last_trip: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    odometer_after_last_trip: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    rapid_acceleration_grade: Value[Literal["excellent", "normal", "warning"]] = field(default_factory=missing)
    rapid_deceleration_grade: Value[Literal["excellent", "normal", "warning"]] = field(default_factory=missing)
    recuperation_power: Value[Quantity[PowerUnit]] = field(default_factory=missing)
    safety_driving_score: Value[float] = field(default_factory=missing)
    trip_meters: list[Value[UsageTripMeters]] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


Usage._PROPERTIES = {"acceleration_durations": (True, UsageAccelerationDurations), "acceleration_evaluation": (False, "number"), "average_fuel_consumption": (False, "quantity"), "average_speed": (False, "quantity"), "average_speed_last_trip": (False, "quantity"), "average_speed_since_reset": (False, "quantity"), "average_weekly_distance": (False, "quantity"), "average_weekly_distance_long_run": (False, "quantity"), "braking_evaluation": (False, "number"), "current_fuel_consumption": (False, "quantity"), "distance_over_time": (False, UsageDistanceOverTime), "driving_duration_last_trip": (False, "quantity"), "driving_duration_since_reset": (False, "quantity"), "driving_modes_activation_periods": (True, UsageDrivingModesActivationPeriods), "driving_modes_energy_consumptions": (True, UsageDrivingModesEnergyConsumptions), "driving_style_evaluation": (False, "number"), "eco_score_bonus_range": (False, "quantity"), "eco_score_constant": (False, "number"), "eco_score_free_wheel": (False, "number"), "eco_score_total": (False, "number"), "electric_consumption_average": (False, "quantity"), "electric_consumption_rate_since_reset": (False, "quantity"), "electric_consumption_rate_since_start": (False, "quantity"), "electric_distance_last_trip": (False, "quantity"), "electric_distance_since_reset": (False, "quantity"), "electric_duration_last_trip": (False, "quantity"), "electric_duration_since_reset": (False, "quantity"), "fuel_consumption_rate_last_trip": (False, "quantity"), "fuel_consumption_rate_since_reset": (False, "quantity"), "fuel_distance_last_trip": (False, "quantity"), "fuel_distance_since_reset": (False, "quantity"), "last_trip_average_energy_recuperation": (False, "quantity"), "last_trip_battery_regenerated": (False, "number"), "last_trip_battery_remaining": (False, "number"), "last_trip_date": (False, "date-time"), "last_trip_electric_portion": (False, "number"), "last_trip_energy_consumption": (False, "quantity"), "last_trip_fuel_consumption": (False, "quantity"), "late_night_grade": (False, "enum"), "mileage_after_last_trip": (False, "quantity"), "odometer_after_last_trip": (False, "quantity"), "rapid_acceleration_grade": (False, "enum"), "rapid_deceleration_grade": (False, "enum"), "recuperation_power": (False, "quantity"), "safety_driving_score": (False, "number"), "trip_meters": (True, UsageTripMeters)}


@dataclass(frozen=True, slots=True)
class VehicleLocation(Capability):
    """Vehicle location (`vehicle_location`)."""

    altitude: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    coordinates: Value[VehicleLocationCoordinates] = field(default_factory=missing)
    fuzzy_coordinates: Value[VehicleLocationFuzzyCoordinates] = field(default_factory=missing)
    gps_signal_strength: Value[float] = field(default_factory=missing)
    gps_source: Value[Literal["dead_reckoning", "real", "none"]] = field(default_factory=missing)
    heading: Value[Quantity[AngleUnit]] = field(default_factory=missing)
    precision: Value[Quantity[LengthUnit]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


VehicleLocation._PROPERTIES = {"altitude": (False, "quantity"), "coordinates": (False, VehicleLocationCoordinates), "fuzzy_coordinates": (False, VehicleLocationFuzzyCoordinates), "gps_signal_strength": (False, "number"), "gps_source": (False, "enum"), "heading": (False, "quantity"), "precision": (False, "quantity")}


@dataclass(frozen=True, slots=True)
class WeatherConditions(Capability):
    """Weather conditions (`weather_conditions`)."""

    rain_intensity: Value[float] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


WeatherConditions._PROPERTIES = {"rain_intensity": (False, "number")}


@dataclass(frozen=True, slots=True)
class Windows(Capability):
    """Windows (`windows`)."""

    open_percentages: list[Value[WindowsOpenPercentages]] = field(default_factory=list)
    positions: list[Value[WindowsPositions]] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


Windows._PROPERTIES = {"open_percentages": (True, WindowsOpenPercentages), "positions": (True, WindowsPositions)}


@dataclass(frozen=True, slots=True)
class Windscreen(Capability):
    """Windscreen (`windscreen`)."""

    windscreen_damage: Value[Literal["no_impact_detected", "impact_but_no_damage_detected", "damage_smaller_than_1_inch", "damage_larger_than_1_inch"]] = field(default_factory=missing)
    windscreen_damage_confidence: Value[float] = field(default_factory=missing)
    windscreen_damage_detection_time: Value[datetime] = field(default_factory=missing)
    windscreen_damage_zone: Value[WindscreenWindscreenDamageZone] = field(default_factory=missing)
    windscreen_needs_replacement: Value[Literal["unknown", "no_replacement_needed", "replacement_needed"]] = field(default_factory=missing)
    windscreen_zone_matrix: Value[WindscreenWindscreenZoneMatrix] = field(default_factory=missing)
    wipers_intensity: Value[Literal["level_0", "level_1", "level_2", "level_3"]] = field(default_factory=missing)
    wipers_status: Value[Literal["inactive", "active", "automatic"]] = field(default_factory=missing)
    extra: Mapping[str, Any] = field(default_factory=dict)


Windscreen._PROPERTIES = {"windscreen_damage": (False, "enum"), "windscreen_damage_confidence": (False, "number"), "windscreen_damage_detection_time": (False, "date-time"), "windscreen_damage_zone": (False, WindscreenWindscreenDamageZone), "windscreen_needs_replacement": (False, "enum"), "windscreen_zone_matrix": (False, WindscreenWindscreenZoneMatrix), "wipers_intensity": (False, "enum"), "wipers_status": (False, "enum")}


@dataclass(frozen=True, slots=True)
class VehicleData(VehicleDataBase):
    """A pull answer (or a stream message's data): every capability of the
    catalog as an attribute (empty when the answer has none of it), and
    `extra` for capabilities this version of the client does not know."""

    vin: str | None = None
    brand: str | None = None
    request_id: str | None = None
    adas: Adas = field(default_factory=Adas)
    charging: Charging = field(default_factory=Charging)
    charging_session: ChargingSession = field(default_factory=ChargingSession)
    chassis_settings: ChassisSettings = field(default_factory=ChassisSettings)
    climate: Climate = field(default_factory=Climate)
    crash: Crash = field(default_factory=Crash)
    cruise_control: CruiseControl = field(default_factory=CruiseControl)
    dashboard_lights: DashboardLights = field(default_factory=DashboardLights)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    doors: Doors = field(default_factory=Doors)
    engine: Engine = field(default_factory=Engine)
    fueling: Fueling = field(default_factory=Fueling)
    honk_horn_flash_lights: HonkHornFlashLights = field(default_factory=HonkHornFlashLights)
    hood: Hood = field(default_factory=Hood)
    ignition: Ignition = field(default_factory=Ignition)
    light_conditions: LightConditions = field(default_factory=LightConditions)
    lights: Lights = field(default_factory=Lights)
    maintenance: Maintenance = field(default_factory=Maintenance)
    messaging: Messaging = field(default_factory=Messaging)
    notifications: Notifications = field(default_factory=Notifications)
    offroad: Offroad = field(default_factory=Offroad)
    parking_brake: ParkingBrake = field(default_factory=ParkingBrake)
    power_takeoff: PowerTakeoff = field(default_factory=PowerTakeoff)
    race: Race = field(default_factory=Race)
    remote_control: RemoteControl = field(default_factory=RemoteControl)
    rooftop_control: RooftopControl = field(default_factory=RooftopControl)
    seats: Seats = field(default_factory=Seats)
    theft_alarm: TheftAlarm = field(default_factory=TheftAlarm)
    trunk: Trunk = field(default_factory=Trunk)
    usage: Usage = field(default_factory=Usage)
    vehicle_location: VehicleLocation = field(default_factory=VehicleLocation)
    weather_conditions: WeatherConditions = field(default_factory=WeatherConditions)
    windows: Windows = field(default_factory=Windows)
    windscreen: Windscreen = field(default_factory=Windscreen)
    extra: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)


VehicleData._CAPABILITIES = {"adas": Adas, "charging": Charging, "charging_session": ChargingSession, "chassis_settings": ChassisSettings, "climate": Climate, "crash": Crash, "cruise_control": CruiseControl, "dashboard_lights": DashboardLights, "diagnostics": Diagnostics, "doors": Doors, "engine": Engine, "fueling": Fueling, "honk_horn_flash_lights": HonkHornFlashLights, "hood": Hood, "ignition": Ignition, "light_conditions": LightConditions, "lights": Lights, "maintenance": Maintenance, "messaging": Messaging, "notifications": Notifications, "offroad": Offroad, "parking_brake": ParkingBrake, "power_takeoff": PowerTakeoff, "race": Race, "remote_control": RemoteControl, "rooftop_control": RooftopControl, "seats": Seats, "theft_alarm": TheftAlarm, "trunk": Trunk, "usage": Usage, "vehicle_location": VehicleLocation, "weather_conditions": WeatherConditions, "windows": Windows, "windscreen": Windscreen}
