"""JSON Schema (draft 2020-12, usable as OpenAPI 3.1 schemas) and example values.

Shared pieces (the failure object and one schema per quantity kind) are referenced, not
repeated; ``ref_prefix`` says where they live: ``#/$defs/`` for a standalone schema, or
``#/components/schemas/`` when the OpenAPI document embeds ``schema_definitions()``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from autoport.catalog.catalog import CATALOG, Catalog
from autoport.catalog.types import (
    Capability,
    DataType,
    DateTimeType,
    EnumType,
    IntegerType,
    NumberType,
    ObjectType,
    Property,
    QuantityType,
    StringType,
)
from autoport.catalog.validation import FAILURE_REASONS, WRAPPER_MEMBERS

Schema = dict[str, Any]

DEFS = "#/$defs/"
FAILURE_DEF = "L13Failure"
EXAMPLE_TIMESTAMP = "2024-05-14T08:30:00.000000Z"


def quantity_def_name(kind: str) -> str:
    return "L13Quantity_" + kind


def failure_schema() -> Schema:
    return {
        "type": "object",
        "title": "Failure",
        "properties": {
            "reason": {"type": "string", "enum": list(FAILURE_REASONS)},
            "description": {"type": "string"},
        },
        "required": ["reason", "description"],
        "additionalProperties": False,
    }


def quantity_schema(kind: str, units: Sequence[str]) -> Schema:
    return {
        "type": "object",
        "title": kind.replace("_", " ").capitalize(),
        "properties": {
            "unit": {"type": "string", "enum": list(units)},
            "value": {"type": "number"},
        },
        "required": ["unit", "value"],
        "additionalProperties": False,
    }


def schema_definitions(catalog: Catalog = CATALOG) -> dict[str, Schema]:
    """The shared schemas the others refer to, by name (for ``$defs`` or OpenAPI components)."""
    defs: dict[str, Schema] = {FAILURE_DEF: failure_schema()}
    for kind, units in catalog.units.items():
        defs[quantity_def_name(kind)] = quantity_schema(kind, units)
    return defs


def type_schema(type_: DataType, *, ref_prefix: str = DEFS) -> Schema:
    if isinstance(type_, EnumType):
        return {"type": "string", "enum": list(type_.values)}
    if isinstance(type_, QuantityType):
        return {"$ref": ref_prefix + quantity_def_name(type_.kind)}
    if isinstance(type_, (NumberType, IntegerType)):
        schema: Schema = {"type": "number" if isinstance(type_, NumberType) else "integer"}
        if type_.minimum is not None:
            schema["minimum"] = type_.minimum
        if type_.maximum is not None:
            schema["maximum"] = type_.maximum
        return schema
    if isinstance(type_, StringType):
        return {"type": "string"}
    if isinstance(type_, DateTimeType):
        return {"type": "string", "format": "date-time"}
    if isinstance(type_, ObjectType):
        return {
            "type": "object",
            "properties": {
                n: type_schema(t, ref_prefix=ref_prefix) for n, t in type_.fields.items()
            },
            "required": sorted(type_.required),
            "additionalProperties": False,
        }
    raise TypeError(f"unsupported catalog type {type_!r}")


def wrapper_schema(prop: Property, *, ref_prefix: str = DEFS) -> Schema:
    """One data point: ``{data?, failure?, timestamp?}``, at least one member."""
    return {
        "type": "object",
        "properties": {
            "data": type_schema(prop.type, ref_prefix=ref_prefix),
            "failure": {"$ref": ref_prefix + FAILURE_DEF},
            "timestamp": {"type": "string", "format": "date-time"},
        },
        "minProperties": 1,
        "additionalProperties": False,
    }


def property_schema(prop: Property, *, ref_prefix: str = DEFS) -> Schema:
    """The property's value in a response: a wrapper, or an array of them if ``multiple``."""
    inner = wrapper_schema(prop, ref_prefix=ref_prefix)
    schema: Schema = {"type": "array", "items": inner} if prop.multiple else inner
    schema = {"title": prop.label_en, **schema}
    if prop.deprecated:
        schema["deprecated"] = True
    return schema


def capability_schema(cap: Capability, *, ref_prefix: str = DEFS) -> Schema:
    return {
        "type": "object",
        "title": cap.label_en,
        "properties": {p.name: property_schema(p, ref_prefix=ref_prefix) for p in cap.properties},
        "additionalProperties": False,
    }


def vehicle_data_response_schema(
    *, catalog: Catalog = CATALOG, ref_prefix: str = DEFS, strict_brand: bool = True
) -> Schema:
    """Schema of the pull response: ``request_id``, ``vin``, ``brand`` and all groups.

    With the default ``ref_prefix`` the shared definitions are included under ``$defs``;
    with another prefix the caller publishes ``schema_definitions()`` there itself.
    """
    brand: Schema = {"type": "string"}
    if strict_brand and catalog.brands:
        brand["enum"] = list(catalog.brands)
    properties: dict[str, Schema] = {
        "request_id": {"type": "string"},
        "vin": {"type": "string"},
        "brand": brand,
    }
    for cap in catalog.capabilities():
        properties[cap.name] = capability_schema(cap, ref_prefix=ref_prefix)
    schema: Schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Vehicle data (level 13)",
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if ref_prefix == DEFS:
        schema["$defs"] = schema_definitions(catalog)
    return schema


# --- example values -----------------------------------------------------------------


def example_data(type_: DataType, rng: random.Random | None = None) -> Any:
    """A valid ``data`` value of ``type_``: fixed without ``rng``, random with one."""
    if isinstance(type_, EnumType):
        return rng.choice(type_.values) if rng else type_.values[0]
    if isinstance(type_, QuantityType):
        unit = rng.choice(type_.units) if rng else type_.units[0]
        return {"unit": unit, "value": round(rng.uniform(-1000, 1000), 3) if rng else 42.5}
    if isinstance(type_, NumberType):
        low = -1e6 if type_.minimum is None else type_.minimum
        high = 1e6 if type_.maximum is None else type_.maximum
        if rng:
            return round(rng.uniform(low, high), 6)
        if type_.minimum is None and type_.maximum is None:
            return 12.5
        return (low + high) / 2
    if isinstance(type_, IntegerType):
        low_i = -(2**31) if type_.minimum is None else type_.minimum
        high_i = 2**31 - 1 if type_.maximum is None else type_.maximum
        return rng.randint(low_i, high_i) if rng else max(low_i, min(high_i, 1))
    if isinstance(type_, StringType):
        return f"sample-{rng.randint(0, 9999)}" if rng else "sample"
    if isinstance(type_, DateTimeType):
        if rng:
            day = f"20{rng.randint(18, 30)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            return f"{day}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00.000000Z"
        return EXAMPLE_TIMESTAMP
    if isinstance(type_, ObjectType):
        return {name: example_data(sub, rng) for name, sub in type_.fields.items()}
    raise TypeError(f"unsupported catalog type {type_!r}")


def example_value(
    prop: Property, *, timestamp: str = EXAMPLE_TIMESTAMP, rng: random.Random | None = None
) -> dict[str, Any] | list[dict[str, Any]]:
    """A valid value of ``prop`` as served: a wrapper, or a list of them if ``multiple``."""
    if prop.multiple:
        count = rng.randint(0, 3) if rng else 2
        return [
            {"data": example_data(prop.type, rng), "timestamp": timestamp} for _ in range(count)
        ]
    return {"data": example_data(prop.type, rng), "timestamp": timestamp}


def example_response(
    *, catalog: Catalog = CATALOG, vin: str = "EXV1N000000000001", brand: str = "sandbox"
) -> dict[str, Any]:
    """A full pull response with every property of every group."""
    response: dict[str, Any] = {
        "request_id": "00000000-0000-4000-8000-000000000000",
        "vin": vin,
        "brand": brand,
    }
    for cap in catalog.capabilities():
        response[cap.name] = {p.name: example_value(p) for p in cap.properties}
    return response


__all__ = [
    "DEFS",
    "EXAMPLE_TIMESTAMP",
    "FAILURE_DEF",
    "WRAPPER_MEMBERS",
    "capability_schema",
    "example_data",
    "example_response",
    "example_value",
    "failure_schema",
    "property_schema",
    "quantity_def_name",
    "quantity_schema",
    "schema_definitions",
    "type_schema",
    "vehicle_data_response_schema",
    "wrapper_schema",
]
