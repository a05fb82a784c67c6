"""The loaded level-13 catalog (``CATALOG``), read once from the committed level13.json."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

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

CATALOG_FILE = Path(__file__).with_name("level13.json")


class UnknownProperty(KeyError):
    """A capability, property or scope name that the catalog does not hold."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        # KeyError would show the message in quotes.
        return self.message


class UnknownCapability(UnknownProperty):
    pass


class Catalog:
    """All capability groups and properties; immutable after construction."""

    def __init__(
        self,
        capabilities: Iterable[Capability],
        units: Mapping[str, tuple[str, ...]],
        brands: Iterable[str] = (),
    ) -> None:
        self._capabilities = tuple(capabilities)
        self._by_name: Mapping[str, Capability] = MappingProxyType(
            {c.name: c for c in self._capabilities}
        )
        self._properties = tuple(p for c in self._capabilities for p in c.properties)
        self._by_scope: Mapping[str, Property] = MappingProxyType(
            {p.scope: p for p in self._properties}
        )
        self._by_key: Mapping[str, Property] = MappingProxyType(
            {p.key: p for p in self._properties}
        )
        self.units: Mapping[str, tuple[str, ...]] = MappingProxyType(dict(units))
        # The brand values the vehicle data response uses (underscore spellings).
        self.brands: tuple[str, ...] = tuple(brands)

    def capabilities(self) -> tuple[Capability, ...]:
        return self._capabilities

    def capability_names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def has_capability(self, name: str) -> bool:
        return name in self._by_name

    def capability(self, name: str) -> Capability:
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownCapability(f"unknown capability {name!r}") from None

    def property(self, capability: str, name: str) -> Property:
        prop = self._by_key.get(f"{capability}.{name}")
        if prop is None:
            cap = self.capability(capability)
            raise UnknownProperty(f"capability {cap.name!r} has no property {name!r}")
        return prop

    def get(self, capability: str, name: str) -> Property | None:
        """Like ``property`` but ``None`` for unknown names (cheap on hot paths)."""
        return self._by_key.get(f"{capability}.{name}")

    def properties(self) -> Iterator[Property]:
        return iter(self._properties)

    def __len__(self) -> int:
        return len(self._properties)

    def all_scopes(self) -> tuple[str, ...]:
        return tuple(self._by_scope)

    def property_for_scope(self, scope: str) -> Property:
        prop = self._by_scope.get(scope)
        if prop is None:
            raise UnknownProperty(f"unknown scope {scope!r} (expected <capability>.get.<property>)")
        return prop

    def is_scope(self, scope: str) -> bool:
        return scope in self._by_scope

    def scopes_for(self, props: Iterable[Property | str]) -> list[str]:
        """Scope names for properties given as ``Property`` or ``"capability.property"``.

        Result is in catalog order without duplicates, so equal grants give equal strings.
        """
        wanted: set[str] = set()
        for item in props:
            if isinstance(item, Property):
                wanted.add(item.scope)
            else:
                capability, _, name = item.partition(".")
                wanted.add(self.property(capability, name).scope)
        return [p.scope for p in self._properties if p.scope in wanted]


def _type_from_json(raw: Mapping[str, Any], units: Mapping[str, tuple[str, ...]]) -> DataType:
    kind = raw["kind"]
    if kind == "enum":
        return EnumType(tuple(raw["values"]))
    if kind == "quantity":
        return QuantityType(raw["quantity"], units[raw["quantity"]])
    if kind == "number":
        return NumberType(raw.get("minimum"), raw.get("maximum"))
    if kind == "integer":
        return IntegerType(raw.get("minimum"), raw.get("maximum"))
    if kind == "string":
        return StringType()
    if kind == "date-time":
        return DateTimeType()
    if kind == "object":
        fields = {name: _type_from_json(sub, units) for name, sub in raw["fields"].items()}
        return ObjectType(fields, frozenset(raw["required"]))
    raise ValueError(f"level13.json: unknown type kind {kind!r}")


def load_catalog(path: Path = CATALOG_FILE) -> Catalog:
    raw = json.loads(path.read_text(encoding="utf-8"))
    units = {kind: tuple(names) for kind, names in raw["units"].items()}
    capabilities = []
    for cap in raw["capabilities"]:
        props = tuple(
            Property(
                capability=cap["name"],
                name=p["name"],
                type=_type_from_json(p["type"], units),
                multiple=p["multiple"],
                deprecated=p["deprecated"],
                label_en=p["label_en"],
                label_de=p["label_de"],
            )
            for p in cap["properties"]
        )
        capabilities.append(Capability(cap["name"], cap["label_en"], cap["label_de"], props))
    return Catalog(capabilities, units, raw.get("brands", ()))


CATALOG: Catalog = load_catalog()
