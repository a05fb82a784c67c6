"""OpenAPI descriptions of the vehicle data answers, generated from the catalog."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from autoport.catalog.schemas import DEFS, schema_definitions, vehicle_data_response_schema


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    # The route's schema sits inside the OpenAPI document, where "#/$defs/..." would not
    # resolve: the few shared definitions (failure, quantities) are copied in place.
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(DEFS):
            return _inline(definitions[ref[len(DEFS) :]], definitions)
        return {key: _inline(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    return node


@lru_cache(maxsize=1)
def pull_response_schema() -> dict[str, Any]:
    schema = vehicle_data_response_schema(strict_brand=False)
    schema.pop("$schema", None)
    schema.pop("$defs", None)
    inlined: dict[str, Any] = _inline(schema, schema_definitions())
    return inlined


def history_response_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "request_id": {"type": "string"},
            "vin": {"type": "string"},
            "property": {"type": "string", "examples": ["charging.battery_level"]},
            "values": {
                "type": "array",
                "description": "Newest first: each a property wrapper, or for array "
                "properties the whole array of wrappers",
                "items": {},
            },
            "next_cursor": {"type": ["string", "null"]},
        },
        "required": ["request_id", "vin", "property", "values", "next_cursor"],
    }
