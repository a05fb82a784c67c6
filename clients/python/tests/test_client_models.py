"""The generated models: up to date with the catalog, every capability and property
present, typed access, and nothing unknown dropped."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from autoport_client.models import Quantity, VehicleData
from autoport_client.models import _generated as generated

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "generate_models.py"
CATALOG = Path(__file__).resolve().parents[3] / "autoport" / "catalog" / "level13.json"


def test_generated_models_are_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--catalog", str(CATALOG)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_capability_and_property_of_the_catalog() -> None:
    import json

    catalog = json.loads(CATALOG.read_text())
    for capability in catalog["capabilities"]:
        cls = VehicleData._CAPABILITIES[capability["name"]]
        names = {f.name for f in fields(cls)} - {"extra"}
        assert names == {p["name"] for p in capability["properties"]}, capability["name"]


def test_parsing_keeps_unknown_things_and_types_known_ones() -> None:
    data = VehicleData.from_dict(
        {
            "vin": "SBX00000000000001",
            "brand": "sandbox",
            "charging": {
                "battery_level": {"data": 0.82, "timestamp": "2024-05-01T10:00:00.000000Z"},
                "estimated_range": {
                    "data": {"unit": "kilometers", "value": 240},
                    "timestamp": "2024-05-01T10:00:00Z",
                },
                "warp_factor": {"data": 9, "timestamp": "2024-05-01T10:00:00Z"},
            },
            "doors": {
                "locks": [
                    {"data": {"location": "front_left", "lock_state": "locked", "colour": "red"}},
                ],
            },
            "vehicle_location": {
                "coordinates": {
                    "failure": {"reason": "privacy_mode_active", "description": "off"},
                    "timestamp": "2024-05-01T10:00:00Z",
                }
            },
            "teleporter": {"status": {"data": "ready"}},
        }
    )
    assert data.charging.battery_level.value == 0.82
    assert data.charging.estimated_range.value == Quantity(240, "kilometers")
    assert data.charging.extra == {"warp_factor": {"data": 9, "timestamp": "2024-05-01T10:00:00Z"}}
    lock = data.doors.locks[0].value
    assert isinstance(lock, generated.DoorsLocks)
    assert lock.lock_state == "locked" and lock.extra == {"colour": "red"}
    coordinates = data.vehicle_location.coordinates
    assert coordinates.value is None and coordinates.failure is not None
    assert coordinates.failure.reason == "privacy_mode_active"
    assert data.extra == {"teleporter": {"status": {"data": "ready"}}}
    assert not data.climate.inside_temperature.present


def test_a_stream_layout_takes_the_newest_point() -> None:
    data = VehicleData.from_dict(
        {
            "charging": {
                "battery_level": [
                    {"data": 0.5, "timestamp": "2024-05-01T10:00:02Z"},
                    {"data": 0.4, "timestamp": "2024-05-01T10:00:01Z"},
                ]
            }
        }
    )
    assert data.charging.battery_level.value == 0.5


def test_attribute_chains_type_check_in_mypy() -> None:
    """`data.charging.battery_level.value` is `float | None` to mypy, and so on
    (typecheck_models.py holds the assertions)."""
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            str(Path(__file__).parent / "typecheck_models.py"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=root,
    )
    assert done.returncode == 0, done.stdout + done.stderr
