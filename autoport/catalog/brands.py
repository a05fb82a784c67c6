"""Carmaker identifiers. Vehicle data emits the underscore form (`mercedes_benz`); the
eligibility and fleet endpoints are also spoken with hyphens (`mercedes-benz`), so input
accepts both spellings and `canonical_brand` turns either into the one we store.

Facts from the public level-13 interface description (vendored under reference/).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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

# How people write the carmakers whose names are not their id in title case.
_NAMES = {
    "alfaromeo": "Alfa Romeo", "bmw": "BMW", "citroen": "Citroën", "ds": "DS",
    "land_rover": "Land Rover", "man": "MAN", "mercedes_benz": "Mercedes-Benz",
    "mini": "MINI", "seat": "SEAT", "skoda": "Škoda", "volvo_cars": "Volvo Cars",
}  # fmt: skip


def brand_name(brand: str) -> str:
    """The carmaker's name as people write it (`mercedes_benz` -> Mercedes-Benz), for
    pages; the id stays what APIs speak."""
    return _NAMES.get(brand, brand.replace("_", " ").title())


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

# Codes under which a carmaker also builds another group's badge (badge engineering): the
# code allows these brands besides its own group's. As the cars' VINs show.
_SHARED_WMI: dict[str, frozenset[str]] = {
    "JF1": frozenset({"toyota"}),  # Subaru builds the Toyota 86 / GR86
    "VNK": frozenset({"mazda"}),  # Toyota's Valenciennes plant builds the Mazda2 Hybrid
}

WMI_BRANDS: dict[str, frozenset[str]] = {
    wmi: brands | _SHARED_WMI.get(wmi, frozenset())
    for brands, codes in _WMI_GROUPS
    for wmi in codes
}


class MakerCodes:
    """The manufacturer-code table (interface.md, eligibility): which brands are built
    under each known code. A brand a known code does not list is refused for that VIN; a
    code the table does not know refuses nothing; the sandbox brand's emulated carmaker
    builds every VIN. `extra` is the operator's (setting `maker_codes`): its brands are
    added to a known code's, and make an unknown code known with only them."""

    def __init__(self, extra: Mapping[str, Iterable[str]] | None = None) -> None:
        table = dict(WMI_BRANDS)
        for code, brands in (extra or {}).items():
            table[code] = table.get(code, frozenset()) | frozenset(brands)
        self.table: dict[str, frozenset[str]] = table

    def makers(self, vin: str) -> frozenset[str] | None:
        """The brands built under the VIN's code; None when the table does not know it."""
        return self.table.get(vin[:3])

    def problem(self, vin: str, brand: str) -> str | None:
        """Why the VIN's manufacturer code contradicts `brand`, or None."""
        makers = self.makers(vin)
        if makers is None or brand in makers or brand == SANDBOX_BRAND:
            return None
        return (
            f"the VIN's manufacturer code {vin[:3]} belongs to {', '.join(sorted(makers))}, "
            f"not {brand}"
        )


# The rule as the API description states it (eligibility, fleet clearance, ingestion).
MAKER_CODE_RULE = (
    "The VIN's manufacturer code (its first three characters) must fit the brand: a "
    "code autoport knows for other carmakers only is refused, naming them (`WBA…` as "
    "`mercedes-benz`: BMW's code). Codes shared by badge-engineered cars allow every "
    "brand built under them (Subaru's `JF1` also as `toyota`, for the 86/GR86); codes "
    "autoport does not know are accepted. The operator may add codes (setting "
    "`maker_codes`)."
)

# The table without an operator's additions: for callers with no settings at hand (the
# CLI's seeding, benchmarks); every request path uses its registry's
# (autoport.brands.registry.BrandRegistry.maker_codes).
MAKER_CODES = MakerCodes()

_VIN_CHARACTERS = frozenset("ABCDEFGHJKLMNPRSTUVWXYZ0123456789")


def checked_maker_codes(value: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """The setting `maker_codes` checked: 3-character codes of VIN characters (upper case
    kept), known brands (either spelling), not the sandbox brand. ValueError naming the
    entry otherwise."""
    checked: dict[str, list[str]] = {}
    for raw_code, raw_brands in value.items():
        code = raw_code.strip().upper()
        if len(code) != 3 or not set(code) <= _VIN_CHARACTERS:
            raise ValueError(
                f"{raw_code!r}: a manufacturer code is the VIN's first 3 characters "
                "(letters but I, O, Q, and digits)"
            )
        if isinstance(raw_brands, str):
            raise ValueError(f"{code}: expected a list of brands, got a string")
        brands: list[str] = []
        for raw in raw_brands:
            brand = canonical_brand(raw)
            if brand is None or brand == SANDBOX_BRAND:
                raise ValueError(f"{code}: unknown brand {raw!r}")
            if brand not in brands:
                brands.append(brand)
        checked[code] = sorted({*checked.get(code, []), *brands})
    return checked
