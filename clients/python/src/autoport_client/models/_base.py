"""The runtime half of the typed models: value wrappers and the parser that the generated
classes (`_generated.py`) describe with their `_PROPERTIES` / `_FIELDS` tables.

Parsing never drops what it does not know: unknown capabilities, properties and object
fields land in `extra` (raw JSON), unknown enum values and units are kept as strings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U", bound=str)

# How one value is read: a kind name, or the generated class of an object-typed value.
Spec = str | type["ObjectValue"]


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a property could not be delivered (`{"reason", "description"}`)."""

    reason: str
    description: str


@dataclass(frozen=True, slots=True)
class Quantity(Generic[U]):
    """A measured value and its unit, e.g. `Quantity(7605.3, "kilometers")`."""

    value: float
    unit: U


@dataclass(frozen=True, slots=True)
class Value(Generic[T]):
    """One data point of a property. A property the answer does not contain is a Value
    whose `value` and `timestamp` are None (so attribute chains always type-check);
    a failed one has `failure` set and no `value`."""

    value: T | None = None
    timestamp: datetime | None = None
    failure: Failure | None = None

    @property
    def present(self) -> bool:
        return self.timestamp is not None or self.value is not None or self.failure is not None


_MISSING: Value[Any] = Value()


def missing() -> Value[Any]:
    return _MISSING


def parse_instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _parse(spec: Spec, raw: Any) -> Any:
    if isinstance(spec, type):
        return spec.from_dict(raw) if isinstance(raw, Mapping) else raw
    if spec == "date-time" and isinstance(raw, str):
        try:
            return parse_instant(raw)
        except ValueError:
            return raw
    if spec == "quantity" and isinstance(raw, Mapping) and "value" in raw and "unit" in raw:
        return Quantity(raw["value"], raw["unit"])
    return raw


def parse_wrapper(spec: Spec, raw: Any) -> Value[Any]:
    if not isinstance(raw, Mapping):
        return Value(value=_parse(spec, raw))
    failure = raw.get("failure")
    timestamp = raw.get("timestamp")
    return Value(
        value=_parse(spec, raw["data"]) if "data" in raw else None,
        timestamp=parse_instant(timestamp) if isinstance(timestamp, str) else None,
        failure=(
            Failure(str(failure.get("reason", "")), str(failure.get("description", "")))
            if isinstance(failure, Mapping)
            else None
        ),
    )


class ObjectValue:
    """A generated object-typed value (e.g. a door's lock state)."""

    __slots__ = ()
    _FIELDS: ClassVar[dict[str, Spec]]

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Any:
        known = {
            name: _parse(cls._FIELDS[name], v) for name, v in raw.items() if name in cls._FIELDS
        }
        extra = {name: v for name, v in raw.items() if name not in cls._FIELDS}
        for name in cls._FIELDS:
            known.setdefault(name, None)
        factory: Any = cls  # a generated dataclass: its fields are the table's
        return factory(**known, extra=extra)


class Capability:
    """A generated capability group: one attribute per catalog property."""

    __slots__ = ()
    _PROPERTIES: ClassVar[dict[str, tuple[bool, Spec]]]

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Any:
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for name, value in raw.items():
            if name not in cls._PROPERTIES:
                extra[name] = value
                continue
            multiple, spec = cls._PROPERTIES[name]
            wrappers = value if isinstance(value, list) else [value]
            parsed = [parse_wrapper(spec, wrapper) for wrapper in wrappers]
            if multiple:
                known[name] = parsed
            elif parsed:
                # A stream message lists every point of a single-valued property; the
                # attribute is the newest one (all of them stay in `raw`).
                known[name] = max(parsed, key=_instant_of)
        factory: Any = cls  # a generated dataclass: its fields are the table's
        return factory(**known, extra=extra)


_EARLIEST = datetime.min.replace(tzinfo=UTC)


def _instant_of(value: Value[Any]) -> datetime:
    return value.timestamp or _EARLIEST


class VehicleDataBase:
    __slots__ = ()
    _CAPABILITIES: ClassVar[dict[str, type[Capability]]]

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Any:
        """Parse a pull answer (`{"vin", "brand", <capability>: {...}}`) or a stream
        message's `data` (`{<capability>: {<property>: [...]}}`)."""
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for name, value in raw.items():
            if name in ("vin", "brand", "request_id"):
                known[name] = value
            elif name in cls._CAPABILITIES and isinstance(value, Mapping):
                known[name] = cls._CAPABILITIES[name].from_dict(value)
            else:
                extra[name] = value
        factory: Any = cls
        return factory(**known, extra=extra, raw=dict(raw))
