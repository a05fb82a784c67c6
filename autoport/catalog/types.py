"""Immutable model of the level-13 capability catalog.

The model is built once from ``level13.json``; validation, JSON Schemas, scope names and
consent-page labels are all derived from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class EnumType:
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuantityType:
    """A measurement: the object ``{"unit": one of units, "value": number}``."""

    kind: str
    units: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NumberType:
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True, slots=True)
class IntegerType:
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True, slots=True)
class StringType:
    pass


@dataclass(frozen=True, slots=True)
class DateTimeType:
    pass


@dataclass(frozen=True, slots=True)
class ObjectType:
    """A nested object; ``fields`` keeps the catalog's field order and is read-only."""

    fields: Mapping[str, DataType]
    required: frozenset[str]

    def __post_init__(self) -> None:
        # Callers may pass a plain dict; freeze it so the type stays immutable.
        if not isinstance(self.fields, MappingProxyType):
            object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    def __hash__(self) -> int:
        return hash((tuple(self.fields.items()), self.required))


DataType: TypeAlias = (
    EnumType | QuantityType | NumberType | IntegerType | StringType | DateTimeType | ObjectType
)


@dataclass(frozen=True, slots=True)
class Property:
    capability: str
    name: str
    type: DataType
    multiple: bool
    deprecated: bool
    label_en: str
    label_de: str
    # Precomputed because both are used per data point on the ingestion path.
    scope: str = field(init=False, compare=False)
    """``<capability>.get.<property>``, the OAuth scope that grants reading it."""
    key: str = field(init=False, compare=False)
    """``<capability>.<property>``, the path prefix of validation errors."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", f"{self.capability}.get.{self.name}")
        object.__setattr__(self, "key", f"{self.capability}.{self.name}")


@dataclass(frozen=True, slots=True)
class Capability:
    name: str
    label_en: str
    label_de: str
    properties: tuple[Property, ...]
    _by_name: Mapping[str, Property] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", MappingProxyType({p.name: p for p in self.properties}))

    def property(self, name: str) -> Property | None:
        return self._by_name.get(name)

    def __iter__(self) -> Iterator[Property]:
        return iter(self.properties)

    def __len__(self) -> int:
        return len(self.properties)
