"""JSON Schemas and consent labels generated from the catalog."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from autoport.catalog import CATALOG, UnknownProperty
from autoport.catalog.labels import group_for_consent, label, normalize_locale
from autoport.catalog.schemas import (
    example_response,
    property_schema,
    schema_definitions,
    vehicle_data_response_schema,
)

jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture(scope="module")
def validator() -> Any:
    schema = vehicle_data_response_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_response_schema_accepts_the_full_example(validator: Any) -> None:
    response = example_response()
    assert set(response) == {"request_id", "vin", "brand", *CATALOG.capability_names()}
    errors = [e.message for e in validator.iter_errors(response)]
    assert errors == []
    # Every group is optional.
    assert validator.is_valid({"request_id": "r", "vin": "V", "brand": "sandbox"})


@pytest.mark.parametrize(
    ("capability", "member", "bad"),
    [
        ("charging", "battery_level", {"data": 1.7}),
        ("charging", "battery_level", {"data": True}),
        ("charging", "battery_level", {}),
        ("charging", "battery_level", {"value": 1}),
        ("charging", "battery_level", {"failure": {"reason": "nap", "description": "x"}}),
        ("charging", "battery_level", {"failure": {"reason": "pending"}}),
        ("charging", "estimated_range", {"data": {"unit": "parsecs", "value": 1}}),
        ("charging", "preconditioning_scheduled_time", {"data": {"hour": 24, "minute": 0}}),
        ("doors", "locks", [{"data": {"location": "middle", "lock_state": "locked"}}]),
        ("doors", "locks", {"data": {"location": "front_left", "lock_state": "locked"}}),
        ("doors", "colour", {"data": "red"}),
    ],
)
def test_response_schema_refuses_what_validation_refuses(
    validator: Any, capability: str, member: str, bad: Any
) -> None:
    response = {"vin": "V", capability: {member: bad}}
    assert not validator.is_valid(response)


def test_brand_is_an_enum_with_sandbox() -> None:
    brand = vehicle_data_response_schema()["properties"]["brand"]
    assert "sandbox" in brand["enum"]
    assert "unknown" in brand["enum"]
    assert "mercedes_benz" in brand["enum"]


def test_openapi_components_use_the_given_prefix() -> None:
    schema = vehicle_data_response_schema(ref_prefix="#/components/schemas/")
    assert "$defs" not in schema
    text = json.dumps(schema)
    assert '"#/components/schemas/L13Failure"' in text
    assert "#/$defs/" not in text
    assert set(schema_definitions()) >= {"L13Failure", "L13Quantity_length"}


def test_deprecated_and_multiple_in_schema() -> None:
    deprecated = property_schema(CATALOG.property("charging", "charging_rate_kw"))
    assert deprecated["deprecated"] is True
    locks = property_schema(CATALOG.property("doors", "locks"))
    assert locks["type"] == "array"
    assert locks["items"]["additionalProperties"] is False


def test_schema_generation_does_not_share_mutable_parts() -> None:
    first = vehicle_data_response_schema()
    pristine = copy.deepcopy(first)
    first["properties"]["charging"]["properties"]["battery_level"]["title"] = "changed"
    assert vehicle_data_response_schema() == pristine


def test_labels() -> None:
    level = CATALOG.property("charging", "battery_level")
    assert label(level, "en-GB") == "Battery level"
    assert label(level, "de-DE") == "Batterieladestand"
    assert label(CATALOG.capability("doors"), "de-DE") == "Türen"
    assert normalize_locale("de") == "de-DE"
    assert normalize_locale("fr-FR") == "en-GB"
    assert normalize_locale(None) == "en-GB"


def test_group_for_consent() -> None:
    groups = group_for_consent(
        [
            "doors.get.locks",
            "charging.get.battery_level",
            "charging.estimated_range",
            "doors.locks",
        ],
        "de-DE",
    )
    assert [(g.capability.name, g.label) for g in groups] == [
        ("charging", "Laden"),
        ("doors", "Türen"),
    ]
    assert [(i.scope, i.label) for i in groups[0].items] == [
        ("charging.get.battery_level", "Batterieladestand"),
        ("charging.get.estimated_range", "Geschätzte Reichweite"),
    ]
    assert [i.scope for i in groups[1].items] == ["doors.get.locks"]
    with pytest.raises(UnknownProperty):
        group_for_consent(["vehicle:data"])
