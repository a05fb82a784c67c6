"""The simulator's physics without I/O: every scenario's data fits the catalog and stays
physically consistent, and a seed replays identically."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from autoport.catalog import validate_capabilities
from autoport.kit.clock import from_iso
from autoport.sandbox.physics import (
    Mode,
    Powertrain,
    Scenario,
    VehicleState,
    advance,
    haversine_m,
    initial_state,
    scenario_problem,
    step,
    step_rng,
    time_to_charge_s,
)
from autoport.sandbox.replay import replay
from autoport.sandbox.snapshot import (
    PRODUCERS,
    equipped_properties,
    simulated_values,
    to_capabilities,
)

START = from_iso("2026-01-01T08:00:00Z")
COMBINATIONS = [
    (scenario, powertrain)
    for scenario, powertrain in itertools.product(Scenario, Powertrain)
    if scenario_problem(scenario, powertrain) is None
]


def run(
    scenario: Scenario, powertrain: Powertrain, seconds: int, seed: int = 7, dt: float = 1.0
) -> list[VehicleState]:
    state = initial_state(scenario, powertrain, seed)
    states = [state]
    for number in range(1, int(seconds / dt) + 1):
        state = step(state, dt, step_rng(seed, number))
        states.append(state)
    return states


@pytest.mark.parametrize(("scenario", "powertrain"), COMBINATIONS)
def test_every_scenario_produces_catalog_valid_data_that_stays_consistent(
    scenario: Scenario, powertrain: Powertrain
) -> None:
    properties = equipped_properties(powertrain, "full")
    states = run(scenario, powertrain, 900)
    for before, after in itertools.pairwise(states):
        assert after.odometer_km >= before.odometer_km
        assert 0.0 <= after.soc <= 1.0
        assert 0.0 <= after.fuel_l <= after.tank_l
        assert after.speed_kmh >= 0.0
    for state in states[::30]:
        values = simulated_values(state, properties, START)
        validate_capabilities(to_capabilities(values, "2026-01-01T08:00:00.000000Z"))
        if powertrain.has_battery:
            assert 0.0 <= values["charging.battery_level"] <= 1.0
        else:
            assert "charging.battery_level" not in values
        if not powertrain.has_tank:
            assert "diagnostics.fuel_level" not in values


def test_every_producer_covers_a_catalog_property_of_some_powertrain() -> None:
    keys = {p.key for p in PRODUCERS}
    assert len(keys) == len(PRODUCERS)
    full = set().union(*(equipped_properties(pt, "full") for pt in Powertrain))
    assert full == keys


@pytest.mark.parametrize("powertrain", list(Powertrain))
def test_a_driving_vehicle_moves_by_speed_times_time(powertrain: Powertrain) -> None:
    states = run(Scenario.driving, powertrain, 600, seed=3)
    moved_steps = 0
    for before, after in itertools.pairwise(states):
        distance_m = haversine_m(before.latitude, before.longitude, after.latitude, after.longitude)
        travelled_m = (after.odometer_km - before.odometer_km) * 1000
        expected_m = (before.speed_kmh + after.speed_kmh) / 2 / 3.6 * 1.0
        if before.segment == after.segment and after.mode == Mode.driving:
            # On a straight stretch the displacement is the distance driven at that speed.
            assert distance_m == pytest.approx(expected_m, rel=0.02, abs=0.05)
            assert travelled_m == pytest.approx(expected_m, rel=1e-6, abs=1e-6)
            moved_steps += after.speed_kmh > 5
        else:
            # Round a corner it can only be shorter.
            assert distance_m <= travelled_m + 0.05
    assert moved_steps > 300
    odometer_km = states[-1].odometer_km - states[0].odometer_km
    assert 2.0 < odometer_km < 600 * 70 / 3600  # moving, never faster than the road allows


def test_driving_figures_move_together() -> None:
    states = run(Scenario.driving, Powertrain.electric, 300, seed=11)
    first, last = states[0], states[-1]
    km = last.odometer_km - first.odometer_km
    assert last.trip_distance_km == pytest.approx(km)
    assert last.trip_duration_s == pytest.approx(300)
    used_kwh = (first.soc - last.soc) * first.battery_capacity_kwh
    assert used_kwh == pytest.approx(last.trip_energy_kwh, rel=1e-6)
    rate = last.trip_energy_kwh / last.trip_electric_km * 100
    assert 10 < rate < 30  # kWh/100 km of a city car
    values = simulated_values(last, equipped_properties(Powertrain.electric, "full"), START)
    assert values["usage.distance_over_time"]["distance"]["value"] == pytest.approx(km, abs=1e-3)
    assert values["vehicle_location.heading"]["value"] == pytest.approx(last.heading_deg, abs=0.1)


def test_a_charging_vehicle_gains_charge_until_its_limit() -> None:
    states = run(Scenario.charging, Powertrain.electric, 10 * 3600, dt=30.0)
    levels = [s.soc for s in states]
    assert all(b >= a for a, b in itertools.pairwise(levels))
    assert levels[20] > levels[0]  # rising after ten minutes
    final = states[-1]
    assert final.soc == pytest.approx(final.charge_limit)
    assert final.charging_status == "charging_complete"
    assert final.charge_power_kw == 0.0
    values = simulated_values(states[10], equipped_properties(Powertrain.electric, "full"), START)
    assert values["charging.status"] == "charging"
    assert values["charging.charging_rate"] == {"unit": "kilowatts", "value": 11.0}
    assert values["charging.time_to_complete_charge"]["value"] > 0
    # Range follows the battery.
    early = simulated_values(states[1], ["charging.estimated_range"], START)
    late = simulated_values(states[-1], ["charging.estimated_range"], START)
    assert late["charging.estimated_range"]["value"] > early["charging.estimated_range"]["value"]


def test_time_to_complete_matches_the_simulated_charge() -> None:
    state = initial_state(Scenario.charging, Powertrain.electric, 5)
    predicted = time_to_charge_s(
        state.soc, state.charge_limit, state.battery_capacity_kwh, state.charge_power_max_kw
    )
    seconds = 0
    while state.charging_status == "charging":
        seconds += 10
        state = step(state, 10.0, step_rng(5, seconds))
    assert seconds == pytest.approx(predicted, rel=0.03)


def test_an_electric_car_that_drives_long_enough_stops_to_charge_and_drives_on() -> None:
    state = initial_state(Scenario.driving, Powertrain.electric, 1)
    state = VehicleState.from_json({**state.to_json(), "soc": 0.13})
    odometer = state.odometer_km
    modes = []
    for number in range(1, 4 * 3600 // 5):
        state = step(state, 5.0, step_rng(1, number))
        modes.append(state.mode)
        assert state.soc >= 0.0
    assert Mode.charging in modes
    after_charge = modes[modes.index(Mode.charging) :]
    assert Mode.driving in after_charge
    assert state.last_trip_distance_km is not None
    assert state.last_trip_odometer_km is not None
    assert odometer < state.last_trip_odometer_km < state.odometer_km


def test_a_plug_in_hybrid_drives_on_fuel_below_its_electric_floor() -> None:
    state = initial_state(Scenario.driving, Powertrain.plug_in_hybrid, 4)
    state = VehicleState.from_json({**state.to_json(), "soc": 0.151})
    fuel_before = state.fuel_l
    state = advance(state, seed=4, first_step=1, steps=900, step_seconds=1.0)
    assert state.soc <= 0.151
    assert state.fuel_l < fuel_before


def test_low_battery_drains_both_batteries_and_warns() -> None:
    states = run(Scenario.low_battery, Powertrain.electric, 3 * 3600, dt=60.0)
    first, last = states[0], states[-1]
    assert last.soc < first.soc <= 0.12
    assert last.twelve_volt_v < first.twelve_volt_v
    values = simulated_values(last, equipped_properties(Powertrain.electric, "full"), START)
    assert values["charging.starter_battery_state"] == "red"
    assert values["diagnostics.low_voltage_battery_charge_level"] != "ok"


def test_the_doors_scenario_opens_and_locks_doors_windows_and_trunk() -> None:
    properties = [
        "doors.locks_state",
        "doors.positions",
        "windows.open_percentages",
        "trunk.position",
    ]
    seen: dict[str, set[str]] = {key: set() for key in properties}
    for state in run(Scenario.doors, Powertrain.combustion, 400):
        values = simulated_values(state, properties, START)
        for key, value in values.items():
            seen[key].add(repr(value))
    assert seen["doors.locks_state"] == {"'locked'", "'unlocked'"}
    assert len(seen["doors.positions"]) >= 2
    assert len(seen["windows.open_percentages"]) >= 2
    assert seen["trunk.position"] == {"'open'", "'closed'"}


def test_a_crash_stops_the_car_and_reports_the_event() -> None:
    states = run(Scenario.crash, Powertrain.electric, 180, seed=9)
    properties = equipped_properties(Powertrain.electric, "full")
    before = simulated_values(states[10], properties, START)
    assert before["crash.status"] == "normal"
    assert "crash.incidents" not in before
    assert before["crash.automatic_ecall"] == "enabled"
    final = states[-1]
    assert final.mode == Mode.crashed
    assert final.speed_kmh == 0.0
    after = simulated_values(final, properties, START)
    assert after["crash.status"] == "airbag_triggered"
    assert after["crash.incidents"][0]["repairs"] == "needed"
    assert 120 <= after["crash.severity"] <= 220
    assert after["doors.locks_state"] == "unlocked"
    assert from_iso(after["maintenance.last_ecall"]) == START + int(final.crashed_s * 1e6)  # type: ignore[operator]
    # Once crashed, it stays where it is.
    assert states[-1].odometer_km == states[-20].odometer_km


def test_maintenance_becomes_due_while_driving() -> None:
    states = run(Scenario.maintenance_due, Powertrain.combustion, 900)
    statuses = [
        simulated_values(s, ["maintenance.service_status"], START)["maintenance.service_status"]
        for s in states[::60]
    ]
    assert statuses[0] == "warning"
    assert statuses[-1] == "critical"
    distances = [s.service_distance_km for s in states]
    assert all(b <= a for a, b in itertools.pairwise(distances))


def test_a_parked_car_stays_put() -> None:
    states = run(Scenario.parked, Powertrain.electric, 600)
    assert {(s.latitude, s.longitude, s.odometer_km) for s in states} == {
        (states[0].latitude, states[0].longitude, states[0].odometer_km)
    }
    assert all(s.speed_kmh == 0 for s in states)


def _replay(seed: int, scenario: Scenario = Scenario.driving) -> list[dict[str, Any]]:
    return list(
        replay(
            scenario=scenario,
            powertrain=Powertrain.plug_in_hybrid,
            profile="full",
            seed=seed,
            steps=300,
            step_seconds=1.0,
            start_us=START,
        )
    )


def test_the_same_seed_replays_identical_data() -> None:
    first, second = _replay(42), _replay(42)
    assert first == second
    assert len(first) == 301
    assert first[0]["timestamp"] == "2026-01-01T08:00:00.000000Z"
    assert first[300]["timestamp"] == "2026-01-01T08:05:00.000000Z"


def test_a_different_seed_gives_different_data() -> None:
    assert _replay(42) != _replay(43)


def test_advance_equals_stepping_one_by_one() -> None:
    """The runner advances in batches; any batching gives the same state."""
    start = initial_state(Scenario.driving, Powertrain.electric, 8)
    one_go = advance(start, seed=8, first_step=1, steps=120, step_seconds=1.0)
    batched = advance(start, seed=8, first_step=1, steps=50, step_seconds=1.0)
    batched = advance(batched, seed=8, first_step=51, steps=70, step_seconds=1.0)
    assert one_go == batched
    assert VehicleState.from_json(one_go.to_json()) == one_go


def test_haversine_knows_a_known_distance() -> None:
    # Brandenburger Tor to Alexanderplatz, about 2.4 km as the crow flies.
    assert haversine_m(52.51628, 13.37770, 52.52190, 13.41320) == pytest.approx(2_480, rel=0.03)
    assert math.isclose(haversine_m(0, 0, 0, 0), 0.0)


def test_event_times_follow_the_time_scale() -> None:
    from autoport.sandbox.snapshot import Timebase

    states = run(Scenario.crash, Powertrain.combustion, 120, seed=9)
    crashed = states[-1]
    assert crashed.crashed_s is not None
    at_ten = simulated_values(crashed, ["maintenance.last_ecall"], Timebase(START, 10.0))
    # Ten simulated seconds per real one: the crash happened a tenth as far after start.
    expected = START + int(crashed.crashed_s / 10 * 1_000_000)
    assert from_iso(at_ten["maintenance.last_ecall"]) == expected
