"""Time, as integer microseconds since the Unix epoch (UTC), the unit every table uses.

Features take a `Clock` so tests can move time (token expiry, retry schedules) without
sleeping.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

MICROS = 1_000_000


def now_us() -> int:
    return time.time_ns() // 1000


class Clock:
    """The real clock; `FrozenClock` in tests."""

    # The module's function itself, not a method calling it: a pull asks four times.
    now_us = staticmethod(now_us)


class FrozenClock(Clock):
    def __init__(self, start_us: int | None = None) -> None:
        self.current = now_us() if start_us is None else start_us

    def now_us(self) -> int:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += int(seconds * MICROS)


def to_iso(us: int) -> str:
    """ISO 8601, UTC, always with microseconds and `Z`: `2018-11-06T10:20:37.094533Z`."""
    seconds, micros = divmod(us, MICROS)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{micros:06d}Z"


def from_iso(text: str) -> int:
    """Parse ISO 8601 (with `Z` or an offset; naive means UTC) to microseconds."""
    value = datetime.fromisoformat(text.replace("z", "Z"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * MICROS + delta.microseconds
