"""The sandbox car obeys physically: pure functions of the state (no I/O)."""

from __future__ import annotations

import orjson
import pytest

from autoport.sandbox.physics import (
    SANDBOX_COMMANDS,
    CommandRefused,
    Mode,
    Powertrain,
    Scenario,
    VehicleState,
    apply_command,
    initial_state,
    replace,
    step,
    step_rng,
)


def _parked(powertrain: Powertrain = Powertrain.electric) -> VehicleState:
    return initial_state(Scenario.parked, powertrain, 7)


def test_lock_and_unlock_and_an_open_door_refuses_locking() -> None:
    state = apply_command(_parked(), "doors.lock_unlock_doors", {"locks_state": "unlocked"})
    assert state.door_locked == (False,) * 4 and state.commands_executed == 1
    state = apply_command(state, "doors.lock_unlock_doors", {"locks_state": "locked"})
    assert state.door_locked == (True,) * 4
    opened = replace(state, door_open=(True, False, False, False))
    with pytest.raises(CommandRefused, match="door is open"):
        apply_command(opened, "doors.lock_unlock_doors", {"locks_state": "locked"})


def test_charging_starts_only_when_plugged_in() -> None:
    state = replace(_parked(), soc=0.4, plugged_in=False)
    with pytest.raises(CommandRefused, match="not plugged in"):
        apply_command(state, "charging.start_stop_charging", {"status": "charging"})
    plugged = replace(state, plugged_in=True)
    charging = apply_command(plugged, "charging.start_stop_charging", {"status": "charging"})
    assert charging.mode == Mode.charging and charging.charging_status == "charging"
    later = step(charging, 600, step_rng(7, 1))
    assert later.soc > charging.soc  # it really charges
    stopped = apply_command(later, "charging.start_stop_charging", {"status": "not_charging"})
    assert stopped.mode == Mode.parked and stopped.charge_power_kw == 0.0
    with pytest.raises(CommandRefused, match="no battery"):
        apply_command(
            _parked(Powertrain.combustion), "charging.start_stop_charging", {"status": "charging"}
        )


def test_a_charge_limit_below_the_level_stops_charging() -> None:
    state = replace(
        _parked(), soc=0.7, plugged_in=True, mode=Mode.charging.value, charging_status="charging"
    )
    limited = apply_command(state, "charging.set_charge_limit", {"charge_limit": 0.6})
    assert limited.charge_limit == 0.6 and limited.charging_status == "charging_complete"
    after = step(limited, 60, step_rng(7, 1))
    assert after.soc == pytest.approx(0.7, abs=1e-6)  # no more energy flows in
    with pytest.raises(CommandRefused):
        apply_command(state, "charging.set_charge_limit", {"charge_limit": 0.2})


def test_climate_moves_the_inside_temperature_over_time() -> None:
    state = replace(_parked(), inside_c=10.0, outside_c=10.0)
    state = apply_command(
        state,
        "climate.set_temperature_settings",
        {"driver_temperature_setting": {"value": 71.6, "unit": "fahrenheit"}},
    )
    assert state.hvac_target_c == pytest.approx(22.0)
    on = apply_command(state, "climate.start_stop_hvac", {"hvac_state": "active"})
    warmer = on
    for number in range(1, 11):
        warmer = step(warmer, 60, step_rng(7, number))
    assert warmer.inside_c > 18.0  # ten minutes of climate control
    off = step(state, 600, step_rng(7, 1))
    assert off.inside_c < 14.0  # without it the cabin barely moves
    with pytest.raises(CommandRefused):
        apply_command(
            state,
            "climate.set_temperature_settings",
            {"driver_temperature_setting": {"value": 40, "unit": "celsius"}},
        )


def test_honk_and_flash_are_recorded_and_trunk_obeys() -> None:
    state = apply_command(
        _parked(),
        "honk_horn_flash_lights.honk_flash",
        {"honk_time": {"value": 500, "unit": "milliseconds"}, "flash_times": 2},
    )
    assert (state.horn_honks, state.horn_seconds, state.light_flashes) == (1, 0.5, 2)
    with pytest.raises(CommandRefused, match="locked"):
        apply_command(state, "trunk.control_trunk", {"position": "open"})
    state = apply_command(state, "trunk.control_trunk", {"lock": "unlocked", "position": "open"})
    assert state.trunk_open and not state.trunk_locked
    assert state.commands_executed == 2


def test_a_crashed_car_takes_no_commands_but_the_horn() -> None:
    crashed = replace(_parked(), mode=Mode.crashed.value)
    with pytest.raises(CommandRefused, match="crash"):
        apply_command(crashed, "doors.lock_unlock_doors", {"locks_state": "locked"})
    apply_command(crashed, "honk_horn_flash_lights.honk_flash", {"flash_times": 1})
    assert len(SANDBOX_COMMANDS) == 7


@pytest.mark.parametrize("powertrain", list(Powertrain))
def test_the_stored_state_is_the_states_json(powertrain: Powertrain) -> None:
    """The repository writes the state with orjson's own dataclass encoding (30 times
    cheaper on every save): the same bytes as its to_json(), also after commands."""
    state = apply_command(_parked(powertrain), "honk_horn_flash_lights.honk_flash", {})
    state = replace(state, command_failures={"doors.lock_unlock_doors": {"status": "failed"}})
    assert orjson.dumps(state) == orjson.dumps(state.to_json())
    assert VehicleState.from_json(orjson.loads(orjson.dumps(state))) == state
