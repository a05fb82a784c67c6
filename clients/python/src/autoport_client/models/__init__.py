"""Typed vehicle data: `VehicleData.from_dict(pull_answer).charging.battery_level.value`."""

from autoport_client.models._base import Failure, Quantity, Value
from autoport_client.models._generated import *  # noqa: F403
from autoport_client.models._generated import VehicleData

__all__ = ["Failure", "Quantity", "Value", "VehicleData"]
