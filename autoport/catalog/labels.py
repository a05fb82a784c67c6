"""Human names of capabilities and properties, for the consent page (en-GB, de-DE)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from autoport.catalog.catalog import CATALOG, Catalog
from autoport.catalog.types import Capability, Property

Locale = Literal["en-GB", "de-DE"]
LOCALES: tuple[Locale, ...] = ("en-GB", "de-DE")
DEFAULT_LOCALE: Locale = "en-GB"


def normalize_locale(locale: str | None) -> Locale:
    """Map what a browser or a query string says to a supported locale (en-GB default)."""
    if locale and locale.replace("_", "-").lower().split("-")[0] == "de":
        return "de-DE"
    return DEFAULT_LOCALE


def label(item: Property | Capability, locale: str = DEFAULT_LOCALE) -> str:
    return item.label_de if normalize_locale(locale) == "de-DE" else item.label_en


@dataclass(frozen=True, slots=True)
class ConsentItem:
    property: Property
    label: str
    scope: str
    deprecated: bool


@dataclass(frozen=True, slots=True)
class ConsentGroup:
    capability: Capability
    label: str
    items: tuple[ConsentItem, ...]


def _resolve(item: Property | str, catalog: Catalog) -> Property:
    if isinstance(item, Property):
        return item
    if catalog.is_scope(item):
        return catalog.property_for_scope(item)
    capability, _, name = item.partition(".")
    return catalog.property(capability, name)


def group_for_consent(
    items: Iterable[Property | str], locale: str = DEFAULT_LOCALE, *, catalog: Catalog = CATALOG
) -> list[ConsentGroup]:
    """Group properties by capability with human names, in catalog order.

    ``items`` may be ``Property`` objects, scopes (``charging.get.battery_level``) or
    ``capability.property`` keys; anything else (``vehicle:data``) raises
    ``UnknownProperty``, so filter non-property scopes out first. Duplicates collapse.
    """
    wanted = {_resolve(item, catalog).key for item in items}
    groups: list[ConsentGroup] = []
    for cap in catalog.capabilities():
        chosen = tuple(
            ConsentItem(p, label(p, locale), p.scope, p.deprecated)
            for p in cap.properties
            if p.key in wanted
        )
        if chosen:
            groups.append(ConsentGroup(cap, label(cap, locale), chosen))
    return groups
