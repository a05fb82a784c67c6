"""Human names of capabilities and properties, for the consent page and the console
(en-GB, de-DE): the catalog's, and those of the capabilities that only have commands."""

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


# Capabilities with commands (commands.json) but no data in the catalog, so no catalog
# label: (en-GB, de-DE). tests/console/test_translations.py checks every command's
# capability has a name.
COMMAND_ONLY_CAPABILITIES: dict[str, tuple[str, str]] = {
    "browser": ("Browser", "Browser"),
    "graphics": ("Graphics", "Grafik"),
    "heart_rate": ("Heart rate", "Herzfrequenz"),
    "historical": ("History", "Verlauf"),
    "home_charger": ("Home charger", "Wallbox"),
    "multi_command": ("Several commands", "Mehrere Befehle"),
    "navi_destination": ("Navigation destination", "Navigationsziel"),
    "parking_ticket": ("Parking ticket", "Parkschein"),
    "text_input": ("Text input", "Texteingabe"),
    "valet_mode": ("Valet mode", "Valet-Modus"),
    "video_handover": ("Video handover", "Videoübergabe"),
    "wake_up": ("Wake up", "Aufwecken"),
    "wi_fi": ("Wi-Fi", "WLAN"),
}


def capability_label(name: str, locale: str = DEFAULT_LOCALE, catalog: Catalog = CATALOG) -> str:
    """The name of a capability, one with data (the catalog's label) or one with commands
    only; an unknown one as its words ("some_thing" -> "Some thing")."""
    if catalog.has_capability(name):
        return label(catalog.capability(name), locale)
    en, de = COMMAND_ONLY_CAPABILITIES.get(name, (name.replace("_", " ").capitalize(),) * 2)
    return de if normalize_locale(locale) == "de-DE" else en


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
