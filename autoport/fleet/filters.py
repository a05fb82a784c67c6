"""The `filter` query parameter of `GET /v1/fleets/vehicles` (docs/fleet.md): URL-encoded
JSON, one member per field. The original documents one operator per field,

    {"status": {"operator": "in", "value": ["approved", "pending"]},
     "approved_at": {"operator": "gte", "value": "2026-01-01T00:00:00Z"}}

and the short form, an object of operator -> value, is accepted too (it can hold several
operators, e.g. a range):

    {"status": {"in": ["approved", "pending"]}, "brand": {"eq": "mercedes-benz"},
     "tags": {"contains": {"depot": "north"}}, "approved_at": {"gte": "...", "lt": "..."}}

`vin`, `status`, `brand`: `eq`, `in`. `tags`: `eq` (exactly these tags), `contains` (at
least these). `approved_at`, `inserted_at`: `eq`, `lt`, `gt`, `lte`, `gte` with ISO 8601
instants. Being lenient in what we accept, a bare value means `eq` (a list, `in`).
Anything else is refused with a detail naming the member (`filter.status.in[1]: ...`,
`filter.status.value[1]: ...` in the documented layout).

Every condition is SQL, tags included, so a filtered list pages like an unfiltered one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import Column, bindparam, text
from sqlalchemy.sql import ColumnElement, TextClause

from autoport.catalog.brands import canonical_brand
from autoport.db.tables.fleet import fleet_vehicles
from autoport.fleet.repository import Condition
from autoport.fleet.states import Status
from autoport.kit import jsonlimit
from autoport.kit.clock import from_iso
from autoport.kit.db import Dialect
from autoport.kit.errors import ApiError
from autoport.vehicles.vin import vin_problem

_SET_OPS = ("eq", "in")
_TIME_OPS = ("eq", "lt", "gt", "lte", "gte")
_TAG_OPS = ("eq", "contains")
# Bound the SQL parameters one filter may produce (both backends cap them).
MAX_IN_VALUES = 1000
MAX_TAGS = 100
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
    if len(value) > MAX_TAGS:
        raise _invalid(path, f"at most {MAX_TAGS} tags")
    return value


# (operator, value, the path that names the value in an error)
Operation = tuple[str, Any, str]


@dataclass
class VehicleFilter:
    sql: list[ColumnElement[bool]] = field(default_factory=list)
    tags_eq: dict[str, str] | None = None
    tags_contains: dict[str, str] | None = None

    def conditions(self, dialect: Dialect) -> list[Condition]:
        out: list[Condition] = list(self.sql)
        if self.tags_eq is not None:
            out += _tag_conditions(dialect, self.tags_eq, exact=True)
        if self.tags_contains is not None:
            out += _tag_conditions(dialect, self.tags_contains, exact=False)
        return out


def _tag_conditions(dialect: Dialect, tags: dict[str, str], *, exact: bool) -> list[TextClause]:
    """Tags are a JSON object in TEXT; both backends can list its members as (key,
    value) rows, so one shape of SQL serves both: each tag a row that must exist, and
    for `eq` no other member. Keys and values are bound parameters, never spliced."""
    each = (
        "json_each(fleet_vehicles.tags)"
        if dialect == "sqlite"
        else "jsonb_each_text(CAST(fleet_vehicles.tags AS jsonb))"
    )
    prefix = "tags_eq" if exact else "tags_contains"
    out: list[TextClause] = []
    for i, (name, value) in enumerate(sorted(tags.items())):
        k, v = f"{prefix}_k{i}", f"{prefix}_v{i}"
        out.append(
            text(
                f"EXISTS (SELECT 1 FROM {each} AS tag WHERE tag.key = :{k} AND tag.value = :{v})"  # noqa: S608 - fixed text
            ).bindparams(bindparam(k, name), bindparam(v, value))
        )
    if exact:
        n = f"{prefix}_n"
        out.append(
            text(f"(SELECT count(*) FROM {each} AS tag) = :{n}").bindparams(  # noqa: S608
                bindparam(n, len(tags))
            )
        )
    return out


def _operators(value: Any, path: str, ops: tuple[str, ...]) -> list[Operation]:
    allowed = ", ".join(ops)
    if isinstance(value, dict) and "operator" in value:
        # The original's layout: {"operator": ..., "value": ...}, one operator.
        for member in value:
            if member not in ("operator", "value"):
                raise _invalid(f"{path}.{member}", "unexpected member (give operator and value)")
        op = value["operator"]
        if not isinstance(op, str) or op not in ops:
            raise _invalid(f"{path}.operator", f"unknown operator {op!r} (allowed: {allowed})")
        if "value" not in value:
            raise _invalid(f"{path}.value", "missing")
        return [(op, value["value"], f"{path}.value")]
    if isinstance(value, dict):
        if not value:
            raise _invalid(path, f"expected one of the operators {allowed}")
        for op in value:
            if op not in ops:
                raise _invalid(f"{path}.{op}", f"unknown operator (allowed: {allowed})")
        return [(op, operand, f"{path}.{op}") for op, operand in value.items()]
    if isinstance(value, list) and "in" in ops:
        return [("in", value, f"{path}.in")]
    return [("eq", value, f"{path}.eq")]


def _set_condition(
    column: Column[Any], ops: list[Operation], convert: Callable[[Any, str], str]
) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    for op, value, path in ops:
        if op == "eq":
            out.append(column == convert(value, path))
        else:
            if not isinstance(value, list) or not value:
                raise _invalid(path, "expected a non-empty list")
            if len(value) > MAX_IN_VALUES:
                raise _invalid(path, f"at most {MAX_IN_VALUES} values")
            out.append(column.in_([convert(v, f"{path}[{i}]") for i, v in enumerate(value)]))
    return out


def parse_filter(text: str | None) -> VehicleFilter:
    result = VehicleFilter()
    if text is None or not text.strip():
        return result
    try:
        document = jsonlimit.loads(text)
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
            result.sql += _set_condition(table.vin, _operators(value, path, _SET_OPS), _vin)
        elif name == "status":
            result.sql += _set_condition(table.status, _operators(value, path, _SET_OPS), _status)
        elif name == "brand":
            result.sql += _set_condition(table.brand, _operators(value, path, _SET_OPS), _brand)
        elif name == "tags":
            for op, operand, at in _operators(value, path, _TAG_OPS):
                tags = _tags(operand, at)
                if op == "eq":
                    result.tags_eq = tags
                else:
                    result.tags_contains = tags
        elif name in ("approved_at", "inserted_at"):
            column = table.approved_at if name == "approved_at" else table.inserted_at
            for op, operand, at in _operators(value, path, _TIME_OPS):
                instant = _instant(operand, at)
                result.sql.append(
                    {
                        "eq": column == instant,
                        "lt": column < instant,
                        "gt": column > instant,
                        "lte": column <= instant,
                        "gte": column >= instant,
                    }[op]
                )
        else:
            raise _invalid(path, f"unknown field (allowed: {', '.join(FIELDS)})")
    return result
