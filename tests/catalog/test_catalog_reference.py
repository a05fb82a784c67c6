"""The catalog against the reference facts it is generated from."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

from autoport.catalog import CATALOG, UnknownCapability, UnknownProperty
from autoport.catalog.catalog import CATALOG_FILE, load_catalog

REPO = Path(__file__).resolve().parents[2]


def _reference_dir() -> Path:
    """The vendored reference (scripts/vendor_reference.py), or AUTOPORT_REFERENCE_DIR."""
    configured = os.environ.get("AUTOPORT_REFERENCE_DIR")
    path = Path(configured) if configured else REPO / "reference"
    if not (path / "level13-tables").is_dir():
        pytest.fail(f"reference data not found in {path} (vendored under reference/)")
    return path


@pytest.fixture(scope="module")
def reference() -> Path:
    return _reference_dir()


@pytest.fixture(scope="module")
def shapes(reference: Path) -> dict[str, dict[str, str]]:
    path = reference / "level13-tables" / "vehicle_data_property_shapes.json"
    result: dict[str, dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))
    return result


def _build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_catalog", REPO / "scripts" / "build_catalog.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_groups_and_properties_equal_the_interface_tables(
    shapes: dict[str, dict[str, str]],
) -> None:
    ours = {cap.name: {p.name for p in cap.properties} for cap in CATALOG.capabilities()}
    theirs = {cap: set(props) for cap, props in shapes.items()}
    assert ours == theirs


def test_counts() -> None:
    assert len(CATALOG.capabilities()) == 34
    assert len(list(CATALOG.properties())) == 383
    assert len(CATALOG) == 383
    assert len(set(CATALOG.all_scopes())) == 383


def test_spec_groups_are_all_there() -> None:
    spec_groups = [
        "doors",
        "chassis_settings",
        "remote_control",
        "messaging",
        "windows",
        "seats",
        "charging",
        "parking_brake",
        "dashboard_lights",
        "adas",
        "charging_session",
        "maintenance",
        "notifications",
        "honk_horn_flash_lights",
        "diagnostics",
        "offroad",
        "light_conditions",
        "cruise_control",
        "engine",
        "lights",
        "ignition",
        "crash",
        "usage",
        "fueling",
        "climate",
        "theft_alarm",
        "windscreen",
        "rooftop_control",
        "race",
        "power_takeoff",
        "vehicle_location",
        "trunk",
        "hood",
        "weather_conditions",
    ]
    assert sorted(spec_groups) == sorted(CATALOG.capability_names())


def test_deprecated_flags_follow_the_tables(shapes: dict[str, dict[str, str]]) -> None:
    for cap, props in shapes.items():
        for name, shape in props.items():
            if shape.endswith("DEPRECATED"):
                assert CATALOG.property(cap, name).deprecated, f"{cap}.{name}"
    for name in (
        "charging_rate_kw",
        "battery_current_dc",
        "battery_current_ac",
        "charger_voltage_dc",
        "charger_voltage_ac",
        "battery_tempretature_extremes",
    ):
        assert CATALOG.property("charging", name).deprecated, name
    assert not CATALOG.property("charging", "battery_level").deprecated
    assert not CATALOG.property("charging", "battery_temperature_extremes").deprecated


def test_enum_values_include_the_tables(reference: Path) -> None:
    from autoport.catalog.types import EnumType, ObjectType

    path = reference / "level13-tables" / "vehicle_data_enums_by_property.json"
    tables: dict[str, dict[str, list[str]]] = json.loads(path.read_text(encoding="utf-8"))
    for key, by_path in tables.items():
        cap, _, name = key.partition(".")
        type_ = CATALOG.property(cap, name).type
        for field, values in by_path.items():
            sub = type_
            if field != ".":
                for part in field.split("."):
                    assert isinstance(sub, ObjectType), key
                    sub = sub.fields[part]
            assert isinstance(sub, EnumType), f"{key} {field}"
            assert set(values) <= set(sub.values), f"{key} {field}"


def test_units_include_both_levels(reference: Path) -> None:
    lists = json.loads((reference / "level13-tables" / "unit_lists.json").read_text("utf-8"))
    for listing in lists.values():
        for kind, units in listing.items():
            if kind in CATALOG.units:
                assert set(units) <= set(CATALOG.units[kind]), kind


def test_level13_json_is_up_to_date(reference: Path, tmp_path: Path) -> None:
    output = tmp_path / "level13.json"
    assert _build_script().main([str(reference), "--output", str(output)]) == 0
    assert output.read_text("utf-8") == CATALOG_FILE.read_text("utf-8"), (
        "autoport/catalog/level13.json is stale: run python scripts/build_catalog.py"
    )


def test_every_property_and_group_has_both_labels() -> None:
    for cap in CATALOG.capabilities():
        assert cap.label_en.strip(), cap.name
        assert cap.label_de.strip(), cap.name
        for prop in cap.properties:
            assert prop.label_en.strip(), prop.key
            assert prop.label_de.strip(), prop.key


def test_lookup_and_errors() -> None:
    prop = CATALOG.property("charging", "battery_level")
    assert prop.scope == "charging.get.battery_level"
    assert CATALOG.property_for_scope("charging.get.battery_level") is prop
    with pytest.raises(UnknownProperty, match="capability 'charging' has no property 'nope'"):
        CATALOG.property("charging", "nope")
    with pytest.raises(UnknownCapability, match="unknown capability 'nope'") as info:
        CATALOG.property("nope", "x")
    assert isinstance(info.value, KeyError)
    assert str(info.value) == "unknown capability 'nope'"
    with pytest.raises(UnknownProperty):
        CATALOG.property_for_scope("charging.set.battery_level")


def test_scopes_for_is_ordered_and_deduplicated() -> None:
    level = CATALOG.property("charging", "battery_level")
    assert CATALOG.scopes_for(["doors.locks", level, "charging.battery_level"]) == [
        "charging.get.battery_level",
        "doors.get.locks",
    ]


def test_loading_is_fast() -> None:
    import time

    start = time.perf_counter()
    load_catalog()
    assert time.perf_counter() - start < 0.05
