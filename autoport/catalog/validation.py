"""Validation of incoming data points against the catalog.

This runs on the ingestion hot path, so every property's checks are compiled once into
closures; a call never walks the type tree. Inner checks raise a cheap internal
exception that collects the path on the way out; the public ``DataPointError`` with the
full path (``doors.locks[2].data.location``) is only built when something is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from autoport.catalog.catalog import CATALOG, Catalog
from autoport.catalog.types import (
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

FAILURE_REASONS: tuple[str, ...] = (
    "rate_limit",
    "execution_timeout",
    "format_error",
    "unauthorised",
    "unknown",
    "pending",
    "oem_error",
    "privacy_mode_active",
)
WRAPPER_MEMBERS: tuple[str, ...] = ("data", "failure", "timestamp")

Checker = Callable[[Any], Any]


class DataPointError(ValueError):
    """A data point does not fit the catalog; ``path`` says where, ``message`` what."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class _Invalid(Exception):
    """Internal: raised by compiled checks; ``where`` holds path parts innermost first."""

    __slots__ = ("message", "where")

    def __init__(self, message: str, *where: str) -> None:
        super().__init__(message)
        self.message = message
        self.where: list[str] = list(where)

    def at(self, prefix: str) -> DataPointError:
        return DataPointError(prefix + "".join(reversed(self.where)), self.message)


def json_type(value: object) -> str:
    """The JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _fmt_bound(bound: float) -> str:
    return repr(bound)


# --- compilers, one per type kind ---------------------------------------------------


def _compile_enum(values: tuple[str, ...]) -> Checker:
    allowed = frozenset(values)
    listing = ", ".join(values)

    def check(value: Any) -> Any:
        if value.__class__ is str and value in allowed:
            return value
        if not isinstance(value, str):
            raise _Invalid(f"expected a string, got {json_type(value)}")
        if value in allowed:
            return value
        raise _Invalid(f"{value!r} is not one of {listing}")

    return check


def _compile_number(minimum: float | None, maximum: float | None) -> Checker:
    low = -math.inf if minimum is None else minimum
    high = math.inf if maximum is None else maximum
    isfinite = math.isfinite

    def check(value: Any) -> Any:
        cls = value.__class__
        # bool is a subclass of int but never a number in JSON terms.
        if cls is not float and cls is not int:
            raise _Invalid(f"expected a number, got {json_type(value)}")
        if cls is float and not isfinite(value):
            raise _Invalid(f"{value!r} is not a finite number")
        if value < low:
            raise _Invalid(f"{value!r} is below {_fmt_bound(low)}")
        if value > high:
            raise _Invalid(f"{value!r} is above {_fmt_bound(high)}")
        return value

    return check


def _compile_integer(minimum: int | None, maximum: int | None) -> Checker:
    low = -math.inf if minimum is None else minimum
    high = math.inf if maximum is None else maximum

    def check(value: Any) -> Any:
        cls = value.__class__
        if cls is not int:
            # Some senders serialise every number as a float; 3.0 is still the integer 3.
            if cls is float and value.is_integer():
                value = int(value)
            elif cls is float:
                raise _Invalid(f"expected an integer, got {value!r}")
            else:
                raise _Invalid(f"expected an integer, got {json_type(value)}")
        if value < low:
            raise _Invalid(f"{value!r} is below {low!r}")
        if value > high:
            raise _Invalid(f"{value!r} is above {high!r}")
        return value

    return check


def _check_string(value: Any) -> Any:
    if value.__class__ is str or isinstance(value, str):
        return value
    raise _Invalid(f"expected a string, got {json_type(value)}")


def normalize_datetime(value: Any) -> str:
    """ISO 8601 in, UTC with microseconds and ``Z`` out (``2018-11-06T10:20:37.094533Z``).

    Offsets and missing fractions are accepted; a value without an offset is taken as
    UTC, which is what the interface sends. Raises ``TypeError`` for a non-string and
    ``ValueError`` for a malformed one, each with the message for the sender.
    """
    if not isinstance(value, str):
        raise TypeError(f"expected a date-time string, got {json_type(value)}")
    # fromisoformat also takes dates alone, week dates and hour-only times; the
    # interface always sends a full date and time, so insist on that shape.
    if len(value) < 19 or value[10] not in "Tt " or value[13] != ":" or value[16] != ":":
        raise ValueError(f"{value!r} is not an ISO 8601 date-time")
    try:
        moment = datetime.fromisoformat(value)
        offset = moment.utcoffset()
        if offset:
            # Overflows for offsets that push year 1 or 9999 out of range.
            moment = moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValueError(f"{value!r} is not an ISO 8601 date-time") from None
    if (
        not offset
        and len(value) == 27
        and value[26] == "Z"
        and value[10] == "T"
        and value[19] == "."
    ):
        return value  # already canonical
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _check_datetime(value: Any) -> Any:
    try:
        return normalize_datetime(value)
    except (TypeError, ValueError) as exc:
        raise _Invalid(str(exc)) from None


def _compile_object(fields: Mapping[str, Checker], required: frozenset[str]) -> Checker:
    items = tuple(fields.items())
    known = frozenset(fields)
    all_required = required == known

    def check(value: Any) -> Any:
        if value.__class__ is not dict:
            if isinstance(value, dict):
                value = dict(value)
            else:
                raise _Invalid(f"expected an object, got {json_type(value)}")
        out: dict[str, Any] | None = None
        present = 0
        for name, sub in items:
            try:
                item = value[name]
            except KeyError:
                if all_required or name in required:
                    raise _Invalid(f"missing required field {name!r}") from None
                continue
            present += 1
            try:
                new = sub(item)
            except _Invalid as exc:
                exc.where.append("." + name)
                raise
            if new is not item:
                if out is None:
                    out = dict(value)
                out[name] = new
        if present != len(value):
            for name in value:
                if name not in known:
                    raise _Invalid(f"unknown field {name!r}")
        return value if out is None else out

    return check


def _compile_quantity(kind: str, units: tuple[str, ...]) -> Checker:
    allowed = frozenset(units)
    listing = ", ".join(units)
    check_value = _compile_number(None, None)

    def check(value: Any) -> Any:
        if value.__class__ is not dict:
            if isinstance(value, dict):
                value = dict(value)
            else:
                raise _Invalid(f"expected a {kind} object {{unit, value}}, got {json_type(value)}")
        try:
            unit = value["unit"]
        except KeyError:
            raise _Invalid("missing required field 'unit'") from None
        try:
            number = value["value"]
        except KeyError:
            raise _Invalid("missing required field 'value'") from None
        if len(value) != 2:
            for name in value:
                if name != "unit" and name != "value":
                    raise _Invalid(f"unknown field {name!r}")
        if unit.__class__ is not str or unit not in allowed:
            if not isinstance(unit, str):
                raise _Invalid(f"expected a string, got {json_type(unit)}", ".unit")
            if unit not in allowed:
                raise _Invalid(f"unit {unit!r} is not one of {listing}")
        try:
            check_value(number)
        except _Invalid as exc:
            exc.where.append(".value")
            raise
        return value

    return check


def compile_type(type_: DataType) -> Checker:
    """A checker for one value of ``type_``: returns the normalized value or raises."""
    if isinstance(type_, EnumType):
        return _compile_enum(type_.values)
    if isinstance(type_, QuantityType):
        return _compile_quantity(type_.kind, type_.units)
    if isinstance(type_, NumberType):
        return _compile_number(type_.minimum, type_.maximum)
    if isinstance(type_, IntegerType):
        return _compile_integer(type_.minimum, type_.maximum)
    if isinstance(type_, StringType):
        return _check_string
    if isinstance(type_, DateTimeType):
        return _check_datetime
    if isinstance(type_, ObjectType):
        return _compile_object(
            {n: compile_type(t) for n, t in type_.fields.items()}, type_.required
        )
    raise TypeError(f"unsupported catalog type {type_!r}")


_check_failure = _compile_object(
    {"reason": _compile_enum(FAILURE_REASONS), "description": _check_string},
    frozenset({"reason", "description"}),
)
_MEMBERS_LISTING = ", ".join(WRAPPER_MEMBERS)


def _compile_wrapper(check_data: Checker) -> Checker:
    def check(wrapper: Any) -> dict[str, Any]:
        if wrapper.__class__ is not dict:
            if isinstance(wrapper, dict):
                wrapper = dict(wrapper)
            else:
                raise _Invalid(f"expected a property wrapper object, got {json_type(wrapper)}")
        out: dict[str, Any] = {}
        if "data" in wrapper:
            try:
                out["data"] = check_data(wrapper["data"])
            except _Invalid as exc:
                exc.where.append(".data")
                raise
        if "failure" in wrapper:
            try:
                out["failure"] = _check_failure(wrapper["failure"])
            except _Invalid as exc:
                exc.where.append(".failure")
                raise
        if "timestamp" in wrapper:
            try:
                out["timestamp"] = _check_datetime(wrapper["timestamp"])
            except _Invalid as exc:
                exc.where.append(".timestamp")
                raise
        if len(out) != len(wrapper):
            for name in wrapper:
                if name not in out:
                    raise _Invalid(
                        f"unknown member {name!r} (a wrapper has only {_MEMBERS_LISTING})"
                    )
        if not out:
            raise _Invalid(f"wrapper needs at least one of {_MEMBERS_LISTING}")
        return out

    return check


def _compile_list(check_wrapper: Checker) -> Checker:
    def check(value: Any) -> list[dict[str, Any]]:
        if value.__class__ is not list and not isinstance(value, (list, tuple)):
            raise _Invalid(f"expected an array of property wrappers, got {json_type(value)}")
        out = []
        for index, item in enumerate(value):
            try:
                out.append(check_wrapper(item))
            except _Invalid as exc:
                exc.where.append(f"[{index}]")
                raise
        return out

    return check


class _Compiled:
    __slots__ = ("data", "prop", "value", "wrapper")

    def __init__(self, prop: Property) -> None:
        self.prop = prop
        self.data = compile_type(prop.type)
        self.wrapper = _compile_wrapper(self.data)
        self.value: Checker = _compile_list(self.wrapper) if prop.multiple else self.wrapper


def _compile_catalog(catalog: Catalog) -> dict[str, _Compiled]:
    return {prop.key: _Compiled(prop) for prop in catalog.properties()}


_COMPILED = _compile_catalog(CATALOG)


def _compiled(prop: Property) -> _Compiled:
    entry = _COMPILED.get(prop.key)
    if entry is not None and entry.prop is prop:
        return entry
    # A property built outside the loaded catalog (tests, tools): compile it afresh.
    return _Compiled(prop)


# --- public API -------------------------------------------------------------------------


def validate_wrapper(prop: Property, wrapper: object, *, path: str | None = None) -> dict[str, Any]:
    """Check one property wrapper ``{data?, failure?, timestamp?}`` and normalize it.

    ``path`` is the location shown in errors (default ``capability.property``). Values
    that are already normal may be returned as the caller's own objects, not copies.
    """
    try:
        result: dict[str, Any] = _compiled(prop).wrapper(wrapper)
    except _Invalid as exc:
        raise exc.at(prop.key if path is None else path) from None
    return result


def validate_property_value(
    prop: Property, value: object, *, path: str | None = None
) -> dict[str, Any] | list[dict[str, Any]]:
    """Check a property's value: one wrapper, or for ``multiple`` properties a list of them."""
    try:
        result: dict[str, Any] | list[dict[str, Any]] = _compiled(prop).value(value)
    except _Invalid as exc:
        raise exc.at(prop.key if path is None else path) from None
    return result


def validate_data(prop: Property, data: object, *, path: str | None = None) -> Any:
    """Check a bare ``data`` value (no wrapper) of ``prop``."""
    try:
        return _compiled(prop).data(data)
    except _Invalid as exc:
        raise exc.at(prop.key if path is None else path) from None


def validate_capabilities(
    groups: object, *, catalog: Catalog = CATALOG, path: str = ""
) -> dict[str, dict[str, Any]]:
    """Check ``{capability: {property: wrapper or [wrappers]}}`` (pull and stream layout)."""
    prefix = f"{path}." if path else ""
    if not isinstance(groups, dict):
        raise DataPointError(
            path or "(root)", f"expected an object of capabilities, got {json_type(groups)}"
        )
    out: dict[str, dict[str, Any]] = {}
    for cap_name, members in groups.items():
        cap_path = f"{prefix}{cap_name}"
        if not catalog.has_capability(cap_name):
            raise DataPointError(cap_path, f"unknown capability {cap_name!r}")
        if not isinstance(members, dict):
            raise DataPointError(
                cap_path, f"expected an object of properties, got {json_type(members)}"
            )
        group: dict[str, Any] = {}
        for prop_name, value in members.items():
            prop = catalog.get(cap_name, prop_name)
            if prop is None:
                raise DataPointError(
                    f"{cap_path}.{prop_name}",
                    f"capability {cap_name!r} has no property {prop_name!r}",
                )
            group[prop_name] = validate_property_value(prop, value, path=f"{cap_path}.{prop_name}")
        out[cap_name] = group
    return out
