"""Static checks of the typed models: mypy (`make lint`, and test_client_models.py) must
accept every `assert_type` below. Never run, only type-checked."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, assert_type

from autoport_client import Client, StreamMessage
from autoport_client.models import Quantity, Value, VehicleData
from autoport_client.models._generated import DoorsLocks, LengthUnit


def pulled(client: Client) -> None:
    data = client.get_vehicle_data("SBXPSRGC89T9TK2VN")
    assert_type(data, VehicleData)
    assert_type(data.charging.battery_level.value, float | None)
    assert_type(data.charging.battery_level.timestamp, datetime | None)
    assert_type(data.diagnostics.odometer.value, Quantity[LengthUnit] | None)
    odometer = data.diagnostics.odometer.value
    if odometer is not None:
        assert_type(odometer.value, float)
        assert_type(odometer.unit, LengthUnit)
    assert_type(data.doors.locks, list[Value[DoorsLocks]])
    lock = data.doors.locks[0].value
    if lock is not None:
        assert_type(lock.lock_state, Literal["unlocked", "locked"])
    assert_type(
        data.ignition.status.value, Literal["lock", "off", "accessory", "on", "start"] | None
    )


def streamed(message: StreamMessage) -> None:
    assert_type(message.data.charging.battery_level.value, float | None)
