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


# The pseudo-brand of the emulated carmaker: it exists only in the sandbox environment.
SANDBOX_BRAND = "sandbox"


# World manufacturer identifiers (ISO 3780, the first three characters of a VIN) of the
# brands above, by carmaker group: brands of one group share plants and codes (a Mini
# may carry a BMW code, an Opel a Peugeot one), so a code names the group, not the badge.
# Public registry facts; a code not listed here says nothing and is never refused.
_WMI_GROUPS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset({"bmw", "mini"}),
     frozenset({"WBA", "WBS", "WBX", "WBY", "4US", "5UX", "5YM", "WMW", "WMZ"})),
    (frozenset({"mercedes_benz", "smart"}),
     frozenset({"WDB", "WDC", "WDD", "WDF", "W1K", "W1N", "W1V", "4JG", "55S", "WME"})),
    (frozenset({"volkswagen", "audi", "seat", "cupra", "skoda", "porsche", "man"}),
     frozenset({"WVW", "WVG", "WV1", "WV2", "1VW", "3VW", "9BW", "WAU", "WA1", "WUA", "TRU",
                "VSS", "TMB", "WP0", "WP1", "WMA"})),
    (frozenset({"ford"}),
     frozenset({"1FA", "1FB", "1FC", "1FD", "1FM", "1FT", "2FA", "2FM", "2FT", "3FA", "3FM",
                "3FT", "WF0", "NM0", "6FP", "MAJ", "SFA"})),
    (frozenset({"abarth", "alfaromeo", "chrysler", "citroen", "dodge", "ds", "fiat", "jeep",
                "lancia", "maserati", "opel", "peugeot", "vauxhall"}),
     frozenset({"ZFA", "ZAR", "ZAS", "ZLA", "ZAM", "ZN6", "ZAC", "1C3", "1C4", "1C6", "2C3",
                "2C4", "3C4", "3C6", "1J4", "1J8", "1D7", "VF3", "VF7", "VR1", "VR3", "VR7",
                "W0L", "W0V", "VXK"})),
    (frozenset({"renault", "dacia", "alpine"}), frozenset({"VF1", "UU1"})),
    (frozenset({"toyota", "lexus"}),
     frozenset({"JTD", "JTE", "JTH", "JTJ", "JTK", "JTL", "JTM", "JTN", "JT2", "JT3", "2T1",
                "2T2", "2T3", "4T1", "4T3", "5TD", "5TF", "58A", "SB1", "VNK", "NMT", "AHT"})),
    (frozenset({"honda"}),
     frozenset({"JHM", "JHL", "1HG", "2HG", "2HK", "5FN", "5J6", "19X", "SHH", "SHS"})),
    (frozenset({"hyundai", "kia"}),
     frozenset({"KMH", "KM8", "5NP", "5NM", "TMA", "NLH", "MAL", "KNA", "KND", "5XX", "5XY",
                "U5Y", "U6Y", "3KP"})),
    (frozenset({"nissan"}), frozenset({"JN1", "JN8", "1N4", "1N6", "3N1", "5N1", "SJN", "VSK"})),
    (frozenset({"mazda"}), frozenset({"JM1", "JM3", "JMZ", "3MZ"})),
    (frozenset({"mitsubishi"}), frozenset({"JA3", "JA4", "JMB", "JMY", "4A3", "4A4"})),
    (frozenset({"subaru"}), frozenset({"JF1", "JF2", "4S3", "4S4"})),
    (frozenset({"tesla"}), frozenset({"5YJ", "7SA", "LRW", "XP7"})),
    (frozenset({"volvo_cars", "polestar"}), frozenset({"YV1", "YV4", "7JR", "LYV", "LPS"})),
    (frozenset({"jaguar", "land_rover"}), frozenset({"SAJ", "SAL", "SAD"})),
    (frozenset({"cadillac", "chevrolet"}),
     frozenset({"1G1", "1G6", "1GC", "1GN", "1GY", "2G1", "3G1", "3GN", "KL1"})),
    (frozenset({"iveco"}), frozenset({"ZCF"})),
)  # fmt: skip

WMI_BRANDS: dict[str, frozenset[str]] = {
    wmi: brands for brands, codes in _WMI_GROUPS for wmi in codes
}


def wmi_problem(vin: str, brand: str) -> str | None:
    """Why the VIN's manufacturer code contradicts `brand`, or None (an unlisted code, or
    the sandbox brand, whose emulated carmaker builds every VIN)."""
    makers = WMI_BRANDS.get(vin[:3])
    if makers is None or brand in makers or brand == SANDBOX_BRAND:
        return None
    return (
        f"the VIN's manufacturer code {vin[:3]} belongs to {', '.join(sorted(makers))}, not {brand}"
    )
