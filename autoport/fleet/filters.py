"""The `filter` query parameter of `GET /v1/fleets/vehicles` (interface.md): URL-encoded
JSON, one member per field, each an object of operator -> value:

    {"status": {"in": ["approved", "pending"]}, "brand": {"eq": "mercedes-benz"},
     "tags": {"contains": {"depot": "north"}}, "approved_at": {"gte": "2026-01-01T00:00:00Z"}}

`vin`, `status`, `brand`: `eq`, `in`. `tags`: `eq` (exactly these tags), `contains` (at
least these). `approved_at`, `inserted_at`: `eq`, `lt`, `gt`, `lte`, `gte` with ISO 8601
instants. Being lenient in what we accept, a bare value means `eq` (a list, `in`).
Anything else is refused with a detail naming the member (`filter.status.in[1]: ...`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import Column
from sqlalchemy.sql import ColumnElement

from autoport.db.tables.fleet import fleet_vehicles
from autoport.fleet.states import Status
from autoport.kit.brands import canonical_brand
from autoport.kit.clock import from_iso
from autoport.kit.errors import ApiError
from autoport.kit.vin import vin_problem

_SET_OPS = ("eq", "in")
_TIME_OPS = ("eq", "lt", "gt", "lte", "gte")
_TAG_OPS = ("eq", "contains")
# Bound the SQL parameters one filter may produce (both backends cap them).
MAX_IN_VALUES = 1000
FIELDS = ("vin", "status", "brand", "tags", "approved_at", "inserted_at")


def _invalid(path: str, message: str) -> ApiError:
    return ApiError(422, f"{path}: {message}", source=path, title="Invalid filter")


def _status(value: Any, path: str) -> str:
    if not isinstance(value, str) or value not in Status.__members__:
        allowed = ", ".join(Status.__members__)
        raise _invalid(path, f"unknown status {value!r} (one of {allowed})")
    return value


def _brand(value: Any, path: str) -> str:
    brand = canonical_brand(value) if isinstance(value, str) else None
    if brand is None:
        raise _invalid(path, f"unknown brand {value!r}")
    return brand


def _vin(value: Any, path: str) -> str:
    problem = vin_problem(value)
    if problem is not None:
        raise _invalid(path, problem)
    assert isinstance(value, str)
    return value


def _instant(value: Any, path: str) -> int:
    if not isinstance(value, str):
        raise _invalid(path, "expected an ISO 8601 instant such as 2026-01-31T12:00:00Z")
    try:
        return from_iso(value)
    except ValueError:
        raise _invalid(path, f"not an ISO 8601 instant: {value!r}") from None


def _tags(value: Any, path: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _invalid(path, "expected an object of strings")
    return value


@dataclass
class VehicleFilter:
    sql: list[ColumnElement[bool]] = field(default_factory=list)
    tags_eq: dict[str, str] | None = None
    tags_contains: dict[str, str] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        return self.sql

    def matches_tags(self, tags: dict[str, str]) -> bool:
        # Tags are a JSON document; comparing them in Python keeps one code path for
        # both backends (a fleet list is scoped to one application anyway).
        if self.tags_eq is not None and tags != self.tags_eq:
            return False
        if self.tags_contains is not None:
            return all(tags.get(k) == v for k, v in self.tags_contains.items())
        return True


def _operators(value: Any, path: str, ops: tuple[str, ...]) -> dict[str, Any]:
    if isinstance(value, dict):
        if not value:
            raise _invalid(path, f"expected one of the operators {', '.join(ops)}")
        for op in value:
            if op not in ops:
                raise _invalid(f"{path}.{op}", f"unknown operator (allowed: {', '.join(ops)})")
        return value
    if isinstance(value, list) and "in" in ops:
        return {"in": value}
    return {"eq": value}


def _set_condition(
    column: Column[Any], ops: dict[str, Any], path: str, convert: Callable[[Any, str], str]
) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    for op, value in ops.items():
        if op == "eq":
            out.append(column == convert(value, f"{path}.eq"))
        else:
            if not isinstance(value, list) or not value:
                raise _invalid(f"{path}.in", "expected a non-empty list")
            if len(value) > MAX_IN_VALUES:
                raise _invalid(f"{path}.in", f"at most {MAX_IN_VALUES} values")
            out.append(column.in_([convert(v, f"{path}.in[{i}]") for i, v in enumerate(value)]))
    return out


def parse_filter(text: str | None) -> VehicleFilter:
    result = VehicleFilter()
    if text is None or not text.strip():
        return result
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise ApiError(
            400, f"filter: not valid JSON: {error}", source="filter", title="Invalid filter"
        ) from None
    if not isinstance(document, dict):
        raise _invalid("filter", "expected a JSON object of fields")
    table = fleet_vehicles.c
    for name, value in document.items():
        path = f"filter.{name}"
        if name == "vin":
            result.sql += _set_condition(table.vin, _operators(value, path, _SET_OPS), path, _vin)
        elif name == "status":
            result.sql += _set_condition(
                table.status, _operators(value, path, _SET_OPS), path, _status
            )
        elif name == "brand":
            result.sql += _set_condition(
                table.brand, _operators(value, path, _SET_OPS), path, _brand
            )
        elif name == "tags":
            ops = _operators(value, path, _TAG_OPS)
            if "eq" in ops:
                result.tags_eq = _tags(ops["eq"], f"{path}.eq")
            if "contains" in ops:
                result.tags_contains = _tags(ops["contains"], f"{path}.contains")
        elif name in ("approved_at", "inserted_at"):
            column = table.approved_at if name == "approved_at" else table.inserted_at
            for op, raw in _operators(value, path, _TIME_OPS).items():
                at = _instant(raw, f"{path}.{op}")
                result.sql.append(
                    {
                        "eq": column == at,
                        "lt": column < at,
                        "gt": column > at,
                        "lte": column <= at,
                        "gte": column >= at,
                    }[op]
                )
        else:
            raise _invalid(path, f"unknown field (allowed: {', '.join(FIELDS)})")
    return result
