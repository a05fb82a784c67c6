"""Carmaker identifiers. Vehicle data emits the underscore form (`mercedes_benz`); the
eligibility and fleet endpoints are also spoken with hyphens (`mercedes-benz`), so input
accepts both spellings and `canonical_brand` turns either into the one we store.

Facts from the public level-13 interface description (vendored under reference/).
"""

from __future__ import annotations

BRANDS: frozenset[str] = frozenset(
    {
        "abarth", "alfaromeo", "alpine", "audi", "bmw", "cadillac", "chevrolet", "chrysler",
        "citroen", "cupra", "dacia", "dodge", "ds", "fiat", "ford", "honda", "hyundai",
        "iveco", "jaguar", "jeep", "kia", "lancia", "land_rover", "lexus", "man", "maserati",
        "mazda", "mercedes_benz", "mini", "mitsubishi", "nissan", "opel", "peugeot",
        "polestar", "porsche", "renault", "sandbox", "seat", "skoda", "smart", "subaru",
        "tesla", "toyota", "vauxhall", "volkswagen", "volvo_cars",
    }
)  # fmt: skip

# `unknown` is a value vehicle data may carry, never one a client may ask for.
UNKNOWN_BRAND = "unknown"


def canonical_brand(value: str) -> str | None:
    """`Mercedes-Benz`, `mercedes-benz`, `mercedes_benz` -> `mercedes_benz`; None if unknown."""
    brand = value.strip().lower().replace("-", "_")
    return brand if brand in BRANDS else None


def hyphenated(brand: str) -> str:
    """The spelling of the eligibility and fleet endpoints' examples."""
    return brand.replace("_", "-")
