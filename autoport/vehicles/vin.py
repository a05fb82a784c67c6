"""Vehicle Identification Numbers (ISO 3779): 17 characters, digits and capital letters
except I, O and Q. The check digit is not enforced: outside North America it is optional."""

from __future__ import annotations

import random
import re

_VIN = re.compile(r"^[A-HJ-NPR-Z0-9]{17}$")
_ALPHABET = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
_TRANSLITERATION = {
    c: v
    for v, chars in enumerate(
        ["0", "AJ1", "BKS2", "CLT3", "DMU4", "ENV5", "FW6", "GPX7", "HY8", "RZ9"]
    )
    for c in chars
}
_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def vin_problem(vin: object) -> str | None:
    """Why `vin` is not a VIN, in words for an error detail; None when it is one."""
    if not isinstance(vin, str):
        return "must be a string of 17 characters"
    if len(vin) != 17:
        return f"must be 17 characters, got {len(vin)}"
    if not _VIN.match(vin):
        bad = sorted({c for c in vin if c not in _ALPHABET})
        if bad and all(c.upper() in _ALPHABET for c in bad):
            return "must be upper case"
        if set(bad) & {"I", "O", "Q"}:
            return "must not contain I, O or Q"
        return f"contains characters that are not allowed: {''.join(bad)}"
    return None


def generate_vin(rng: random.Random, wmi: str = "SBX") -> str:
    """A valid VIN with a correct North-American check digit, for sandbox vehicles."""
    body = [*wmi, *(rng.choice(_ALPHABET) for _ in range(14))]
    body[8] = "0"
    total = sum(_TRANSLITERATION[c] * w for c, w in zip(body, _WEIGHTS, strict=True))
    check = total % 11
    body[8] = "X" if check == 10 else str(check)
    return "".join(body)
