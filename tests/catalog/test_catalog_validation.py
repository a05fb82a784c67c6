"""Validation of data points: every example passes, every kind of mistake is named."""

from __future__ import annotations

import random
from typing import Any

import pytest

from autoport.catalog import CATALOG, DataPointError, Property
from autoport.catalog.schemas import example_value
from autoport.catalog.validation import (
    normalize_datetime,
    validate_capabilities,
    validate_data,
    validate_property_value,
    validate_wrapper,
)

ALL = list(CATALOG.properties())
TS = "2018-11-06T10:20:37.094533Z"


def prop(key: str) -> Property:
    cap, _, name = key.partition(".")
    return CATALOG.property(cap, name)


@pytest.mark.parametrize("p", ALL, ids=[p.key for p in ALL])
def test_example_value_validates_and_round_trips(p: Property) -> None:
    value = example_value(p)
    assert validate_property_value(p, value) == value


def test_random_example_values_validate() -> None:
    rng = random.Random(13)
    for _ in range(5):
        for p in ALL:
            value = example_value(p, rng=rng)
            assert validate_property_value(p, value) == value, p.key


def error_of(key: str, value: Any, *, data: bool = True) -> str:
    p = prop(key)

    def call() -> None:
        if data:
            validate_data(p, value, path=f"{key}.data")
        else:
            validate_property_value(p, value)

    with pytest.raises(DataPointError) as info:
        call()
    assert str(info.value) == f"{info.value.path}: {info.value.message}"
    assert isinstance(info.value, ValueError)
    return str(info.value)


@pytest.mark.parametrize(
    ("key", "data", "expected"),
    [
        # percentage bounds, and the state_of_health exception
        ("charging.battery_level", 1.7, "charging.battery_level.data: 1.7 is above 1.0"),
        ("charging.battery_level", -0.1, "charging.battery_level.data: -0.1 is below 0.0"),
        ("charging.state_of_health", 2.5, "charging.state_of_health.data: 2.5 is above 2.0"),
        # JSON types
        (
            "charging.battery_level",
            "0.5",
            "charging.battery_level.data: expected a number, got string",
        ),
        (
            "charging.battery_level",
            True,
            "charging.battery_level.data: expected a number, got boolean",
        ),
        (
            "charging.battery_level",
            None,
            "charging.battery_level.data: expected a number, got null",
        ),
        ("messaging.text", 5, "messaging.text.data: expected a string, got number"),
        ("doors.locks_state", ["locked"], "doors.locks_state.data: expected a string, got array"),
        (
            "charging.estimated_range",
            5,
            ("charging.estimated_range.data: expected a length object {unit, value}, got number"),
        ),
        (
            "vehicle_location.coordinates",
            "1,2",
            ("vehicle_location.coordinates.data: expected an object, got string"),
        ),
        # enum
        (
            "doors.locks_state",
            "ajar",
            "doors.locks_state.data: 'ajar' is not one of unlocked, locked",
        ),
        # quantity
        (
            "charging.estimated_range",
            {"unit": "parsecs", "value": 1},
            (
                "charging.estimated_range.data: unit 'parsecs' is not one of meters, millimeters, "
                "centimeters, decimeters, kilometers, megameters, inches, feet, yards, miles, "
                "scandinavian_miles, nautical_miles"
            ),
        ),
        (
            "charging.estimated_range",
            {"value": 1},
            ("charging.estimated_range.data: missing required field 'unit'"),
        ),
        (
            "charging.estimated_range",
            {"unit": "meters"},
            ("charging.estimated_range.data: missing required field 'value'"),
        ),
        (
            "charging.estimated_range",
            {"unit": "meters", "value": 1, "colour": "red"},
            ("charging.estimated_range.data: unknown field 'colour'"),
        ),
        (
            "charging.estimated_range",
            {"unit": "meters", "value": True},
            ("charging.estimated_range.data.value: expected a number, got boolean"),
        ),
        (
            "charging.estimated_range",
            {"unit": 3, "value": 1},
            ("charging.estimated_range.data.unit: expected a string, got number"),
        ),
        # integer ranges and nested objects
        (
            "charging.preconditioning_scheduled_time",
            {"hour": 24, "minute": 0},
            ("charging.preconditioning_scheduled_time.data.hour: 24 is above 23"),
        ),
        (
            "charging.preconditioning_scheduled_time",
            {"hour": 1, "minute": -1},
            ("charging.preconditioning_scheduled_time.data.minute: -1 is below 0"),
        ),
        (
            "charging.preconditioning_scheduled_time",
            {"hour": 1.5, "minute": 0},
            ("charging.preconditioning_scheduled_time.data.hour: expected an integer, got 1.5"),
        ),
        (
            "charging.preconditioning_scheduled_time",
            {"hour": 1},
            ("charging.preconditioning_scheduled_time.data: missing required field 'minute'"),
        ),
        (
            "charging.preconditioning_scheduled_time",
            {"hour": 1, "minute": 2, "second": 3},
            ("charging.preconditioning_scheduled_time.data: unknown field 'second'"),
        ),
        (
            "maintenance.cbs_reports_count",
            256,
            "maintenance.cbs_reports_count.data: 256 is above 255",
        ),
        ("race.selected_gear", -129, "race.selected_gear.data: -129 is below -128"),
        ("crash.severity", False, "crash.severity.data: expected an integer, got boolean"),
        (
            "vehicle_location.coordinates",
            {"latitude": 91.0, "longitude": 0},
            ("vehicle_location.coordinates.data.latitude: 91.0 is above 90.0"),
        ),
        (
            "charging.fully_charged_end_times",
            {"weekday": "someday", "time": {"hour": 1, "minute": 1}},
            (
                "charging.fully_charged_end_times.data.weekday: 'someday' is not one of "
                "monday, tuesday, wednesday, thursday, friday, saturday, sunday, automatic"
            ),
        ),
        (
            "charging.battery_temperature_extremes",
            {
                "extreme": "highest",
                "temperature": {"unit": "kelvin", "value": "hot"},
            },
            (
                "charging.battery_temperature_extremes.data.temperature.value: "
                "expected a number, got string"
            ),
        ),
        # date-time
        (
            "charging_session.start_time",
            "yesterday",
            ("charging_session.start_time.data: 'yesterday' is not an ISO 8601 date-time"),
        ),
        (
            "charging_session.start_time",
            "2018-11-06",
            ("charging_session.start_time.data: '2018-11-06' is not an ISO 8601 date-time"),
        ),
        (
            "charging_session.start_time",
            "2018-13-06T10:20:37Z",
            (
                "charging_session.start_time.data: "
                "'2018-13-06T10:20:37Z' is not an ISO 8601 date-time"
            ),
        ),
        (
            "charging_session.start_time",
            "0001-01-01T00:00:00+01:00",
            (
                "charging_session.start_time.data: "
                "'0001-01-01T00:00:00+01:00' is not an ISO 8601 date-time"
            ),
        ),
        (
            "charging_session.start_time",
            1541499637,
            ("charging_session.start_time.data: expected a date-time string, got number"),
        ),
    ],
)
def test_invalid_data_is_refused_precisely(key: str, data: Any, expected: str) -> None:
    assert error_of(key, data) == expected


def test_array_item_paths() -> None:
    locks = [
        {"data": {"location": "front_left", "lock_state": "locked"}},
        {"data": {"location": "front_right", "lock_state": "locked"}},
        {"data": {"location": "middle", "lock_state": "locked"}},
    ]
    with pytest.raises(DataPointError) as info:
        validate_property_value(prop("doors.locks"), locks)
    assert info.value.path == "doors.locks[2].data.location"
    assert info.value.message == (
        "'middle' is not one of front_left, front_right, rear_right, rear_left"
    )
    assert error_of("doors.locks", {"data": locks[0]["data"]}, data=False) == (
        "doors.locks: expected an array of property wrappers, got object"
    )
    assert error_of("charging.battery_level", [{"data": 0.5}], data=False) == (
        "charging.battery_level: expected a property wrapper object, got array"
    )


@pytest.mark.parametrize(
    ("wrapper", "expected"),
    [
        ({}, "charging.battery_level: wrapper needs at least one of data, failure, timestamp"),
        (
            {"value": 0.5},
            (
                "charging.battery_level: unknown member 'value' (a wrapper has only data, failure, "
                "timestamp)"
            ),
        ),
        (
            {"data": 0.5, "timestamp": TS, "unit": "x"},
            (
                "charging.battery_level: unknown member 'unit' (a wrapper has only data, failure, "
                "timestamp)"
            ),
        ),
        (
            {"failure": {"reason": "sleeping", "description": "zzz"}},
            (
                "charging.battery_level.failure.reason: 'sleeping' is not one of rate_limit, "
                "execution_timeout, format_error, unauthorised, unknown, pending, oem_error, "
                "privacy_mode_active"
            ),
        ),
        (
            {"failure": {"reason": "pending"}},
            ("charging.battery_level.failure: missing required field 'description'"),
        ),
        (
            {"failure": {"description": "x"}},
            ("charging.battery_level.failure: missing required field 'reason'"),
        ),
        (
            {"failure": {"reason": "pending", "description": 1}},
            ("charging.battery_level.failure.description: expected a string, got number"),
        ),
        (
            {"failure": {"reason": "pending", "description": "x", "code": 1}},
            ("charging.battery_level.failure: unknown field 'code'"),
        ),
        ({"failure": "pending"}, "charging.battery_level.failure: expected an object, got string"),
        (
            {"data": 0.5, "timestamp": "now"},
            ("charging.battery_level.timestamp: 'now' is not an ISO 8601 date-time"),
        ),
        ("0.5", "charging.battery_level: expected a property wrapper object, got string"),
    ],
)
def test_wrapper_rules(wrapper: Any, expected: str) -> None:
    with pytest.raises(DataPointError) as info:
        validate_wrapper(prop("charging.battery_level"), wrapper)
    assert str(info.value) == expected


def test_wrapper_path_is_the_callers() -> None:
    with pytest.raises(DataPointError) as info:
        validate_wrapper(
            prop("charging.battery_level"), {"data": 2}, path="vin1.charging.battery_level"
        )
    assert str(info.value) == "vin1.charging.battery_level.data: 2 is above 1.0"


def test_valid_wrappers_are_normalized() -> None:
    p = prop("charging.battery_level")
    assert validate_wrapper(p, {"timestamp": "2018-11-06T11:20:37+01:00", "data": 1}) == {
        "data": 1,
        "timestamp": "2018-11-06T10:20:37.000000Z",
    }
    failure = {"reason": "rate_limit", "description": "too many requests"}
    assert validate_wrapper(p, {"failure": failure}) == {"failure": failure}
    assert validate_wrapper(p, {"data": 0.5, "failure": failure, "timestamp": TS}) == {
        "data": 0.5,
        "failure": failure,
        "timestamp": TS,
    }
    time = prop("charging.preconditioning_scheduled_time")
    assert validate_data(time, {"hour": 7.0, "minute": 30}) == {"hour": 7, "minute": 30}
    assert validate_property_value(prop("doors.locks"), []) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2018-11-06T10:20:37.094533Z", "2018-11-06T10:20:37.094533Z"),
        ("2018-11-06T10:20:37Z", "2018-11-06T10:20:37.000000Z"),
        ("2018-11-06T10:20:37.5Z", "2018-11-06T10:20:37.500000Z"),
        ("2018-11-06T10:20:37.094+00:00", "2018-11-06T10:20:37.094000Z"),
        ("2018-11-06T12:20:37.094533+02:00", "2018-11-06T10:20:37.094533Z"),
        ("2018-11-06T00:20:37-01:30", "2018-11-06T01:50:37.000000Z"),
        ("2018-11-06T10:20:37", "2018-11-06T10:20:37.000000Z"),
        ("2018-11-06 10:20:37Z", "2018-11-06T10:20:37.000000Z"),
    ],
)
def test_datetime_normalization(raw: str, expected: str) -> None:
    assert normalize_datetime(raw) == expected


def test_validate_capabilities() -> None:
    ok = validate_capabilities(
        {"charging": {"battery_level": {"data": 0.5, "timestamp": TS}}, "doors": {"locks": []}}
    )
    assert ok == {
        "charging": {"battery_level": {"data": 0.5, "timestamp": TS}},
        "doors": {"locks": []},
    }
    with pytest.raises(DataPointError, match=r"^spaceship: unknown capability 'spaceship'$"):
        validate_capabilities({"spaceship": {}})
    with pytest.raises(DataPointError, match=r"^doors.colour: capability 'doors' has no property"):
        validate_capabilities({"doors": {"colour": {"data": "red"}}})
    with pytest.raises(DataPointError, match=r"^data.charging.battery_level.data: 3 is above 1.0$"):
        validate_capabilities({"charging": {"battery_level": {"data": 3}}}, path="data")


def test_superset_values_are_accepted() -> None:
    # level 13.6 added units beyond the 13.5 tables; input accepts them.
    efficiency = prop("usage.electric_consumption_average")
    validate_data(efficiency, {"unit": "kilometers_per_kwh", "value": 6.1})
    validate_data(efficiency, {"unit": "kwh_per_100_kilometers", "value": 16.4})


def test_properties_outside_the_catalog_are_compiled_on_demand() -> None:
    from autoport.catalog.types import NumberType

    custom = Property("charging", "battery_level", NumberType(0.0, 10.0), False, False, "x", "y")
    assert validate_wrapper(custom, {"data": 5.0}) == {"data": 5.0}
