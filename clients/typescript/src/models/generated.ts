// Generated from autoport's catalog of the level-13 vehicle data interface and its vehicle commands by
// scripts/generate-models.mjs. Do not edit: run `npm run generate`.
// Every capability and property of the catalog, enums as string literal unions,
// quantities with their units; the commands with their typed arguments.

import type { Capability, ObjectValue, Quantity, Spec, Value } from "./base.js";

export type Brand = "abarth" | "alfaromeo" | "alpine" | "audi" | "bmw" | "cadillac" | "chevrolet" | "chrysler" | "citroen" | "cupra" | "dacia" | "dodge" | "ds" | "fiat" | "ford" | "honda" | "hyundai" | "iveco" | "jaguar" | "jeep" | "kia" | "lancia" | "land_rover" | "lexus" | "man" | "mazda" | "mercedes_benz" | "mini" | "mitsubishi" | "nissan" | "opel" | "peugeot" | "porsche" | "renault" | "sandbox" | "seat" | "skoda" | "smart" | "subaru" | "toyota" | "unknown" | "volkswagen" | "volvo_cars";

export type AccelerationUnit = "meters_per_second_squared" | "gravity";
export type AngleUnit = "degrees" | "radians" | "revolutions";
export type AngularVelocityUnit = "revolutions_per_minute" | "degrees_per_second" | "radians_per_second";
export type DurationUnit = "seconds" | "minutes" | "hours" | "days" | "weeks" | "months" | "milliseconds";
export type ElectricCurrentUnit = "amperes" | "milliamperes" | "kiloamperes";
export type ElectricPotentialDifferenceUnit = "volts" | "millivolts" | "kilovolts";
export type EnergyUnit = "joules" | "kilojoules" | "watt_hours" | "kilowatt_hours" | "ampere_hours";
export type EnergyEfficiencyUnit = "kwh_per_100_kilometers" | "miles_per_kwh" | "kilometers_per_kwh" | "miles_per_gallon_equivalent" | "miles_per_imperial_gallon_equivalent";
export type FuelEfficiencyUnit = "liters_per_100_kilometers" | "miles_per_imperial_gallon" | "miles_per_gallon" | "kilometers_per_liter";
export type IlluminanceUnit = "lux";
export type LengthUnit = "meters" | "millimeters" | "centimeters" | "decimeters" | "kilometers" | "megameters" | "inches" | "feet" | "yards" | "miles" | "scandinavian_miles" | "nautical_miles";
export type PowerUnit = "watts" | "milliwatts" | "kilowatts" | "megawatts" | "horsepower";
export type PressureUnit = "pascals" | "kilopascals" | "inches_of_mercury" | "bars" | "millibars" | "millimeters_of_mercury" | "pounds_force_per_square_inch";
export type SpeedUnit = "meters_per_second" | "kilometers_per_hour" | "miles_per_hour" | "knots";
export type TemperatureUnit = "kelvin" | "celsius" | "fahrenheit";
export type TorqueUnit = "newton_meters" | "newton_millimeters" | "pound_feet";
export type VolumeUnit = "liters" | "milliliters" | "centiliters" | "deciliters" | "cubic_millimeters" | "cubic_centimeters" | "cubic_decimeters" | "cubic_meters" | "cubic_inches" | "cubic_feet" | "fluid_ounces" | "gallons" | "imperial_fluid_ounces" | "imperial_gallons";

export interface AdasLaneKeepAssistsStates extends ObjectValue {
  readonly location: "left" | "right";
  readonly state: "inactive" | "active";
}

export interface AdasParkAssists extends ObjectValue {
  readonly location: "front" | "rear";
  readonly alarm: "inactive" | "active";
  readonly muted: "not_muted" | "muted";
}

export interface ChargingBatteryTemperatureExtremes extends ObjectValue {
  readonly extreme: "highest" | "lowest";
  readonly temperature: Quantity<TemperatureUnit>;
}

export interface ChargingBatteryTempretatureExtremes extends ObjectValue {
  readonly extreme: "highest" | "lowest";
  readonly temperature: Quantity<TemperatureUnit>;
}

export interface ChargingChargingRateDistance extends ObjectValue {
  readonly distance: Quantity<LengthUnit>;
  readonly time: Quantity<DurationUnit>;
}

export interface ChargingDepartureTimesTime extends ObjectValue {
  readonly hour: number;
  readonly minute: number;
}

export interface ChargingDepartureTimes extends ObjectValue {
  readonly state: "inactive" | "active";
  readonly time: ChargingDepartureTimesTime;
}

export interface ChargingFullyChargedEndTimesTime extends ObjectValue {
  readonly hour: number;
  readonly minute: number;
}

export interface ChargingFullyChargedEndTimes extends ObjectValue {
  readonly weekday: "monday" | "tuesday" | "wednesday" | "thursday" | "friday" | "saturday" | "sunday" | "automatic";
  readonly time: ChargingFullyChargedEndTimesTime;
}

export interface ChargingPreconditioningScheduledTime extends ObjectValue {
  readonly hour: number;
  readonly minute: number;
}

export interface ChargingReductionTimesTime extends ObjectValue {
  readonly hour: number;
  readonly minute: number;
}

export interface ChargingReductionTimes extends ObjectValue {
  readonly start_stop: "start" | "stop";
  readonly time: ChargingReductionTimesTime;
}

export interface ChargingRestriction extends ObjectValue {
  readonly active: "inactive" | "active";
  readonly limit: "max" | "reduced" | "min";
}

export interface ChargingTimers extends ObjectValue {
  readonly timer_type: "preferred_start_time" | "preferred_end_time" | "departure_date";
  readonly date: Date;
}

export interface ChargingSessionChargingCost extends ObjectValue {
  readonly currency: string;
  readonly calculated_charging_cost: number;
  readonly calculated_savings: number;
  readonly simulated_immediate_charging_cost: number;
}

export interface ChargingSessionLocation extends ObjectValue {
  readonly municipality: string;
  readonly formatted_address: string;
  readonly street_address: string;
}

export interface ChargingSessionPublicChargingPoints extends ObjectValue {
  readonly city: string;
  readonly postal_code: string;
  readonly street: string;
  readonly provider: string;
}

export interface ChassisSettingsCurrentSpringRates extends ObjectValue {
  readonly axle: "front" | "rear";
  readonly spring_rate: Quantity<TorqueUnit>;
}

export interface ChassisSettingsMaximumSpringRates extends ObjectValue {
  readonly axle: "front" | "rear";
  readonly spring_rate: Quantity<TorqueUnit>;
}

export interface ChassisSettingsMinimumSpringRates extends ObjectValue {
  readonly axle: "front" | "rear";
  readonly spring_rate: Quantity<TorqueUnit>;
}

export interface ClimateHvacWeekdayStartingTimesTime extends ObjectValue {
  readonly hour: number;
  readonly minute: number;
}

export interface ClimateHvacWeekdayStartingTimes extends ObjectValue {
  readonly weekday: "monday" | "tuesday" | "wednesday" | "thursday" | "friday" | "saturday" | "sunday" | "automatic";
  readonly time: ClimateHvacWeekdayStartingTimesTime;
}

export interface CrashIncidents extends ObjectValue {
  readonly location: "front" | "lateral" | "rear";
  readonly severity: "very_high" | "high" | "medium" | "low" | "unknown";
  readonly repairs: "unknown" | "needed" | "not_needed";
}

export interface DashboardLightsDashboardLights extends ObjectValue {
  readonly name: "high_beam" | "low_beam" | "hazard_warning" | "brake_failure" | "hatch_open" | "fuel_level" | "engine_coolant_temperature" | "battery_charging_condition" | "engine_oil" | "position_lights" | "front_fog_light" | "rear_fog_light" | "park_heating" | "engine_indicator" | "service_call" | "transmission_fluid_temperature" | "transmission_failure" | "anti_lock_brake_failure" | "worn_brake_linings" | "windscreen_washer_fluid" | "tire_failure" | "engine_oil_level" | "engine_coolant_level" | "steering_failure" | "esc_indication" | "brake_lights" | "adblue_level" | "fuel_filter_diff_pressure" | "seat_belt" | "advanced_braking" | "acc" | "trailer_connected" | "airbag" | "esc_switched_off" | "lane_departure_warning_off" | "air_filter_minder" | "air_suspension_ride_control_fault" | "all_wheel_drive_disabled" | "anti_theft" | "blind_spot_detection" | "charge_system_fault" | "check_fuel_cap" | "check_fuel_fill_inlet" | "check_fuel_filter" | "dc_temp_warning" | "dc_warning_status" | "diesel_engine_idle_shutdown" | "diesel_engine_warning" | "diesel_exhaust_fluid_system_fault" | "diesel_exhaust_over_temp" | "diesel_exhaust_fluid_quality" | "diesel_filter_regeneration" | "diesel_particulate_filter" | "diesel_pre_heat" | "electric_trailer_brake_connection" | "ev_battery_cell_max_volt_warning" | "ev_battery_cell_min_volt_warning" | "ev_battery_charge_energy_storage_warning" | "ev_battery_high_level_warning" | "ev_battery_high_temperature_warning" | "ev_battery_insulation_resist_warning" | "ev_battery_jump_level_warning" | "ev_battery_low_level_warning" | "ev_battery_max_volt_veh_energy_warning" | "ev_battery_min_volt_veh_energy_warning" | "ev_battery_over_charge_warning" | "ev_battery_poor_cell_warning" | "ev_battery_temp_diff_warning" | "forward_collision_warning" | "fuel_door_open" | "hill_descent_control_fault" | "hill_start_assist_warning" | "hv_interlocking_status_warning" | "lighting_system_failure" | "malfunction_indicator" | "motor_controller_temp_warning" | "park_aid_malfunction" | "passive_entry_passive_start" | "powertrain_malfunction" | "restraints_indicator_warning" | "start_stop_engine_warning" | "traction_control_disabled" | "traction_control_active" | "traction_motor_temp_warning" | "tire_pressure_monitor_system_warning" | "water_in_fuel" | "tire_warning_front_right" | "tire_warning_front_left" | "tire_warning_rear_right" | "tire_warning_rear_left" | "tire_warning_system_error" | "battery_low_warning" | "brake_fluid_warning" | "active_hood_fault" | "active_spoiler_fault" | "adjust_tire_pressure" | "steering_lock_alert" | "anti_pollution_failure_engine_start_impossible" | "anti_pollution_system_failure" | "anti_reverse_system_failing" | "auto_parking_brake" | "automatic_braking_deactive" | "automatic_braking_system_fault" | "automatic_lights_settings_failure" | "keyfob_battery_alarm" | "trunk_open" | "check_reversing_lamp" | "crossing_line_system_alert_failure" | "dipped_beam_headlamps_front_left_failure" | "dipped_beam_headlamps_front_right_failure" | "directional_headlamps_failure" | "directional_light_failure" | "dsg_failing" | "electric_mode_not_available" | "electronic_lock_failure" | "engine_control_system_failure" | "engine_oil_pressure_alert" | "esp_failure" | "excessive_oil_temperature" | "tire_front_left_flat" | "tire_front_right_flat" | "tire_rear_left_flat" | "tire_rear_right_flat" | "fog_light_front_left_failure" | "fog_light_front_right_failure" | "fog_light_rear_left_failure" | "fog_light_rear_right_failure" | "fog_light_front_fault" | "door_front_left_open" | "door_front_left_open_high_speed" | "tire_front_left_not_monitored" | "door_front_right_open" | "door_front_right_open_high_speed" | "tire_front_right_not_monitored" | "headlights_left_failure" | "headlights_right_failure" | "hybrid_system_fault" | "hybrid_system_fault_repaired_vehicle" | "hydraulic_pressure_or_brake_fluid_insufficient" | "lane_departure_fault" | "limited_visibility_aids_camera" | "tire_pressure_low" | "maintenance_date_exceeded" | "maintenance_odometer_exceeded" | "other_failing_system" | "parking_brake_control_failing" | "parking_space_measuring_system_failure" | "place_gear_to_parking" | "power_steering_assistance_failure" | "power_steering_failure" | "preheating_deactivated_battery_too_low" | "preheating_deactivated_fuel_level_too_low" | "preheating_deactivated_battery_set_the_clock" | "fog_light_rear_fault" | "door_rear_left_open" | "door_rear_left_open_high_speed" | "tire_rear_left_not_monitored" | "door_rear_right_open" | "door_rear_right_open_high_speed" | "tire_rear_right_not_monitored" | "screen_rear_open" | "retractable_roof_mechanism_fault" | "reverse_light_left_failure" | "reverse_light_right_failure" | "risk_of_ice" | "roof_operation_impossible_apply_parking_break" | "roof_operation_impossible_apply_start_engine" | "roof_operation_impossible_temperature_too_high" | "seatbelt_passenger_front_right_unbuckled" | "seatbelt_passenger_rear_left_unbuckled" | "seatbelt_passenger_rear_center_unbuckled" | "seatbelt_passenger_rear_right_unbuckled" | "battery_secondary_low" | "shock_sensor_failing" | "side_lights_front_left_failure" | "side_lights_front_right_failure" | "side_lights_rear_left_failure" | "side_lights_rear_right_failure" | "spare_wheel_fitter_driving_aids_deactivated" | "speed_control_failure" | "stop_light_left_failure" | "stop_light_right_failure" | "suspension_failure" | "suspension_failure_reduce_speed" | "suspension_fault_limited_to_90kmh" | "tire_pressure_sensor_failure" | "trunk_open_high_speed" | "trunk_window_open" | "turn_signal_front_left_failure" | "turn_signal_front_right_failure" | "turn_signal_rear_left_failure" | "turn_signal_rear_right_failure" | "tire_under_inflation" | "wheel_pressure_fault" | "oil_change_warning" | "inspection_warning" | "diesel_oil_filter_water_presence" | "engine_drag_torque_control_failure" | "high_beam_left_failure" | "high_beam_right_failure" | "daytime_running_light_left_failure" | "daytime_running_light_right_failure" | "side_mark_lights_failure" | "licence_plate_light_failure";
  readonly state: "off" | "on";
}

export interface DashboardLightsDynamicWarnings extends ObjectValue {
  readonly category: string;
  readonly id: string;
  readonly description: string;
}

export interface DiagnosticsCheckControlMessages extends ObjectValue {
  readonly id: number;
  readonly remaining_time: Quantity<DurationUnit>;
  readonly text: string;
  readonly status: string;
}

export interface DiagnosticsConfirmedTroubleCodes extends ObjectValue {
  readonly id: string;
  readonly ecu_address: string;
  readonly ecu_variant_name: string;
  readonly status: string;
}

export interface DiagnosticsDieselExhaustFilterStatus extends ObjectValue {
  readonly status: "unknown" | "normal_operation" | "overloaded" | "at_limit" | "over_limit";
  readonly component: "unknown" | "exhaust_filter" | "diesel_particulate_filter" | "overboost_code_regulator" | "off_board_regeneration";
  readonly cleaning: "unknown" | "in_progress" | "complete" | "interrupted";
}

export interface DiagnosticsOemTroubleCodeValuesKeyValue extends ObjectValue {
  readonly key: string;
  readonly value: string;
}

export interface DiagnosticsOemTroubleCodeValues extends ObjectValue {
  readonly id: string;
  readonly key_value: DiagnosticsOemTroubleCodeValuesKeyValue;
}

export interface DiagnosticsTirePressureStatuses extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_right_outer" | "rear_left_outer" | "spare";
  readonly status: "normal" | "low" | "alert" | "soft" | "deflation";
}

export interface DiagnosticsTirePressures extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_right_outer" | "rear_left_outer" | "spare";
  readonly pressure: Quantity<PressureUnit>;
}

export interface DiagnosticsTirePressuresDifferences extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_right_outer" | "rear_left_outer" | "spare";
  readonly pressure: Quantity<PressureUnit>;
}

export interface DiagnosticsTirePressuresTargets extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_right_outer" | "rear_left_outer" | "spare";
  readonly pressure: Quantity<PressureUnit>;
}

export interface DiagnosticsTireTemperatures extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_right_outer" | "rear_left_outer" | "spare";
  readonly temperature: Quantity<TemperatureUnit>;
}

export interface DiagnosticsTroubleCodes extends ObjectValue {
  readonly occurrences: number;
  readonly id: string;
  readonly ecu_id: string;
  readonly status: string;
  readonly system: "unknown" | "body" | "chassis" | "powertrain" | "network";
}

export interface DiagnosticsWheelRpms extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_right_outer" | "rear_left_outer" | "spare";
  readonly rpm: Quantity<AngularVelocityUnit>;
}

export interface DoorsInsideLocks extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left";
  readonly lock_state: "unlocked" | "locked";
}

export interface DoorsLocks extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left";
  readonly lock_state: "unlocked" | "locked";
}

export interface DoorsPositions extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "all";
  readonly position: "closed" | "open";
}

export interface LightsAmbientLightColour extends ObjectValue {
  readonly red: number;
  readonly green: number;
  readonly blue: number;
}

export interface LightsFogLights extends ObjectValue {
  readonly location: "front" | "rear";
  readonly state: "inactive" | "active";
}

export interface LightsInteriorLights extends ObjectValue {
  readonly location: "front" | "rear";
  readonly state: "inactive" | "active";
}

export interface LightsReadingLamps extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left";
  readonly state: "inactive" | "active";
}

export interface MaintenanceBrakesServiceDueDates extends ObjectValue {
  readonly axle: "front" | "rear";
  readonly due_date: Date;
}

export interface MaintenanceBrakesServiceRemainingDistances extends ObjectValue {
  readonly axle: "front" | "rear";
  readonly distance: Quantity<LengthUnit>;
}

export interface MaintenanceBrakesServiceStatuses extends ObjectValue {
  readonly axle: "front" | "rear";
  readonly status: "ok" | "warning" | "critical";
}

export interface MaintenanceConditionBasedServices extends ObjectValue {
  readonly year: number;
  readonly month: number;
  readonly id: number;
  readonly due_status: "ok" | "pending" | "overdue";
  readonly text: string;
  readonly description: string;
}

export interface NotificationsActionItems extends ObjectValue {
  readonly id: number;
  readonly name: string;
}

export interface RaceAccelerations extends ObjectValue {
  readonly direction: "longitudinal" | "lateral" | "front_lateral" | "rear_lateral";
  readonly acceleration: Quantity<AccelerationUnit>;
}

export interface RaceAcceleratorDurations extends ObjectValue {
  readonly pedal_position_threshold: number;
  readonly duration: Quantity<DurationUnit>;
}

export interface RaceBrakeTorqueVectorings extends ObjectValue {
  readonly axle: "front" | "rear";
  readonly state: "inactive" | "active";
}

export interface SeatsPersonsDetected extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_center" | "driver" | "passenger";
  readonly detected: "not_detected" | "detected";
}

export interface SeatsSeatbeltsState extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "rear_center" | "driver" | "passenger";
  readonly fastened_state: "not_fastened" | "fastened";
}

export interface UsageAccelerationDurations extends ObjectValue {
  readonly direction: "longitudinal" | "lateral";
  readonly type: "regular" | "positive_outlier" | "negative_outlier";
  readonly duration: Quantity<DurationUnit>;
}

export interface UsageDistanceOverTime extends ObjectValue {
  readonly distance: Quantity<LengthUnit>;
  readonly time: Quantity<DurationUnit>;
}

export interface UsageDrivingModesActivationPeriods extends ObjectValue {
  readonly driving_mode: "regular" | "eco" | "sport" | "sport_plus" | "eco_plus" | "comfort";
  readonly period: number;
}

export interface UsageDrivingModesEnergyConsumptions extends ObjectValue {
  readonly driving_mode: "regular" | "eco" | "sport" | "sport_plus" | "eco_plus" | "comfort";
  readonly consumption: Quantity<EnergyUnit>;
}

export interface UsageTripMeters extends ObjectValue {
  readonly id: number;
  readonly distance: Quantity<LengthUnit>;
}

export interface VehicleLocationCoordinates extends ObjectValue {
  readonly latitude: number;
  readonly longitude: number;
}

export interface VehicleLocationFuzzyCoordinates extends ObjectValue {
  readonly latitude: number;
  readonly longitude: number;
}

export interface WindowsOpenPercentages extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "hatch";
  readonly open_percentage: number;
}

export interface WindowsPositions extends ObjectValue {
  readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "hatch";
  readonly position: "closed" | "open" | "intermediate";
}

export interface WindscreenWindscreenDamageZone extends ObjectValue {
  readonly horizontal: number;
  readonly vertical: number;
}

export interface WindscreenWindscreenZoneMatrix extends ObjectValue {
  readonly horizontal: number;
  readonly vertical: number;
}

/** Driver assistance (ADAS) (`adas`). */
export interface Adas extends Capability {
  /** Alertness system status */
  readonly alertness_system_status: Value<"inactive" | "active">;
  /** Automated parking brake */
  readonly automated_parking_brake: Value<"inactive" | "active">;
  /** Blind spot warning state */
  readonly blind_spot_warning_state: Value<"inactive" | "active">;
  /** Blind spot warning system */
  readonly blind_spot_warning_system: Value<"off" | "on">;
  /** Blind spot warning system coverage */
  readonly blind_spot_warning_system_coverage: Value<"regular" | "trailer">;
  /** Forward collision warning system */
  readonly forward_collision_warning_system: Value<"inactive" | "active">;
  /** Lane keep assist system */
  readonly lane_keep_assist_system: Value<"off" | "on">;
  /** Lane keep assists states */
  readonly lane_keep_assists_states: readonly Value<AdasLaneKeepAssistsStates>[];
  /** Launch control */
  readonly launch_control: Value<"inactive" | "active">;
  /** Park assists */
  readonly park_assists: readonly Value<AdasParkAssists>[];
  /** Rear cross warning system */
  readonly rear_cross_warning_system: Value<"inactive" | "active">;
  /** Status */
  readonly status: Value<"off" | "on">;
}

/** Charging (`charging`). */
export interface Charging extends Capability {
  /** Acoustic limit */
  readonly acoustic_limit: Value<"no_action" | "automatic" | "unlimited" | "limited">;
  /** Auxiliary power */
  readonly auxiliary_power: Value<Quantity<PowerUnit>>;
  /** Battery capacity */
  readonly battery_capacity: Value<Quantity<EnergyUnit>>;
  /** Battery charge transfer event */
  readonly battery_charge_transfer_event: Value<"low_voltage_battery_service_required" | "low_voltage_battery_high_usage" | "vehicle_service_required">;
  /** Battery charge type */
  readonly battery_charge_type: Value<"no_charge" | "normal" | "accelerated" | "fast" | "quick" | "ultra_fast" | "not_used" | "vehicle_to_home" | "vehicle_to_grid">;
  /** Battery cooling temperature */
  readonly battery_cooling_temperature: Value<Quantity<TemperatureUnit>>;
  /** Battery current */
  readonly battery_current: Value<Quantity<ElectricCurrentUnit>>;
  /** Battery current (AC) */
  readonly battery_current_ac: Value<Quantity<ElectricCurrentUnit>>;
  /** Battery current (DC) */
  readonly battery_current_dc: Value<Quantity<ElectricCurrentUnit>>;
  /** Battery energy */
  readonly battery_energy: Value<Quantity<EnergyUnit>>;
  /** Battery energy chargeable */
  readonly battery_energy_chargable: Value<Quantity<EnergyUnit>>;
  /** Battery LED */
  readonly battery_led: Value<"no_colour" | "white" | "yellow" | "green" | "red" | "yellow_pulsing" | "green_pulsing" | "red_pulsing" | "green_red_pulsing" | "green_flashing" | "initialising" | "error" | "blue">;
  /** Battery level */
  readonly battery_level: Value<number>;
  /** Battery level at departure */
  readonly battery_level_at_departure: Value<number>;
  /** Battery max available */
  readonly battery_max_available: Value<Quantity<EnergyUnit>>;
  /** Battery performance status */
  readonly battery_performance_status: Value<"normal" | "caution" | "reduced" | "severly_reduced">;
  /** Battery status */
  readonly battery_status: Value<"inactive" | "active" | "balancing" | "external_load" | "load" | "error" | "initialising" | "conditioning">;
  /** Battery temperature */
  readonly battery_temperature: Value<Quantity<TemperatureUnit>>;
  /** Battery temperature control demand */
  readonly battery_temperature_control_demand: Value<"high_cooling" | "medium_cooling" | "low_cooling" | "no_temperature_requirement" | "low_heating" | "medium_heating" | "high_heating" | "circulation_requirement">;
  /** Battery temperature extremes */
  readonly battery_temperature_extremes: Value<ChargingBatteryTemperatureExtremes>;
  /** Battery temperature extremes (old spelling) */
  readonly battery_tempretature_extremes: Value<ChargingBatteryTempretatureExtremes>;
  /** Battery voltage */
  readonly battery_voltage: Value<Quantity<ElectricPotentialDifferenceUnit>>;
  /** Charge limit */
  readonly charge_limit: Value<number>;
  /** Charge mode */
  readonly charge_mode: Value<"immediate" | "timer_based" | "inductive" | "conductive" | "push_button">;
  /** Charge port state */
  readonly charge_port_state: Value<"closed" | "open">;
  /** Charger power */
  readonly charger_power: Value<Quantity<PowerUnit>>;
  /** Charger voltage */
  readonly charger_voltage: Value<Quantity<ElectricPotentialDifferenceUnit>>;
  /** Charger voltage (AC) */
  readonly charger_voltage_ac: Value<Quantity<ElectricPotentialDifferenceUnit>>;
  /** Charger voltage (DC) */
  readonly charger_voltage_dc: Value<Quantity<ElectricPotentialDifferenceUnit>>;
  /** Charging complete lock */
  readonly charging_complete_lock: Value<"inactive" | "active">;
  /** Charging current */
  readonly charging_current: Value<Quantity<ElectricCurrentUnit>>;
  /** Charging end reason */
  readonly charging_end_reason: Value<"unknown" | "goal_reached" | "requested_by_driver" | "connector_removed" | "powergrid_failed" | "hv_system_failure" | "charging_station_failure" | "parking_lock_failed" | "no_parking_lock" | "signal_invalid">;
  /** Charging phases */
  readonly charging_phases: Value<"no_charging" | "one" | "two" | "three">;
  /** Charging rate */
  readonly charging_rate: Value<Quantity<PowerUnit>>;
  /** Charging rate distance */
  readonly charging_rate_distance: Value<ChargingChargingRateDistance>;
  /** Charging rate (kW) */
  readonly charging_rate_kw: Value<Quantity<PowerUnit>>;
  /** Charging scenario */
  readonly charging_scenario: Value<"off" | "charging_to_departure_time_finished" | "immediately_charging_finished" | "optimised_charging_finished" | "charging_to_departure_time_active" | "immediately_charging_active" | "optimised_charging_active" | "charging_to_departure_time_waiting" | "optimised_charging_waiting" | "no_grid_voltage" | "error_lock" | "error_charging_system" | "initialization_charging_communication" | "immediately_optimised_charging_active" | "immediately_optimised_charging_finished" | "emergency_charging" | "charging_interrupt_by_user" | "plug_releasable">;
  /** Charging single immediate */
  readonly charging_single_immediate: Value<"inactive" | "active">;
  /** Charging time display */
  readonly charging_time_display: Value<"no_display" | "display_duration" | "no_display_duration">;
  /** Charging window chosen */
  readonly charging_window_chosen: Value<"not_chosen" | "chosen">;
  /** Conserving charge */
  readonly conserving_charge: Value<"inactive" | "active">;
  /** Current limit */
  readonly current_limit: Value<Quantity<ElectricCurrentUnit>>;
  /** Current type */
  readonly current_type: Value<"alternating_current" | "direct_current" | "wireless">;
  /** Departure time display */
  readonly departure_time_display: Value<"no_display" | "reachable" | "not_reachable">;
  /** Departure times */
  readonly departure_times: readonly Value<ChargingDepartureTimes>[];
  /** Distance to complete charge */
  readonly distance_to_complete_charge: Value<Quantity<LengthUnit>>;
  /** Driving mode PHEV */
  readonly driving_mode_phev: Value<"not_in_traction" | "in_charge" | "full_electric" | "hybrid_serial" | "thermic" | "hybrid_parallel">;
  /** Estimated range */
  readonly estimated_range: Value<Quantity<LengthUnit>>;
  /** Estimated range target */
  readonly estimated_range_target: Value<Quantity<LengthUnit>>;
  /** Flap lock status */
  readonly flap_lock_status: Value<"unlocked" | "locked">;
  /** Fully charged end times */
  readonly fully_charged_end_times: Value<ChargingFullyChargedEndTimes>;
  /** Hybrid operating mode */
  readonly hybrid_operating_mode: Value<"auto_charge_deplete" | "auto_charge_sustain" | "forced_charge_sustain" | "forced_electric" | "forced_non_electric" | "temporary_charge_sustain" | "prioritize_charge_generation">;
  /** Limit status */
  readonly limit_status: Value<"inactive" | "active">;
  /** Maximum charging current */
  readonly max_charging_current: Value<Quantity<ElectricCurrentUnit>>;
  /** Max range */
  readonly max_range: Value<Quantity<LengthUnit>>;
  /** Minimum charging current */
  readonly min_charging_current: Value<Quantity<ElectricCurrentUnit>>;
  /** Plug lock status */
  readonly plug_lock_status: Value<"unlocked" | "locked">;
  /** Plug type */
  readonly plug_type: Value<"type_1" | "type_2" | "ccs" | "chademo">;
  /** Plugged in */
  readonly plugged_in: Value<"disconnected" | "plugged_in" | "plugged_in_both_sides">;
  /** Preconditioning departure enabled */
  readonly preconditioning_departure_enabled: Value<"disabled" | "enabled">;
  /** Preconditioning departure status */
  readonly preconditioning_departure_status: Value<"inactive" | "active">;
  /** Preconditioning error */
  readonly preconditioning_error: Value<"no_change" | "not_possible_low" | "not_possible_finished" | "available_after_engine_restart" | "general_error">;
  /** Preconditioning immediate status */
  readonly preconditioning_immediate_status: Value<"inactive" | "active">;
  /** Preconditioning remaining time */
  readonly preconditioning_remaining_time: Value<Quantity<DurationUnit>>;
  /** Preconditioning scheduled time */
  readonly preconditioning_scheduled_time: Value<ChargingPreconditioningScheduledTime>;
  /** Reduction of charging times */
  readonly reduction_times: readonly Value<ChargingReductionTimes>[];
  /** Restriction */
  readonly restriction: Value<ChargingRestriction>;
  /** Smart charging option */
  readonly smart_charging_option: Value<"price_optimized" | "renewable_energy" | "co2_optimized">;
  /** Smart charging status */
  readonly smart_charging_status: Value<"wallbox_is_active" | "scc_is_active" | "peak_setting_active">;
  /** Starter battery state */
  readonly starter_battery_state: Value<"red" | "yellow" | "green" | "orange" | "green_yellow">;
  /** State of health */
  readonly state_of_health: Value<number>;
  /** Station displayed status */
  readonly station_displayed_status: Value<"not_plugged_in" | "fault" | "station_not_compatible" | "station_not_detected" | "in_progress" | "scheduled" | "paused" | "stopped" | "completed" | "discharging" | "not_ready">;
  /** Station power type */
  readonly station_power_type: Value<"ac_basic" | "ac_smart" | "dc_fast" | "wireless">;
  /** Station status */
  readonly station_status: Value<"not_compatible" | "not_detected" | "digital_communication_established" | "digital_communication_ended" | "station_ready" | "active" | "initialising" | "fault" | "inactive">;
  /** Status */
  readonly status: Value<"not_charging" | "charging" | "charging_complete" | "initialising" | "charging_paused" | "charging_error" | "cable_unplugged" | "slow_charging" | "fast_charging" | "discharging" | "foreign_object_detected" | "conditioning" | "flap_open" | "ready_for_charging">;
  /** Time to complete charge */
  readonly time_to_complete_charge: Value<Quantity<DurationUnit>>;
  /** Timers */
  readonly timers: readonly Value<ChargingTimers>[];
}

/** Charging session (`charging_session`). */
export interface ChargingSession extends Capability {
  /** Business errors */
  readonly business_errors: readonly Value<string>[];
  /** Calculated energy charged */
  readonly calculated_energy_charged: Value<Quantity<EnergyUnit>>;
  /** Charging cost */
  readonly charging_cost: Value<ChargingSessionChargingCost>;
  /** Displayed start state of charge */
  readonly displayed_start_state_of_charge: Value<number>;
  /** Displayed state of charge */
  readonly displayed_state_of_charge: Value<number>;
  /** End time */
  readonly end_time: Value<Date>;
  /** Energy charged */
  readonly energy_charged: Value<Quantity<EnergyUnit>>;
  /** Location */
  readonly location: Value<ChargingSessionLocation>;
  /** Odometer */
  readonly odometer: Value<Quantity<LengthUnit>>;
  /** Preconditioning state */
  readonly preconditioning_state: Value<"inactive" | "active">;
  /** Public charging points */
  readonly public_charging_points: readonly Value<ChargingSessionPublicChargingPoints>[];
  /** Start time */
  readonly start_time: Value<Date>;
  /** Time zone */
  readonly time_zone: Value<string>;
  /** Total charging duration */
  readonly total_charging_duration: Value<Quantity<DurationUnit>>;
}

/** Chassis settings (`chassis_settings`). */
export interface ChassisSettings extends Capability {
  /** Current chassis position */
  readonly current_chassis_position: Value<Quantity<LengthUnit>>;
  /** Current spring rates */
  readonly current_spring_rates: readonly Value<ChassisSettingsCurrentSpringRates>[];
  /** Driving mode */
  readonly driving_mode: Value<"regular" | "eco" | "sport" | "sport_plus" | "eco_plus" | "comfort">;
  /** Maximum chassis position */
  readonly maximum_chassis_position: Value<Quantity<LengthUnit>>;
  /** Maximum spring rates */
  readonly maximum_spring_rates: readonly Value<ChassisSettingsMaximumSpringRates>[];
  /** Minimum chassis position */
  readonly minimum_chassis_position: Value<Quantity<LengthUnit>>;
  /** Minimum spring rates */
  readonly minimum_spring_rates: readonly Value<ChassisSettingsMinimumSpringRates>[];
  /** Sport chrono */
  readonly sport_chrono: Value<"inactive" | "active" | "reset">;
}

/** Climate (`climate`). */
export interface Climate extends Capability {
  /** Air conditioner compressor power */
  readonly air_conditioner_compressor_power: Value<Quantity<PowerUnit>>;
  /** Defogging state */
  readonly defogging_state: Value<"inactive" | "active">;
  /** Defrosting state */
  readonly defrosting_state: Value<"inactive" | "active">;
  /** Defrosting temperature setting */
  readonly defrosting_temperature_setting: Value<Quantity<TemperatureUnit>>;
  /** Driver temperature setting */
  readonly driver_temperature_setting: Value<Quantity<TemperatureUnit>>;
  /** Humidity */
  readonly humidity: Value<number>;
  /** HVAC state */
  readonly hvac_state: Value<"inactive" | "active">;
  /** HVAC weekday starting times */
  readonly hvac_weekday_starting_times: readonly Value<ClimateHvacWeekdayStartingTimes>[];
  /** Inside temperature */
  readonly inside_temperature: Value<Quantity<TemperatureUnit>>;
  /** Ionising state */
  readonly ionising_state: Value<"inactive" | "active">;
  /** Outside temperature */
  readonly outside_temperature: Value<Quantity<TemperatureUnit>>;
  /** Passenger temperature setting */
  readonly passenger_temperature_setting: Value<Quantity<TemperatureUnit>>;
  /** Rear temperature setting */
  readonly rear_temperature_setting: Value<Quantity<TemperatureUnit>>;
}

/** Crash (`crash`). */
export interface Crash extends Capability {
  /** Automatic eCall */
  readonly automatic_ecall: Value<"disabled" | "enabled">;
  /** Impact zone */
  readonly impact_zone: readonly Value<"pedestrian_protection" | "rollover" | "rear_passenger_side" | "rear_driver_side" | "side_passenger_side" | "side_driver_side" | "front_passenger_side" | "front_driver_side">[];
  /** Incidents */
  readonly incidents: readonly Value<CrashIncidents>[];
  /** Severity */
  readonly severity: Value<number>;
  /** Status */
  readonly status: Value<"normal" | "restraints_engaged" | "airbag_triggered">;
  /** Tipped state */
  readonly tipped_state: Value<"tipped_over" | "not_tipped">;
  /** Type */
  readonly type: Value<"pedestrian" | "non_pedestrian">;
}

/** Cruise control (`cruise_control`). */
export interface CruiseControl extends Capability {
  /** Adaptive Cruise Control (ACC) target speed */
  readonly acc_target_speed: Value<Quantity<SpeedUnit>>;
  /** Adaptive Cruise Control */
  readonly adaptive_cruise_control: Value<"inactive" | "active">;
  /** Cruise control */
  readonly cruise_control: Value<"inactive" | "active">;
  /** Limiter */
  readonly limiter: Value<"not_set" | "higher_speed_requested" | "lower_speed_requested" | "speed_fixed">;
  /** Target speed */
  readonly target_speed: Value<Quantity<SpeedUnit>>;
}

/** Dashboard lights (`dashboard_lights`). */
export interface DashboardLights extends Capability {
  /** Bulb failures */
  readonly bulb_failures: readonly Value<"turn_signal_left" | "turn_signal_right" | "low_beam" | "low_beam_left" | "low_beam_right" | "high_beam" | "high_beam_left" | "high_beam_right" | "fog_light_front" | "fog_light_rear" | "stop" | "position" | "day_running" | "trailer_turn" | "trailer_turn_left" | "trailer_turn_right" | "trailer_stop" | "trailer_electrical_failure" | "multiple">[];
  /** Dashboard lights */
  readonly dashboard_lights: readonly Value<DashboardLightsDashboardLights>[];
  /** Dynamic warnings */
  readonly dynamic_warnings: readonly Value<DashboardLightsDynamicWarnings>[];
}

/** Diagnostics (`diagnostics`). */
export interface Diagnostics extends Capability {
  /** AdBlue level */
  readonly adblue_level: Value<number>;
  /** Anti-lock braking system (ABS) */
  readonly anti_lock_braking: Value<"inactive" | "active">;
  /** Backup battery remaining time */
  readonly backup_battery_remaining_time: Value<Quantity<DurationUnit>>;
  /** Battery level */
  readonly battery_level: Value<number>;
  /** Battery voltage */
  readonly battery_voltage: Value<Quantity<ElectricPotentialDifferenceUnit>>;
  /** Brake fluid level */
  readonly brake_fluid_level: Value<"low" | "filled" | "very_low" | "normal" | "high" | "very_high">;
  /** Brake lining wear pre-warning */
  readonly brake_lining_wear_pre_warning: Value<"inactive" | "active">;
  /** Check control messages */
  readonly check_control_messages: readonly Value<DiagnosticsCheckControlMessages>[];
  /** Confirmed trouble codes */
  readonly confirmed_trouble_codes: readonly Value<DiagnosticsConfirmedTroubleCodes>[];
  /** Diesel exhaust filter status */
  readonly diesel_exhaust_filter_status: readonly Value<DiagnosticsDieselExhaustFilterStatus>[];
  /** Diesel exhaust fluid range */
  readonly diesel_exhaust_fluid_range: Value<Quantity<LengthUnit>>;
  /** Diesel particulate filter soot level */
  readonly diesel_particulate_filter_soot_level: Value<number>;
  /** Distance since reset */
  readonly distance_since_reset: Value<Quantity<LengthUnit>>;
  /** Distance since start */
  readonly distance_since_start: Value<Quantity<LengthUnit>>;
  /** Engine coolant fluid level */
  readonly engine_coolant_fluid_level: Value<"low" | "filled" | "very_low" | "normal" | "high" | "very_high">;
  /** Engine coolant temperature */
  readonly engine_coolant_temperature: Value<Quantity<TemperatureUnit>>;
  /** Engine load */
  readonly engine_load: Value<number>;
  /** Engine oil amount */
  readonly engine_oil_amount: Value<Quantity<VolumeUnit>>;
  /** Engine oil fluid level */
  readonly engine_oil_fluid_level: Value<"low" | "filled" | "very_low" | "normal" | "high" | "very_high">;
  /** Engine oil level */
  readonly engine_oil_level: Value<number>;
  /** Engine oil life remaining */
  readonly engine_oil_life_remaining: Value<number>;
  /** Engine oil pressure level */
  readonly engine_oil_pressure_level: Value<"low" | "normal" | "high" | "low_soft" | "low_hard" | "no_sensor" | "system_fault">;
  /** Engine oil service status */
  readonly engine_oil_service_status: Value<"ok" | "warning" | "critical">;
  /** Engine oil temperature */
  readonly engine_oil_temperature: Value<Quantity<TemperatureUnit>>;
  /** Engine RPM */
  readonly engine_rpm: Value<Quantity<AngularVelocityUnit>>;
  /** Engine time to next service */
  readonly engine_time_to_next_service: Value<Quantity<DurationUnit>>;
  /** Engine torque */
  readonly engine_torque: Value<number>;
  /** Engine total fuel consumption */
  readonly engine_total_fuel_consumption: Value<Quantity<VolumeUnit>>;
  /** Engine total idle operation time */
  readonly engine_total_idle_operating_time: Value<Quantity<DurationUnit>>;
  /** Engine total operation hours */
  readonly engine_total_operating_hours: Value<Quantity<DurationUnit>>;
  /** Engine total operation time */
  readonly engine_total_operating_time: Value<Quantity<DurationUnit>>;
  /** Estimated mixed powertrain range */
  readonly estimated_mixed_powertrain_range: Value<Quantity<LengthUnit>>;
  /** Estimated primary powertrain range */
  readonly estimated_primary_powertrain_range: Value<Quantity<LengthUnit>>;
  /** Estimated range */
  readonly estimated_range: Value<Quantity<LengthUnit>>;
  /** Estimated secondary powertrain range */
  readonly estimated_secondary_powertrain_range: Value<Quantity<LengthUnit>>;
  /** Fuel level */
  readonly fuel_level: Value<number>;
  /** Fuel level accuracy */
  readonly fuel_level_accuracy: Value<"measured" | "calculated">;
  /** Fuel volume */
  readonly fuel_volume: Value<Quantity<VolumeUnit>>;
  /** Low voltage battery charge level */
  readonly low_voltage_battery_charge_level: Value<"ok" | "deactivation_level_1" | "deactivation_level_2" | "deactivation_level_3">;
  /** Mileage */
  readonly mileage: Value<Quantity<LengthUnit>>;
  /** Mileage meters */
  readonly mileage_meters: Value<Quantity<LengthUnit>>;
  /** Odometer */
  readonly odometer: Value<Quantity<LengthUnit>>;
  /** OEM trouble code values */
  readonly oem_trouble_code_values: readonly Value<DiagnosticsOemTroubleCodeValues>[];
  /** Passenger airbag status */
  readonly passenger_airbag_status: Value<"inactive" | "active">;
  /** Primary energy level */
  readonly primary_energy_level: Value<number>;
  /** Secondary energy level */
  readonly secondary_energy_level: Value<number>;
  /** Speed */
  readonly speed: Value<Quantity<SpeedUnit>>;
  /** Tire pressure statuses */
  readonly tire_pressure_statuses: readonly Value<DiagnosticsTirePressureStatuses>[];
  /** Tire pressures */
  readonly tire_pressures: readonly Value<DiagnosticsTirePressures>[];
  /** Tire pressures differences */
  readonly tire_pressures_differences: readonly Value<DiagnosticsTirePressuresDifferences>[];
  /** Tire pressures targets */
  readonly tire_pressures_targets: readonly Value<DiagnosticsTirePressuresTargets>[];
  /** Tire temperatures */
  readonly tire_temperatures: readonly Value<DiagnosticsTireTemperatures>[];
  /** Trouble codes */
  readonly trouble_codes: readonly Value<DiagnosticsTroubleCodes>[];
  /** Washer fluid level */
  readonly washer_fluid_level: Value<"low" | "filled" | "very_low" | "normal" | "high" | "very_high">;
  /** Wheel based speed */
  readonly wheel_based_speed: Value<Quantity<SpeedUnit>>;
  /** Wheel RPMs */
  readonly wheel_rpms: readonly Value<DiagnosticsWheelRpms>[];
}

/** Doors (`doors`). */
export interface Doors extends Capability {
  /** Inside locks */
  readonly inside_locks: readonly Value<DoorsInsideLocks>[];
  /** Inside locks state */
  readonly inside_locks_state: Value<"unlocked" | "locked">;
  /** Locks */
  readonly locks: readonly Value<DoorsLocks>[];
  /** Locks state */
  readonly locks_state: Value<"unlocked" | "locked">;
  /** Positions */
  readonly positions: readonly Value<DoorsPositions>[];
}

/** Engine (`engine`). */
export interface Engine extends Capability {
  /** Limp mode */
  readonly limp_mode: Value<"inactive" | "active">;
  /** Pre-conditioning active */
  readonly preconditioning_active: Value<"inactive" | "active">;
  /** Pre-conditioning enabled */
  readonly preconditioning_enabled: Value<"disabled" | "enabled">;
  /** Pre-conditioning error */
  readonly preconditioning_error: Value<"low_fuel" | "low_battery" | "quota_exceeded" | "heater_failure" | "component_failure" | "open_or_unlocked" | "ok">;
  /** Pre-conditioning remaining time */
  readonly preconditioning_remaining_time: Value<Quantity<DurationUnit>>;
  /** Pre-conditioning status */
  readonly preconditioning_status: Value<"standby" | "heating" | "cooling" | "ventilation" | "inactive">;
  /** Start-stop enabled */
  readonly start_stop_enabled: Value<"disabled" | "enabled">;
  /** Start-stop state */
  readonly start_stop_state: Value<"inactive" | "active">;
  /** Status */
  readonly status: Value<"off" | "on">;
}

/** Fueling (`fueling`). */
export interface Fueling extends Capability {
  /** Gas flap lock */
  readonly gas_flap_lock: Value<"unlocked" | "locked">;
  /** Gas flap position */
  readonly gas_flap_position: Value<"closed" | "open">;
}

/** Horn and flash lights (`honk_horn_flash_lights`). */
export interface HonkHornFlashLights extends Capability {
  /** Flashers */
  readonly flashers: Value<"inactive" | "emergency_flasher_active" | "left_flasher_active" | "right_flasher_active">;
}

/** Hood (`hood`). */
export interface Hood extends Capability {
  /** Lock */
  readonly lock: Value<"unlocked" | "locked">;
  /** Lock safety */
  readonly lock_safety: Value<"safe" | "unsafe">;
  /** Position */
  readonly position: Value<"closed" | "open" | "intermediate">;
}

/** Ignition (`ignition`). */
export interface Ignition extends Capability {
  /** Accessories status */
  readonly accessories_status: Value<"lock" | "off" | "accessory" | "on" | "start">;
  /** State */
  readonly state: Value<"lock" | "off" | "accessory" | "on" | "start">;
  /** Status */
  readonly status: Value<"lock" | "off" | "accessory" | "on" | "start">;
}

/** Light conditions (`light_conditions`). */
export interface LightConditions extends Capability {
  /** Inside light */
  readonly inside_light: Value<Quantity<IlluminanceUnit>>;
  /** Outside light */
  readonly outside_light: Value<Quantity<IlluminanceUnit>>;
}

/** Lights (`lights`). */
export interface Lights extends Capability {
  /** Ambient light colour */
  readonly ambient_light_colour: Value<LightsAmbientLightColour>;
  /** Emergency brake light */
  readonly emergency_brake_light: Value<"inactive" | "active">;
  /** Fog lights */
  readonly fog_lights: readonly Value<LightsFogLights>[];
  /** Front exterior light */
  readonly front_exterior_light: Value<"inactive" | "active" | "active_with_full_beam" | "drl" | "automatic">;
  /** Interior lights */
  readonly interior_lights: readonly Value<LightsInteriorLights>[];
  /** Parking light status */
  readonly parking_light_status: Value<"off" | "left" | "right" | "both">;
  /** Reading lamps */
  readonly reading_lamps: readonly Value<LightsReadingLamps>[];
  /** Rear exterior light */
  readonly rear_exterior_light: Value<"inactive" | "active">;
  /** Reverse light */
  readonly reverse_light: Value<"inactive" | "active">;
  /** Switch position */
  readonly switch_position: Value<"automatic" | "dipped_headlights" | "parking_light_right" | "parking_light_left" | "sidelights">;
}

/** Maintenance (`maintenance`). */
export interface Maintenance extends Capability {
  /** Automatic teleservice call date */
  readonly automatic_teleservice_call_date: Value<Date>;
  /** Brake fluid change date */
  readonly brake_fluid_change_date: Value<Date>;
  /** Brake fluid remaining distance */
  readonly brake_fluid_remaining_distance: Value<Quantity<LengthUnit>>;
  /** Brake fluid status */
  readonly brake_fluid_status: Value<"ok" | "warning" | "critical">;
  /** Brakes service due dates */
  readonly brakes_service_due_dates: readonly Value<MaintenanceBrakesServiceDueDates>[];
  /** Brakes service remaining distances */
  readonly brakes_service_remaining_distances: readonly Value<MaintenanceBrakesServiceRemainingDistances>[];
  /** Brakes service statuses */
  readonly brakes_service_statuses: readonly Value<MaintenanceBrakesServiceStatuses>[];
  /** CBS reports count */
  readonly cbs_reports_count: Value<number>;
  /** Condition based services */
  readonly condition_based_services: readonly Value<MaintenanceConditionBasedServices>[];
  /** Days to next service */
  readonly days_to_next_service: Value<Quantity<DurationUnit>>;
  /** Distance to next oil service */
  readonly distance_to_next_oil_service: Value<Quantity<LengthUnit>>;
  /** Distance to next service */
  readonly distance_to_next_service: Value<Quantity<LengthUnit>>;
  /** Drive-in inspection date */
  readonly drive_in_inspection_date: Value<Date>;
  /** Drive-in inspection distance to */
  readonly drive_in_inspection_distance_to: Value<Quantity<LengthUnit>>;
  /** Drive-in inspection status */
  readonly drive_in_inspection_status: Value<"ok" | "warning" | "critical">;
  /** Inspection status */
  readonly inspection_status: Value<"ok" | "warning" | "critical">;
  /** Kilometers to next service */
  readonly kilometers_to_next_service: Value<Quantity<LengthUnit>>;
  /** Last eCall */
  readonly last_ecall: Value<Date>;
  /** Legal inspection date */
  readonly legal_inspection_date: Value<Date>;
  /** Months to exhaust inspection */
  readonly months_to_exhaust_inspection: Value<Quantity<DurationUnit>>;
  /** Next inspection date */
  readonly next_inspection_date: Value<Date>;
  /** Next inspection distance to */
  readonly next_inspection_distance_to: Value<Quantity<LengthUnit>>;
  /** Next oil service date */
  readonly next_oil_service_date: Value<Date>;
  /** Service date */
  readonly service_date: Value<Date>;
  /** Service distance threshold */
  readonly service_distance_threshold: Value<Quantity<LengthUnit>>;
  /** Service status */
  readonly service_status: Value<"ok" | "warning" | "critical">;
  /** Service time threshold */
  readonly service_time_threshold: Value<Quantity<DurationUnit>>;
  /** Teleservice availability */
  readonly teleservice_availability: Value<"pending" | "idle" | "successful" | "error">;
  /** Teleservice battery call date */
  readonly teleservice_battery_call_date: Value<Date>;
  /** Time to exhaust inspection */
  readonly time_to_exhaust_inspection: Value<Quantity<DurationUnit>>;
  /** Time to next oil service */
  readonly time_to_next_oil_service: Value<Quantity<DurationUnit>>;
  /** Time to next service */
  readonly time_to_next_service: Value<Quantity<DurationUnit>>;
  /** Vehicle check date */
  readonly vehicle_check_date: Value<Date>;
  /** Vehicle check distance to */
  readonly vehicle_check_distance_to: Value<Quantity<LengthUnit>>;
  /** Vehicle check status */
  readonly vehicle_check_status: Value<"ok" | "warning" | "critical">;
}

/** Messaging (`messaging`). */
export interface Messaging extends Capability {
  /** Handle */
  readonly handle: Value<string>;
  /** Text */
  readonly text: Value<string>;
}

/** Notifications (`notifications`). */
export interface Notifications extends Capability {
  /** Action items */
  readonly action_items: readonly Value<NotificationsActionItems>[];
  /** Activated action */
  readonly activated_action: Value<number>;
  /** Clear */
  readonly clear: Value<"clear">;
  /** Text */
  readonly text: Value<string>;
}

/** Offroad (`offroad`). */
export interface Offroad extends Capability {
  /** Route incline */
  readonly route_incline: Value<Quantity<AngleUnit>>;
  /** Wheel suspension */
  readonly wheel_suspension: Value<number>;
}

/** Parking brake (`parking_brake`). */
export interface ParkingBrake extends Capability {
  /** Status */
  readonly status: Value<"inactive" | "active">;
}

/** Power take-off (`power_takeoff`). */
export interface PowerTakeoff extends Capability {
  /** Engaged */
  readonly engaged: Value<"not_engaged" | "engaged">;
  /** Status */
  readonly status: Value<"inactive" | "active">;
}

/** Race (`race`). */
export interface Race extends Capability {
  /** Accelerations */
  readonly accelerations: readonly Value<RaceAccelerations>[];
  /** Accelerator durations */
  readonly accelerator_durations: readonly Value<RaceAcceleratorDurations>[];
  /** Accelerator pedal idle switch */
  readonly accelerator_pedal_idle_switch: Value<"inactive" | "active">;
  /** Accelerator pedal kickdown switch */
  readonly accelerator_pedal_kickdown_switch: Value<"inactive" | "active">;
  /** Brake pedal position */
  readonly brake_pedal_position: Value<number>;
  /** Brake pedal switch */
  readonly brake_pedal_switch: Value<"inactive" | "active">;
  /** Brake pressure */
  readonly brake_pressure: Value<Quantity<PressureUnit>>;
  /** Brake torque vectorings */
  readonly brake_torque_vectorings: readonly Value<RaceBrakeTorqueVectorings>[];
  /** Clutch pedal switch */
  readonly clutch_pedal_switch: Value<"inactive" | "active">;
  /** Drivetrain state */
  readonly drivetrain_state: Value<"inactive" | "race_start_preparation" | "race_start" | "start" | "comfort_start" | "start_idle_run_control" | "ready_for_overpressing" | "low_speed_mode" | "e_launch">;
  /** Electronic stability program */
  readonly electronic_stability_program: Value<"inactive" | "active">;
  /** Gas pedal position */
  readonly gas_pedal_position: Value<number>;
  /** Gear mode */
  readonly gear_mode: Value<"manual" | "park" | "reverse" | "neutral" | "drive" | "low_gear" | "sport">;
  /** Oversteering */
  readonly oversteering: Value<number>;
  /** Rear suspension steering */
  readonly rear_suspension_steering: Value<Quantity<AngleUnit>>;
  /** Selected gear */
  readonly selected_gear: Value<number>;
  /** Steering angle */
  readonly steering_angle: Value<Quantity<AngleUnit>>;
  /** Understeering */
  readonly understeering: Value<number>;
  /** Vehicle moving */
  readonly vehicle_moving: Value<"not_moving" | "moving">;
  /** Yaw rate */
  readonly yaw_rate: Value<Quantity<AngularVelocityUnit>>;
}

/** Remote control (`remote_control`). */
export interface RemoteControl extends Capability {
  /** Angle */
  readonly angle: Value<Quantity<AngleUnit>>;
  /** Control mode */
  readonly control_mode: Value<"unavailable" | "available" | "started" | "failed_to_start" | "aborted" | "ended">;
}

/** Rooftop control (`rooftop_control`). */
export interface RooftopControl extends Capability {
  /** Convertible roof state */
  readonly convertible_roof_state: Value<"closed" | "open" | "emergency_locked" | "closed_secured" | "open_secured" | "hard_top_mounted" | "intermediate_position" | "loading_position" | "loading_position_immediate">;
  /** Dimming */
  readonly dimming: Value<number>;
  /** Position */
  readonly position: Value<number>;
  /** Sunroof rain event */
  readonly sunroof_rain_event: Value<"no_event" | "in_stroke_position_because_of_rain" | "automatically_in_stroke_position" | "timer">;
  /** Sunroof state */
  readonly sunroof_state: Value<"closed" | "open" | "intermediate">;
  /** Sunroof tilt state */
  readonly sunroof_tilt_state: Value<"closed" | "tilted" | "half_tilted">;
  /** Tilt position */
  readonly tilt_position: Value<number>;
}

/** Seats (`seats`). */
export interface Seats extends Capability {
  /** Persons detected */
  readonly persons_detected: readonly Value<SeatsPersonsDetected>[];
  /** Seatbelts state */
  readonly seatbelts_state: readonly Value<SeatsSeatbeltsState>[];
}

/** Theft alarm (`theft_alarm`). */
export interface TheftAlarm extends Capability {
  /** Event type */
  readonly event_type: Value<"idle" | "front_left" | "front_middle" | "front_right" | "right" | "rear_right" | "rear_middle" | "rear_left" | "left" | "unknown">;
  /** Interior protection status */
  readonly interior_protection_status: Value<"inactive_selected" | "inactive_not_selected" | "active">;
  /** Interior protection triggered */
  readonly interior_protection_triggered: Value<"not_triggered" | "triggered">;
  /** Last event */
  readonly last_event: Value<Date>;
  /** Last event level */
  readonly last_event_level: Value<"low" | "medium" | "high">;
  /** Last warning reason */
  readonly last_warning_reason: Value<"no_alarm" | "basic_alarm" | "door_front_left" | "door_front_right" | "door_rear_left" | "door_rear_right" | "hood" | "trunk" | "common_alm_in" | "panic" | "glovebox" | "center_box" | "rear_box" | "sensor_vta" | "its" | "its_slv" | "tps" | "horn" | "hold_com" | "remote" | "unknown" | "siren">;
  /** Status */
  readonly status: Value<"unarmed" | "armed" | "triggered">;
  /** Tow protection status */
  readonly tow_protection_status: Value<"inactive_selected" | "inactive_not_selected" | "active">;
  /** Tow protection triggered */
  readonly tow_protection_triggered: Value<"not_triggered" | "triggered">;
}

/** Trunk (`trunk`). */
export interface Trunk extends Capability {
  /** Lock */
  readonly lock: Value<"unlocked" | "locked">;
  /** Lock safety */
  readonly lock_safety: Value<"safe" | "unsafe">;
  /** Position */
  readonly position: Value<"closed" | "open">;
}

/** Usage (`usage`). */
export interface Usage extends Capability {
  /** Acceleration durations */
  readonly acceleration_durations: readonly Value<UsageAccelerationDurations>[];
  /** Acceleration evaluation */
  readonly acceleration_evaluation: Value<number>;
  /** Average fuel consumption */
  readonly average_fuel_consumption: Value<Quantity<FuelEfficiencyUnit>>;
  /** Average speed */
  readonly average_speed: Value<Quantity<SpeedUnit>>;
  /** Average speed last trip */
  readonly average_speed_last_trip: Value<Quantity<SpeedUnit>>;
  /** Average speed since reset */
  readonly average_speed_since_reset: Value<Quantity<SpeedUnit>>;
  /** Average weekly distance */
  readonly average_weekly_distance: Value<Quantity<LengthUnit>>;
  /** Average weekly distance long run */
  readonly average_weekly_distance_long_run: Value<Quantity<LengthUnit>>;
  /** Braking evaluation */
  readonly braking_evaluation: Value<number>;
  /** Current fuel consumption */
  readonly current_fuel_consumption: Value<Quantity<FuelEfficiencyUnit>>;
  /** Distance over time */
  readonly distance_over_time: Value<UsageDistanceOverTime>;
  /** Driving duration last trip */
  readonly driving_duration_last_trip: Value<Quantity<DurationUnit>>;
  /** Driving duration since reset */
  readonly driving_duration_since_reset: Value<Quantity<DurationUnit>>;
  /** Driving modes activation periods */
  readonly driving_modes_activation_periods: readonly Value<UsageDrivingModesActivationPeriods>[];
  /** Driving modes energy consumptions */
  readonly driving_modes_energy_consumptions: readonly Value<UsageDrivingModesEnergyConsumptions>[];
  /** Driving style evaluation */
  readonly driving_style_evaluation: Value<number>;
  /** Eco-score bonus range */
  readonly eco_score_bonus_range: Value<Quantity<LengthUnit>>;
  /** Eco-score constant */
  readonly eco_score_constant: Value<number>;
  /** Eco-score free wheel */
  readonly eco_score_free_wheel: Value<number>;
  /** Eco-score total */
  readonly eco_score_total: Value<number>;
  /** Electric consumption average */
  readonly electric_consumption_average: Value<Quantity<EnergyEfficiencyUnit>>;
  /** Electric consumption rate since reset */
  readonly electric_consumption_rate_since_reset: Value<Quantity<EnergyEfficiencyUnit>>;
  /** Electric consumption rate since start */
  readonly electric_consumption_rate_since_start: Value<Quantity<EnergyEfficiencyUnit>>;
  /** Electric distance last trip */
  readonly electric_distance_last_trip: Value<Quantity<LengthUnit>>;
  /** Electric distance since reset */
  readonly electric_distance_since_reset: Value<Quantity<LengthUnit>>;
  /** Electric duration last trip */
  readonly electric_duration_last_trip: Value<Quantity<DurationUnit>>;
  /** Electric duration since reset */
  readonly electric_duration_since_reset: Value<Quantity<DurationUnit>>;
  /** Fuel consumption rate last trip */
  readonly fuel_consumption_rate_last_trip: Value<Quantity<FuelEfficiencyUnit>>;
  /** Fuel consumption rate since reset */
  readonly fuel_consumption_rate_since_reset: Value<Quantity<FuelEfficiencyUnit>>;
  /** Fuel distance last trip */
  readonly fuel_distance_last_trip: Value<Quantity<LengthUnit>>;
  /** Fuel distance since reset */
  readonly fuel_distance_since_reset: Value<Quantity<LengthUnit>>;
  /** Last trip average energy recuperation */
  readonly last_trip_average_energy_recuperation: Value<Quantity<EnergyEfficiencyUnit>>;
  /** Last trip battery regenerated */
  readonly last_trip_battery_regenerated: Value<number>;
  /** Last trip battery remaining */
  readonly last_trip_battery_remaining: Value<number>;
  /** Last trip date */
  readonly last_trip_date: Value<Date>;
  /** Last trip electric portion */
  readonly last_trip_electric_portion: Value<number>;
  /** Last trip energy consumption */
  readonly last_trip_energy_consumption: Value<Quantity<EnergyUnit>>;
  /** Last trip fuel consumption */
  readonly last_trip_fuel_consumption: Value<Quantity<VolumeUnit>>;
  /** Late night grade */
  readonly late_night_grade: Value<"excellent" | "normal" | "warning">;
  /** Mileage after last trip */
  readonly mileage_after_last_trip: Value<Quantity<LengthUnit>>;
  /** Odometer after last trip */
  readonly odometer_after_last_trip: Value<Quantity<LengthUnit>>;
  /** Rapid acceleration grade */
  readonly rapid_acceleration_grade: Value<"excellent" | "normal" | "warning">;
  /** Rapid deceleration grade */
  readonly rapid_deceleration_grade: Value<"excellent" | "normal" | "warning">;
  /** Recuperation power */
  readonly recuperation_power: Value<Quantity<PowerUnit>>;
  /** Safety driving score */
  readonly safety_driving_score: Value<number>;
  /** Trip meters */
  readonly trip_meters: readonly Value<UsageTripMeters>[];
}

/** Vehicle location (`vehicle_location`). */
export interface VehicleLocation extends Capability {
  /** Altitude */
  readonly altitude: Value<Quantity<LengthUnit>>;
  /** Coordinates */
  readonly coordinates: Value<VehicleLocationCoordinates>;
  /** Fuzzy coordinates */
  readonly fuzzy_coordinates: Value<VehicleLocationFuzzyCoordinates>;
  /** GPS signal strength */
  readonly gps_signal_strength: Value<number>;
  /** GPS source */
  readonly gps_source: Value<"dead_reckoning" | "real" | "none">;
  /** Heading */
  readonly heading: Value<Quantity<AngleUnit>>;
  /** Precision */
  readonly precision: Value<Quantity<LengthUnit>>;
}

/** Weather conditions (`weather_conditions`). */
export interface WeatherConditions extends Capability {
  /** Rain intensity */
  readonly rain_intensity: Value<number>;
}

/** Windows (`windows`). */
export interface Windows extends Capability {
  /** Open percentages */
  readonly open_percentages: readonly Value<WindowsOpenPercentages>[];
  /** Positions */
  readonly positions: readonly Value<WindowsPositions>[];
}

/** Windscreen (`windscreen`). */
export interface Windscreen extends Capability {
  /** Windscreen damage */
  readonly windscreen_damage: Value<"no_impact_detected" | "impact_but_no_damage_detected" | "damage_smaller_than_1_inch" | "damage_larger_than_1_inch">;
  /** Windscreen damage confidence */
  readonly windscreen_damage_confidence: Value<number>;
  /** Windscreen damage detection time */
  readonly windscreen_damage_detection_time: Value<Date>;
  /** Windscreen damage zone */
  readonly windscreen_damage_zone: Value<WindscreenWindscreenDamageZone>;
  /** Windscreen needs replacement */
  readonly windscreen_needs_replacement: Value<"unknown" | "no_replacement_needed" | "replacement_needed">;
  /** Windscreen zone matrix */
  readonly windscreen_zone_matrix: Value<WindscreenWindscreenZoneMatrix>;
  /** Wipers intensity */
  readonly wipers_intensity: Value<"level_0" | "level_1" | "level_2" | "level_3">;
  /** Wipers status */
  readonly wipers_status: Value<"inactive" | "active" | "automatic">;
}

/** Every capability of the catalog, as `VehicleData` holds them. */
export interface Capabilities {
  readonly adas: Adas;
  readonly charging: Charging;
  readonly charging_session: ChargingSession;
  readonly chassis_settings: ChassisSettings;
  readonly climate: Climate;
  readonly crash: Crash;
  readonly cruise_control: CruiseControl;
  readonly dashboard_lights: DashboardLights;
  readonly diagnostics: Diagnostics;
  readonly doors: Doors;
  readonly engine: Engine;
  readonly fueling: Fueling;
  readonly honk_horn_flash_lights: HonkHornFlashLights;
  readonly hood: Hood;
  readonly ignition: Ignition;
  readonly light_conditions: LightConditions;
  readonly lights: Lights;
  readonly maintenance: Maintenance;
  readonly messaging: Messaging;
  readonly notifications: Notifications;
  readonly offroad: Offroad;
  readonly parking_brake: ParkingBrake;
  readonly power_takeoff: PowerTakeoff;
  readonly race: Race;
  readonly remote_control: RemoteControl;
  readonly rooftop_control: RooftopControl;
  readonly seats: Seats;
  readonly theft_alarm: TheftAlarm;
  readonly trunk: Trunk;
  readonly usage: Usage;
  readonly vehicle_location: VehicleLocation;
  readonly weather_conditions: WeatherConditions;
  readonly windows: Windows;
  readonly windscreen: Windscreen;
}

/** How each property is read: [multiple, spec]. */
export const CAPABILITY_SPECS: Readonly<Record<string, Readonly<Record<string, readonly [boolean, Spec]>>>> = {
  adas: {
    alertness_system_status: [false, "enum"],
    automated_parking_brake: [false, "enum"],
    blind_spot_warning_state: [false, "enum"],
    blind_spot_warning_system: [false, "enum"],
    blind_spot_warning_system_coverage: [false, "enum"],
    forward_collision_warning_system: [false, "enum"],
    lane_keep_assist_system: [false, "enum"],
    lane_keep_assists_states: [true, { location: "enum", state: "enum" }],
    launch_control: [false, "enum"],
    park_assists: [true, { location: "enum", alarm: "enum", muted: "enum" }],
    rear_cross_warning_system: [false, "enum"],
    status: [false, "enum"],
  },
  charging: {
    acoustic_limit: [false, "enum"],
    auxiliary_power: [false, "quantity"],
    battery_capacity: [false, "quantity"],
    battery_charge_transfer_event: [false, "enum"],
    battery_charge_type: [false, "enum"],
    battery_cooling_temperature: [false, "quantity"],
    battery_current: [false, "quantity"],
    battery_current_ac: [false, "quantity"],
    battery_current_dc: [false, "quantity"],
    battery_energy: [false, "quantity"],
    battery_energy_chargable: [false, "quantity"],
    battery_led: [false, "enum"],
    battery_level: [false, "number"],
    battery_level_at_departure: [false, "number"],
    battery_max_available: [false, "quantity"],
    battery_performance_status: [false, "enum"],
    battery_status: [false, "enum"],
    battery_temperature: [false, "quantity"],
    battery_temperature_control_demand: [false, "enum"],
    battery_temperature_extremes: [false, { extreme: "enum", temperature: "quantity" }],
    battery_tempretature_extremes: [false, { extreme: "enum", temperature: "quantity" }],
    battery_voltage: [false, "quantity"],
    charge_limit: [false, "number"],
    charge_mode: [false, "enum"],
    charge_port_state: [false, "enum"],
    charger_power: [false, "quantity"],
    charger_voltage: [false, "quantity"],
    charger_voltage_ac: [false, "quantity"],
    charger_voltage_dc: [false, "quantity"],
    charging_complete_lock: [false, "enum"],
    charging_current: [false, "quantity"],
    charging_end_reason: [false, "enum"],
    charging_phases: [false, "enum"],
    charging_rate: [false, "quantity"],
    charging_rate_distance: [false, { distance: "quantity", time: "quantity" }],
    charging_rate_kw: [false, "quantity"],
    charging_scenario: [false, "enum"],
    charging_single_immediate: [false, "enum"],
    charging_time_display: [false, "enum"],
    charging_window_chosen: [false, "enum"],
    conserving_charge: [false, "enum"],
    current_limit: [false, "quantity"],
    current_type: [false, "enum"],
    departure_time_display: [false, "enum"],
    departure_times: [true, { state: "enum", time: { hour: "integer", minute: "integer" } }],
    distance_to_complete_charge: [false, "quantity"],
    driving_mode_phev: [false, "enum"],
    estimated_range: [false, "quantity"],
    estimated_range_target: [false, "quantity"],
    flap_lock_status: [false, "enum"],
    fully_charged_end_times: [false, { weekday: "enum", time: { hour: "integer", minute: "integer" } }],
    hybrid_operating_mode: [false, "enum"],
    limit_status: [false, "enum"],
    max_charging_current: [false, "quantity"],
    max_range: [false, "quantity"],
    min_charging_current: [false, "quantity"],
    plug_lock_status: [false, "enum"],
    plug_type: [false, "enum"],
    plugged_in: [false, "enum"],
    preconditioning_departure_enabled: [false, "enum"],
    preconditioning_departure_status: [false, "enum"],
    preconditioning_error: [false, "enum"],
    preconditioning_immediate_status: [false, "enum"],
    preconditioning_remaining_time: [false, "quantity"],
    preconditioning_scheduled_time: [false, { hour: "integer", minute: "integer" }],
    reduction_times: [true, { start_stop: "enum", time: { hour: "integer", minute: "integer" } }],
    restriction: [false, { active: "enum", limit: "enum" }],
    smart_charging_option: [false, "enum"],
    smart_charging_status: [false, "enum"],
    starter_battery_state: [false, "enum"],
    state_of_health: [false, "number"],
    station_displayed_status: [false, "enum"],
    station_power_type: [false, "enum"],
    station_status: [false, "enum"],
    status: [false, "enum"],
    time_to_complete_charge: [false, "quantity"],
    timers: [true, { timer_type: "enum", date: "date-time" }],
  },
  charging_session: {
    business_errors: [true, "string"],
    calculated_energy_charged: [false, "quantity"],
    charging_cost: [false, { currency: "string", calculated_charging_cost: "number", calculated_savings: "number", simulated_immediate_charging_cost: "number" }],
    displayed_start_state_of_charge: [false, "number"],
    displayed_state_of_charge: [false, "number"],
    end_time: [false, "date-time"],
    energy_charged: [false, "quantity"],
    location: [false, { municipality: "string", formatted_address: "string", street_address: "string" }],
    odometer: [false, "quantity"],
    preconditioning_state: [false, "enum"],
    public_charging_points: [true, { city: "string", postal_code: "string", street: "string", provider: "string" }],
    start_time: [false, "date-time"],
    time_zone: [false, "string"],
    total_charging_duration: [false, "quantity"],
  },
  chassis_settings: {
    current_chassis_position: [false, "quantity"],
    current_spring_rates: [true, { axle: "enum", spring_rate: "quantity" }],
    driving_mode: [false, "enum"],
    maximum_chassis_position: [false, "quantity"],
    maximum_spring_rates: [true, { axle: "enum", spring_rate: "quantity" }],
    minimum_chassis_position: [false, "quantity"],
    minimum_spring_rates: [true, { axle: "enum", spring_rate: "quantity" }],
    sport_chrono: [false, "enum"],
  },
  climate: {
    air_conditioner_compressor_power: [false, "quantity"],
    defogging_state: [false, "enum"],
    defrosting_state: [false, "enum"],
    defrosting_temperature_setting: [false, "quantity"],
    driver_temperature_setting: [false, "quantity"],
    humidity: [false, "number"],
    hvac_state: [false, "enum"],
    hvac_weekday_starting_times: [true, { weekday: "enum", time: { hour: "integer", minute: "integer" } }],
    inside_temperature: [false, "quantity"],
    ionising_state: [false, "enum"],
    outside_temperature: [false, "quantity"],
    passenger_temperature_setting: [false, "quantity"],
    rear_temperature_setting: [false, "quantity"],
  },
  crash: {
    automatic_ecall: [false, "enum"],
    impact_zone: [true, "enum"],
    incidents: [true, { location: "enum", severity: "enum", repairs: "enum" }],
    severity: [false, "integer"],
    status: [false, "enum"],
    tipped_state: [false, "enum"],
    type: [false, "enum"],
  },
  cruise_control: {
    acc_target_speed: [false, "quantity"],
    adaptive_cruise_control: [false, "enum"],
    cruise_control: [false, "enum"],
    limiter: [false, "enum"],
    target_speed: [false, "quantity"],
  },
  dashboard_lights: {
    bulb_failures: [true, "enum"],
    dashboard_lights: [true, { name: "enum", state: "enum" }],
    dynamic_warnings: [true, { category: "string", id: "string", description: "string" }],
  },
  diagnostics: {
    adblue_level: [false, "number"],
    anti_lock_braking: [false, "enum"],
    backup_battery_remaining_time: [false, "quantity"],
    battery_level: [false, "number"],
    battery_voltage: [false, "quantity"],
    brake_fluid_level: [false, "enum"],
    brake_lining_wear_pre_warning: [false, "enum"],
    check_control_messages: [true, { id: "integer", remaining_time: "quantity", text: "string", status: "string" }],
    confirmed_trouble_codes: [true, { id: "string", ecu_address: "string", ecu_variant_name: "string", status: "string" }],
    diesel_exhaust_filter_status: [true, { status: "enum", component: "enum", cleaning: "enum" }],
    diesel_exhaust_fluid_range: [false, "quantity"],
    diesel_particulate_filter_soot_level: [false, "number"],
    distance_since_reset: [false, "quantity"],
    distance_since_start: [false, "quantity"],
    engine_coolant_fluid_level: [false, "enum"],
    engine_coolant_temperature: [false, "quantity"],
    engine_load: [false, "number"],
    engine_oil_amount: [false, "quantity"],
    engine_oil_fluid_level: [false, "enum"],
    engine_oil_level: [false, "number"],
    engine_oil_life_remaining: [false, "number"],
    engine_oil_pressure_level: [false, "enum"],
    engine_oil_service_status: [false, "enum"],
    engine_oil_temperature: [false, "quantity"],
    engine_rpm: [false, "quantity"],
    engine_time_to_next_service: [false, "quantity"],
    engine_torque: [false, "number"],
    engine_total_fuel_consumption: [false, "quantity"],
    engine_total_idle_operating_time: [false, "quantity"],
    engine_total_operating_hours: [false, "quantity"],
    engine_total_operating_time: [false, "quantity"],
    estimated_mixed_powertrain_range: [false, "quantity"],
    estimated_primary_powertrain_range: [false, "quantity"],
    estimated_range: [false, "quantity"],
    estimated_secondary_powertrain_range: [false, "quantity"],
    fuel_level: [false, "number"],
    fuel_level_accuracy: [false, "enum"],
    fuel_volume: [false, "quantity"],
    low_voltage_battery_charge_level: [false, "enum"],
    mileage: [false, "quantity"],
    mileage_meters: [false, "quantity"],
    odometer: [false, "quantity"],
    oem_trouble_code_values: [true, { id: "string", key_value: { key: "string", value: "string" } }],
    passenger_airbag_status: [false, "enum"],
    primary_energy_level: [false, "number"],
    secondary_energy_level: [false, "number"],
    speed: [false, "quantity"],
    tire_pressure_statuses: [true, { location: "enum", status: "enum" }],
    tire_pressures: [true, { location: "enum", pressure: "quantity" }],
    tire_pressures_differences: [true, { location: "enum", pressure: "quantity" }],
    tire_pressures_targets: [true, { location: "enum", pressure: "quantity" }],
    tire_temperatures: [true, { location: "enum", temperature: "quantity" }],
    trouble_codes: [true, { occurrences: "integer", id: "string", ecu_id: "string", status: "string", system: "enum" }],
    washer_fluid_level: [false, "enum"],
    wheel_based_speed: [false, "quantity"],
    wheel_rpms: [true, { location: "enum", rpm: "quantity" }],
  },
  doors: {
    inside_locks: [true, { location: "enum", lock_state: "enum" }],
    inside_locks_state: [false, "enum"],
    locks: [true, { location: "enum", lock_state: "enum" }],
    locks_state: [false, "enum"],
    positions: [true, { location: "enum", position: "enum" }],
  },
  engine: {
    limp_mode: [false, "enum"],
    preconditioning_active: [false, "enum"],
    preconditioning_enabled: [false, "enum"],
    preconditioning_error: [false, "enum"],
    preconditioning_remaining_time: [false, "quantity"],
    preconditioning_status: [false, "enum"],
    start_stop_enabled: [false, "enum"],
    start_stop_state: [false, "enum"],
    status: [false, "enum"],
  },
  fueling: {
    gas_flap_lock: [false, "enum"],
    gas_flap_position: [false, "enum"],
  },
  honk_horn_flash_lights: {
    flashers: [false, "enum"],
  },
  hood: {
    lock: [false, "enum"],
    lock_safety: [false, "enum"],
    position: [false, "enum"],
  },
  ignition: {
    accessories_status: [false, "enum"],
    state: [false, "enum"],
    status: [false, "enum"],
  },
  light_conditions: {
    inside_light: [false, "quantity"],
    outside_light: [false, "quantity"],
  },
  lights: {
    ambient_light_colour: [false, { red: "integer", green: "integer", blue: "integer" }],
    emergency_brake_light: [false, "enum"],
    fog_lights: [true, { location: "enum", state: "enum" }],
    front_exterior_light: [false, "enum"],
    interior_lights: [true, { location: "enum", state: "enum" }],
    parking_light_status: [false, "enum"],
    reading_lamps: [true, { location: "enum", state: "enum" }],
    rear_exterior_light: [false, "enum"],
    reverse_light: [false, "enum"],
    switch_position: [false, "enum"],
  },
  maintenance: {
    automatic_teleservice_call_date: [false, "date-time"],
    brake_fluid_change_date: [false, "date-time"],
    brake_fluid_remaining_distance: [false, "quantity"],
    brake_fluid_status: [false, "enum"],
    brakes_service_due_dates: [true, { axle: "enum", due_date: "date-time" }],
    brakes_service_remaining_distances: [true, { axle: "enum", distance: "quantity" }],
    brakes_service_statuses: [true, { axle: "enum", status: "enum" }],
    cbs_reports_count: [false, "integer"],
    condition_based_services: [true, { year: "integer", month: "integer", id: "integer", due_status: "enum", text: "string", description: "string" }],
    days_to_next_service: [false, "quantity"],
    distance_to_next_oil_service: [false, "quantity"],
    distance_to_next_service: [false, "quantity"],
    drive_in_inspection_date: [false, "date-time"],
    drive_in_inspection_distance_to: [false, "quantity"],
    drive_in_inspection_status: [false, "enum"],
    inspection_status: [false, "enum"],
    kilometers_to_next_service: [false, "quantity"],
    last_ecall: [false, "date-time"],
    legal_inspection_date: [false, "date-time"],
    months_to_exhaust_inspection: [false, "quantity"],
    next_inspection_date: [false, "date-time"],
    next_inspection_distance_to: [false, "quantity"],
    next_oil_service_date: [false, "date-time"],
    service_date: [false, "date-time"],
    service_distance_threshold: [false, "quantity"],
    service_status: [false, "enum"],
    service_time_threshold: [false, "quantity"],
    teleservice_availability: [false, "enum"],
    teleservice_battery_call_date: [false, "date-time"],
    time_to_exhaust_inspection: [false, "quantity"],
    time_to_next_oil_service: [false, "quantity"],
    time_to_next_service: [false, "quantity"],
    vehicle_check_date: [false, "date-time"],
    vehicle_check_distance_to: [false, "quantity"],
    vehicle_check_status: [false, "enum"],
  },
  messaging: {
    handle: [false, "string"],
    text: [false, "string"],
  },
  notifications: {
    action_items: [true, { id: "integer", name: "string" }],
    activated_action: [false, "integer"],
    clear: [false, "enum"],
    text: [false, "string"],
  },
  offroad: {
    route_incline: [false, "quantity"],
    wheel_suspension: [false, "number"],
  },
  parking_brake: {
    status: [false, "enum"],
  },
  power_takeoff: {
    engaged: [false, "enum"],
    status: [false, "enum"],
  },
  race: {
    accelerations: [true, { direction: "enum", acceleration: "quantity" }],
    accelerator_durations: [true, { pedal_position_threshold: "number", duration: "quantity" }],
    accelerator_pedal_idle_switch: [false, "enum"],
    accelerator_pedal_kickdown_switch: [false, "enum"],
    brake_pedal_position: [false, "number"],
    brake_pedal_switch: [false, "enum"],
    brake_pressure: [false, "quantity"],
    brake_torque_vectorings: [true, { axle: "enum", state: "enum" }],
    clutch_pedal_switch: [false, "enum"],
    drivetrain_state: [false, "enum"],
    electronic_stability_program: [false, "enum"],
    gas_pedal_position: [false, "number"],
    gear_mode: [false, "enum"],
    oversteering: [false, "number"],
    rear_suspension_steering: [false, "quantity"],
    selected_gear: [false, "integer"],
    steering_angle: [false, "quantity"],
    understeering: [false, "number"],
    vehicle_moving: [false, "enum"],
    yaw_rate: [false, "quantity"],
  },
  remote_control: {
    angle: [false, "quantity"],
    control_mode: [false, "enum"],
  },
  rooftop_control: {
    convertible_roof_state: [false, "enum"],
    dimming: [false, "number"],
    position: [false, "number"],
    sunroof_rain_event: [false, "enum"],
    sunroof_state: [false, "enum"],
    sunroof_tilt_state: [false, "enum"],
    tilt_position: [false, "number"],
  },
  seats: {
    persons_detected: [true, { location: "enum", detected: "enum" }],
    seatbelts_state: [true, { location: "enum", fastened_state: "enum" }],
  },
  theft_alarm: {
    event_type: [false, "enum"],
    interior_protection_status: [false, "enum"],
    interior_protection_triggered: [false, "enum"],
    last_event: [false, "date-time"],
    last_event_level: [false, "enum"],
    last_warning_reason: [false, "enum"],
    status: [false, "enum"],
    tow_protection_status: [false, "enum"],
    tow_protection_triggered: [false, "enum"],
  },
  trunk: {
    lock: [false, "enum"],
    lock_safety: [false, "enum"],
    position: [false, "enum"],
  },
  usage: {
    acceleration_durations: [true, { direction: "enum", type: "enum", duration: "quantity" }],
    acceleration_evaluation: [false, "number"],
    average_fuel_consumption: [false, "quantity"],
    average_speed: [false, "quantity"],
    average_speed_last_trip: [false, "quantity"],
    average_speed_since_reset: [false, "quantity"],
    average_weekly_distance: [false, "quantity"],
    average_weekly_distance_long_run: [false, "quantity"],
    braking_evaluation: [false, "number"],
    current_fuel_consumption: [false, "quantity"],
    distance_over_time: [false, { distance: "quantity", time: "quantity" }],
    driving_duration_last_trip: [false, "quantity"],
    driving_duration_since_reset: [false, "quantity"],
    driving_modes_activation_periods: [true, { driving_mode: "enum", period: "number" }],
    driving_modes_energy_consumptions: [true, { driving_mode: "enum", consumption: "quantity" }],
    driving_style_evaluation: [false, "number"],
    eco_score_bonus_range: [false, "quantity"],
    eco_score_constant: [false, "number"],
    eco_score_free_wheel: [false, "number"],
    eco_score_total: [false, "number"],
    electric_consumption_average: [false, "quantity"],
    electric_consumption_rate_since_reset: [false, "quantity"],
    electric_consumption_rate_since_start: [false, "quantity"],
    electric_distance_last_trip: [false, "quantity"],
    electric_distance_since_reset: [false, "quantity"],
    electric_duration_last_trip: [false, "quantity"],
    electric_duration_since_reset: [false, "quantity"],
    fuel_consumption_rate_last_trip: [false, "quantity"],
    fuel_consumption_rate_since_reset: [false, "quantity"],
    fuel_distance_last_trip: [false, "quantity"],
    fuel_distance_since_reset: [false, "quantity"],
    last_trip_average_energy_recuperation: [false, "quantity"],
    last_trip_battery_regenerated: [false, "number"],
    last_trip_battery_remaining: [false, "number"],
    last_trip_date: [false, "date-time"],
    last_trip_electric_portion: [false, "number"],
    last_trip_energy_consumption: [false, "quantity"],
    last_trip_fuel_consumption: [false, "quantity"],
    late_night_grade: [false, "enum"],
    mileage_after_last_trip: [false, "quantity"],
    odometer_after_last_trip: [false, "quantity"],
    rapid_acceleration_grade: [false, "enum"],
    rapid_deceleration_grade: [false, "enum"],
    recuperation_power: [false, "quantity"],
    safety_driving_score: [false, "number"],
    trip_meters: [true, { id: "integer", distance: "quantity" }],
  },
  vehicle_location: {
    altitude: [false, "quantity"],
    coordinates: [false, { latitude: "number", longitude: "number" }],
    fuzzy_coordinates: [false, { latitude: "number", longitude: "number" }],
    gps_signal_strength: [false, "number"],
    gps_source: [false, "enum"],
    heading: [false, "quantity"],
    precision: [false, "quantity"],
  },
  weather_conditions: {
    rain_intensity: [false, "number"],
  },
  windows: {
    open_percentages: [true, { location: "enum", open_percentage: "number" }],
    positions: [true, { location: "enum", position: "enum" }],
  },
  windscreen: {
    windscreen_damage: [false, "enum"],
    windscreen_damage_confidence: [false, "number"],
    windscreen_damage_detection_time: [false, "date-time"],
    windscreen_damage_zone: [false, { horizontal: "integer", vertical: "integer" }],
    windscreen_needs_replacement: [false, "enum"],
    windscreen_zone_matrix: [false, { horizontal: "integer", vertical: "integer" }],
    wipers_intensity: [false, "enum"],
    wipers_status: [false, "enum"],
  },
};

/** The arguments of every command, by `capability.command`. */
export interface CommandArguments {
  /** Open a web page in the vehicle's browser */
  "browser.load_url": { readonly url: string };
  /** Start and stop charging */
  "charging.start_stop_charging": { readonly status: "not_charging" | "charging" | "charging_complete" | "initialising" | "charging_paused" | "charging_error" | "cable_unplugged" | "slow_charging" | "fast_charging" | "discharging" | "foreign_object_detected" | "conditioning" | "flap_open" | "ready_for_charging" };
  /** Set the charge limit */
  "charging.set_charge_limit": { readonly charge_limit: number };
  /** Open and close the charging port */
  "charging.open_close_charging_port": { readonly charge_port_state: "closed" | "open" };
  /** Set the charging mode */
  "charging.set_charge_mode": { readonly charge_mode: "immediate" | "timer_based" | "inductive" | "conductive" | "push_button" };
  /** Set the charging timers */
  "charging.set_charging_timers": { readonly timers: readonly ({ readonly timer_type: "preferred_start_time" | "preferred_end_time" | "departure_date"; readonly date: string })[] };
  /** Set when the charging current is reduced */
  "charging.set_reduction_of_charging_current_times": { readonly reduction_times: readonly ({ readonly start_stop: "start" | "stop"; readonly time: { readonly hour: number; readonly minute: number } })[] };
  /** Set the driving mode */
  "chassis_settings.set_driving_mode": { readonly driving_mode: "regular" | "eco" | "sport" | "sport_plus" | "eco_plus" | "comfort" };
  /** Start and stop the sports chrono */
  "chassis_settings.start_stop_sports_chrono": { readonly sport_chrono: "inactive" | "active" | "reset" };
  /** Set the suspension spring rates */
  "chassis_settings.set_spring_rates": { readonly current_spring_rates: readonly ({ readonly axle: "front" | "rear"; readonly spring_rate: { readonly value: number; readonly unit: "newton_meters" | "newton_millimeters" | "pound_feet" } })[] };
  /** Raise and lower the chassis */
  "chassis_settings.set_chassis_position": { readonly current_chassis_position: { readonly value: number; readonly unit: "meters" | "millimeters" | "centimeters" | "decimeters" | "kilometers" | "megameters" | "inches" | "feet" | "yards" | "miles" | "scandinavian_miles" | "nautical_miles" } };
  /** Change when the climate control starts */
  "climate.change_starting_times": { readonly hvac_weekday_starting_times: readonly ({ readonly weekday: "monday" | "tuesday" | "wednesday" | "thursday" | "friday" | "saturday" | "sunday" | "automatic"; readonly time: { readonly hour: number; readonly minute: number } })[] };
  /** Start and stop the climate control */
  "climate.start_stop_hvac": { readonly hvac_state: "inactive" | "active" };
  /** Start and stop demisting the windows */
  "climate.start_stop_defogging": { readonly defogging_state: "inactive" | "active" };
  /** Start and stop defrosting */
  "climate.start_stop_defrosting": { readonly defrosting_state: "inactive" | "active" };
  /** Start and stop the air ioniser */
  "climate.start_stop_ionising": { readonly ionising_state: "inactive" | "active" };
  /** Set the cabin temperatures */
  "climate.set_temperature_settings": { readonly driver_temperature_setting?: { readonly value: number; readonly unit: "kelvin" | "celsius" | "fahrenheit" }; readonly passenger_temperature_setting?: { readonly value: number; readonly unit: "kelvin" | "celsius" | "fahrenheit" }; readonly rear_temperature_setting?: { readonly value: number; readonly unit: "kelvin" | "celsius" | "fahrenheit" } };
  /** Switch the cruise control on and off */
  "cruise_control.activate_deactivate_cruise_control": { readonly cruise_control: "inactive" | "active"; readonly target_speed?: { readonly value: number; readonly unit: "meters_per_second" | "kilometers_per_hour" | "miles_per_hour" | "knots" } };
  /** Lock and unlock the doors */
  "doors.lock_unlock_doors": { readonly locks_state: "unlocked" | "locked" };
  /** Turn the engine on and off */
  "engine.turn_engine_on_off": { readonly status: "off" | "on" };
  /** Switch the automatic start-stop on and off */
  "engine.enable_disable_start_stop": { readonly start_stop_enabled: "disabled" | "enabled" };
  /** Open, close, lock and unlock the fuel flap */
  "fueling.control_gas_flap": { readonly gas_flap_lock?: "unlocked" | "locked"; readonly gas_flap_position?: "closed" | "open" };
  /** Show an image on the vehicle's display */
  "graphics.display_image": { readonly image_url: string };
  /** Send the driver's heart rate to the vehicle */
  "heart_rate.send_heart_rate": { readonly heart_rate: { readonly value: number; readonly unit: "hertz" | "millihertz" | "kilohertz" | "megahertz" | "gigahertz" | "times_per_minute" | "times_per_hour" | "times_per_day" } };
  /** Ask the vehicle for past states */
  "historical.request_states": { readonly capability_id: number; readonly start_date?: string; readonly end_date?: string };
  /** Ask the vehicle for past trips */
  "historical.get_trips": { readonly start_date?: string; readonly end_date?: string };
  /** Ask the vehicle for past charging sessions */
  "historical.get_charging_sessions": { readonly start_date?: string; readonly end_date?: string };
  /** Set the home charger's current */
  "home_charger.set_charge_current": { readonly charge_current: { readonly value: number; readonly unit: "amperes" | "milliamperes" | "kiloamperes" } };
  /** Set the home charger's price tariffs */
  "home_charger.set_price_tariffs": { readonly price_tariffs: readonly ({ readonly pricing_type: "starting_fee" | "per_minute" | "per_kwh"; readonly price: number; readonly currency: string })[] };
  /** Switch solar charging on and off */
  "home_charger.activate_deactivate_solar_charging": { readonly solar_charging: "inactive" | "active" };
  /** Switch the home charger's Wi-Fi hotspot on and off */
  "home_charger.enable_disable_wi_fi_hotspot": { readonly wi_fi_hotspot_enabled: "disabled" | "enabled" };
  /** Sign in to and out of the home charger */
  "home_charger.authenticate_expire": { readonly authentication_state: "unauthenticated" | "authenticated" };
  /** Sound the horn and flash the lights */
  "honk_horn_flash_lights.honk_flash": { readonly honk_time?: { readonly value: number; readonly unit: "seconds" | "minutes" | "hours" | "days" | "weeks" | "months" | "milliseconds" }; readonly flash_times?: number };
  /** Switch the hazard lights on and off */
  "honk_horn_flash_lights.activate_deactivate_emergency_flasher": { readonly emergency_flashers_state: "inactive" | "active" };
  /** Turn the ignition on and off */
  "ignition.turn_ignition_on_off": { readonly state: "lock" | "off" | "accessory" | "on" | "start" };
  /** Switch the lights on and off */
  "lights.control_lights": { readonly front_exterior_light?: "inactive" | "active" | "active_with_full_beam" | "drl" | "automatic"; readonly rear_exterior_light?: "inactive" | "active"; readonly ambient_light_colour?: { readonly red: number; readonly green: number; readonly blue: number }; readonly fog_lights?: readonly ({ readonly location: "front" | "rear"; readonly state: "inactive" | "active" })[]; readonly reading_lamps?: readonly ({ readonly location: "front_left" | "front_right" | "rear_right" | "rear_left"; readonly state: "inactive" | "active" })[]; readonly interior_lights?: readonly ({ readonly location: "front" | "rear"; readonly state: "inactive" | "active" })[] };
  /** Send a message to the vehicle */
  "messaging.message_received": { readonly text: string; readonly handle?: string };
  /** Send several commands at once */
  "multi_command.multi_command": { readonly multi_commands: readonly (string)[] };
  /** Set the navigation destination */
  "navi_destination.set_navi_destination": { readonly coordinates: { readonly latitude: number; readonly longitude: number }; readonly destination_name?: string };
  /** Show a notification in the vehicle */
  "notifications.notification": { readonly text: string; readonly action_items?: readonly ({ readonly id: number; readonly name: string })[] };
  /** Answer a notification in the vehicle */
  "notifications.action": { readonly activated_action: number };
  /** Clear a notification in the vehicle */
  "notifications.clear_notification": Record<string, never>;
  /** Apply and release the parking brake */
  "parking_brake.set_parking_brake": { readonly status: "inactive" | "active" };
  /** Start a parking ticket */
  "parking_ticket.start_parking": { readonly operator_ticket_id: string; readonly ticket_start_time: string; readonly operator_name?: string; readonly ticket_end_time?: string };
  /** End a parking ticket */
  "parking_ticket.end_parking": Record<string, never>;
  /** Switch the power take-off on and off */
  "power_takeoff.activate_deactivate_power_takeoff": { readonly status: "inactive" | "active" };
  /** Steer the vehicle by remote control */
  "remote_control.control_command": { readonly angle?: { readonly value: number; readonly unit: "degrees" | "radians" | "revolutions" }; readonly speed?: { readonly value: number; readonly unit: "meters_per_second" | "kilometers_per_hour" | "miles_per_hour" | "knots" } };
  /** Start remote control of the vehicle */
  "remote_control.start_control": Record<string, never>;
  /** Stop remote control of the vehicle */
  "remote_control.stop_control": Record<string, never>;
  /** Open, close and dim the roof */
  "rooftop_control.control_rooftop": { readonly dimming?: number; readonly position?: number; readonly convertible_roof_state?: "closed" | "open" | "emergency_locked" | "closed_secured" | "open_secured" | "hard_top_mounted" | "intermediate_position" | "loading_position" | "loading_position_immediate"; readonly sunroof_tilt_state?: "closed" | "tilted" | "half_tilted"; readonly sunroof_state?: "closed" | "open" | "intermediate" };
  /** Type text into the vehicle */
  "text_input.text_input": { readonly text: string };
  /** Arm and disarm the theft alarm */
  "theft_alarm.set_theft_alarm": { readonly status: "unarmed" | "armed" | "triggered" };
  /** Open, close, lock and unlock the boot */
  "trunk.control_trunk": { readonly lock?: "unlocked" | "locked"; readonly position?: "closed" | "open" };
  /** Switch the valet mode on and off */
  "valet_mode.activate_deactivate_valet_mode": { readonly status: "inactive" | "active" };
  /** Play a video in the vehicle */
  "video_handover.video_handover": { readonly url: string; readonly starting_time?: { readonly value: number; readonly unit: "seconds" | "minutes" | "hours" | "days" | "weeks" | "months" | "milliseconds" }; readonly screen?: "front" | "rear" };
  /** Wake the vehicle up */
  "wake_up.wake_up": Record<string, never>;
  /** Connect the vehicle to a Wi-Fi network */
  "wi_fi.connect_to_network": { readonly network_ssid: string; readonly network_security: "none" | "wep" | "wpa" | "wpa2_personal"; readonly password?: string };
  /** Make the vehicle forget a Wi-Fi network */
  "wi_fi.forget_network": { readonly network_ssid: string };
  /** Switch the vehicle's Wi-Fi on and off */
  "wi_fi.enable_disable_wi_fi": { readonly status: "disabled" | "enabled" };
  /** Open and close the windows */
  "windows.control_windows": { readonly open_percentages?: readonly ({ readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "hatch"; readonly open_percentage: number })[]; readonly positions?: readonly ({ readonly location: "front_left" | "front_right" | "rear_right" | "rear_left" | "hatch"; readonly position: "closed" | "open" | "intermediate" })[] };
  /** Report damage to the windscreen */
  "windscreen.set_windscreen_damage": { readonly windscreen_damage: "no_impact_detected" | "impact_but_no_damage_detected" | "damage_smaller_than_1_inch" | "damage_larger_than_1_inch"; readonly windscreen_damage_zone?: { readonly horizontal: number; readonly vertical: number } };
  /** Report that the windscreen needs replacing */
  "windscreen.set_windscreen_replacement_needed": { readonly windscreen_needs_replacement: "unknown" | "no_replacement_needed" | "replacement_needed" };
  /** Switch the wipers on and off */
  "windscreen.control_wipers": { readonly wipers_status: "inactive" | "active" | "automatic"; readonly wipers_intensity?: "level_0" | "level_1" | "level_2" | "level_3" };
}

/** A command's name, `capability.command` (e.g. `doors.lock_unlock_doors`). */
export type CommandName = keyof CommandArguments;

/** The `set` scopes each command needs. */
export const COMMANDS: Readonly<Record<CommandName, { readonly scopes: readonly string[] }>> = {
  "browser.load_url": { scopes: ["browser.set.url"] },
  "charging.start_stop_charging": { scopes: ["charging.set.status"] },
  "charging.set_charge_limit": { scopes: ["charging.set.charge_limit"] },
  "charging.open_close_charging_port": { scopes: ["charging.set.charge_port_state"] },
  "charging.set_charge_mode": { scopes: ["charging.set.charge_mode"] },
  "charging.set_charging_timers": { scopes: ["charging.set.timers"] },
  "charging.set_reduction_of_charging_current_times": { scopes: ["charging.set.reduction_times"] },
  "chassis_settings.set_driving_mode": { scopes: ["chassis_settings.set.driving_mode"] },
  "chassis_settings.start_stop_sports_chrono": { scopes: ["chassis_settings.set.sport_chrono"] },
  "chassis_settings.set_spring_rates": { scopes: ["chassis_settings.set.current_spring_rates"] },
  "chassis_settings.set_chassis_position": { scopes: ["chassis_settings.set.current_chassis_position"] },
  "climate.change_starting_times": { scopes: ["climate.set.hvac_weekday_starting_times"] },
  "climate.start_stop_hvac": { scopes: ["climate.set.hvac_state"] },
  "climate.start_stop_defogging": { scopes: ["climate.set.defogging_state"] },
  "climate.start_stop_defrosting": { scopes: ["climate.set.defrosting_state"] },
  "climate.start_stop_ionising": { scopes: ["climate.set.ionising_state"] },
  "climate.set_temperature_settings": { scopes: ["climate.set.driver_temperature_setting","climate.set.passenger_temperature_setting","climate.set.rear_temperature_setting"] },
  "cruise_control.activate_deactivate_cruise_control": { scopes: ["cruise_control.set.cruise_control","cruise_control.set.target_speed"] },
  "doors.lock_unlock_doors": { scopes: ["doors.set.locks_state"] },
  "engine.turn_engine_on_off": { scopes: ["engine.set.status"] },
  "engine.enable_disable_start_stop": { scopes: ["engine.set.start_stop_enabled"] },
  "fueling.control_gas_flap": { scopes: ["fueling.set.gas_flap_lock","fueling.set.gas_flap_position"] },
  "graphics.display_image": { scopes: ["graphics.set.image_url"] },
  "heart_rate.send_heart_rate": { scopes: ["heart_rate.set.heart_rate"] },
  "historical.request_states": { scopes: ["historical.set.capability_id","historical.set.start_date","historical.set.end_date"] },
  "historical.get_trips": { scopes: ["historical.set.start_date","historical.set.end_date","historical.set.capability_id"] },
  "historical.get_charging_sessions": { scopes: ["historical.set.start_date","historical.set.end_date","historical.set.capability_id"] },
  "home_charger.set_charge_current": { scopes: ["home_charger.set.charge_current"] },
  "home_charger.set_price_tariffs": { scopes: ["home_charger.set.price_tariffs"] },
  "home_charger.activate_deactivate_solar_charging": { scopes: ["home_charger.set.solar_charging"] },
  "home_charger.enable_disable_wi_fi_hotspot": { scopes: ["home_charger.set.wi_fi_hotspot_enabled"] },
  "home_charger.authenticate_expire": { scopes: ["home_charger.set.authentication_state"] },
  "honk_horn_flash_lights.honk_flash": { scopes: ["honk_horn_flash_lights.set.honk_time","honk_horn_flash_lights.set.flash_times"] },
  "honk_horn_flash_lights.activate_deactivate_emergency_flasher": { scopes: ["honk_horn_flash_lights.set.emergency_flashers_state"] },
  "ignition.turn_ignition_on_off": { scopes: ["ignition.set.state"] },
  "lights.control_lights": { scopes: ["lights.set.front_exterior_light","lights.set.rear_exterior_light","lights.set.ambient_light_colour","lights.set.fog_lights","lights.set.reading_lamps","lights.set.interior_lights"] },
  "messaging.message_received": { scopes: ["messaging.set.text","messaging.set.handle"] },
  "multi_command.multi_command": { scopes: ["multi_command.set.multi_commands"] },
  "navi_destination.set_navi_destination": { scopes: ["navi_destination.set.coordinates","navi_destination.set.destination_name"] },
  "notifications.notification": { scopes: ["notifications.set.text","notifications.set.action_items"] },
  "notifications.action": { scopes: ["notifications.set.activated_action"] },
  "notifications.clear_notification": { scopes: ["notifications.set.clear"] },
  "parking_brake.set_parking_brake": { scopes: ["parking_brake.set.status"] },
  "parking_ticket.start_parking": { scopes: ["parking_ticket.set.operator_ticket_id","parking_ticket.set.ticket_start_time","parking_ticket.set.operator_name","parking_ticket.set.ticket_end_time","parking_ticket.set.status"] },
  "parking_ticket.end_parking": { scopes: ["parking_ticket.set.status"] },
  "power_takeoff.activate_deactivate_power_takeoff": { scopes: ["power_takeoff.set.status"] },
  "remote_control.control_command": { scopes: ["remote_control.set.angle","remote_control.set.speed"] },
  "remote_control.start_control": { scopes: ["remote_control.set.control_mode"] },
  "remote_control.stop_control": { scopes: ["remote_control.set.control_mode"] },
  "rooftop_control.control_rooftop": { scopes: ["rooftop_control.set.dimming","rooftop_control.set.position","rooftop_control.set.convertible_roof_state","rooftop_control.set.sunroof_tilt_state","rooftop_control.set.sunroof_state"] },
  "text_input.text_input": { scopes: ["text_input.set.text"] },
  "theft_alarm.set_theft_alarm": { scopes: ["theft_alarm.set.status"] },
  "trunk.control_trunk": { scopes: ["trunk.set.lock","trunk.set.position"] },
  "valet_mode.activate_deactivate_valet_mode": { scopes: ["valet_mode.set.status"] },
  "video_handover.video_handover": { scopes: ["video_handover.set.url","video_handover.set.starting_time","video_handover.set.screen"] },
  "wake_up.wake_up": { scopes: ["wake_up.set.status"] },
  "wi_fi.connect_to_network": { scopes: ["wi_fi.set.network_ssid","wi_fi.set.network_security","wi_fi.set.password"] },
  "wi_fi.forget_network": { scopes: ["wi_fi.set.network_ssid"] },
  "wi_fi.enable_disable_wi_fi": { scopes: ["wi_fi.set.status"] },
  "windows.control_windows": { scopes: ["windows.set.open_percentages","windows.set.positions"] },
  "windscreen.set_windscreen_damage": { scopes: ["windscreen.set.windscreen_damage","windscreen.set.windscreen_damage_zone"] },
  "windscreen.set_windscreen_replacement_needed": { scopes: ["windscreen.set.windscreen_needs_replacement"] },
  "windscreen.control_wipers": { scopes: ["windscreen.set.wipers_status","windscreen.set.wipers_intensity"] },
};
