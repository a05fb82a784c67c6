"""What the console draws of a sandbox vehicle: its position as a track (an SVG polyline
computed here, no tile server, no script) and its battery or fuel level, speed and
odometer as series for the charts, all read from the stored data-point history
(autoport.history), i.e. what the simulator actually delivered."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import orjson

from autoport.history import service as history
from autoport.kit.db import Database
from autoport.sandbox.service import ENVIRONMENT

# The series the console charts, by the property the simulator delivers them as.
SERIES = {
    "battery": "charging.battery_level",
    "fuel": "diagnostics.fuel_level",
    "speed": "diagnostics.speed",
    "odometer": "diagnostics.odometer",
}
POSITION = "vehicle_location.coordinates"
# Points per series and per track: the newest ones (the simulator delivers one per step).
MAX_POINTS = 600


@dataclass(frozen=True, slots=True)
class Track:
    """The polyline of the newest positions in a `width` x `height` viewBox, north up,
    with the start and the current position marked."""

    width: int
    height: int
    points: str  # "x,y x,y ..." for <polyline points>
    start: tuple[float, float]
    end: tuple[float, float]
    count: int
    # The bounds it covers, for the caption.
    south: float
    west: float
    north: float
    east: float


def track_of(
    positions: list[tuple[float, float]], *, width: int = 480, height: int = 320, pad: int = 16
) -> Track | None:
    """`positions` (latitude, longitude), oldest first, projected equirectangularly
    around their mean latitude (true to shape at a car's scale) and fitted into the box
    keeping the aspect ratio. None when there is no position yet."""
    if not positions:
        return None
    lats = [lat for lat, _ in positions]
    lons = [lon for _, lon in positions]
    south, north, west, east = min(lats), max(lats), min(lons), max(lons)
    shrink = math.cos(math.radians((south + north) / 2))
    span_x = (east - west) * shrink
    span_y = north - south
    # A parked car is one point: a tiny span keeps the scale finite (it draws centred).
    scale = min(
        (width - 2 * pad) / span_x if span_x > 1e-9 else math.inf,
        (height - 2 * pad) / span_y if span_y > 1e-9 else math.inf,
    )
    if math.isinf(scale):
        scale = 0.0
    offset_x = (width - span_x * scale) / 2
    offset_y = (height - span_y * scale) / 2

    def project(lat: float, lon: float) -> tuple[float, float]:
        x = offset_x + (lon - west) * shrink * scale
        y = height - (offset_y + (lat - south) * scale)
        return round(x, 1), round(y, 1)

    projected = [project(lat, lon) for lat, lon in positions]
    return Track(
        width=width,
        height=height,
        points=" ".join(f"{x},{y}" for x, y in projected),
        start=projected[0],
        end=projected[-1],
        count=len(projected),
        south=south,
        west=west,
        north=north,
        east=east,
    )


def _number(data: Any) -> float | None:
    """A level (0..1) is shown in percent; a quantity by its value."""
    if isinstance(data, bool):
        return None
    if isinstance(data, int | float):
        return float(data)
    if isinstance(data, dict) and isinstance(data.get("value"), int | float):
        return float(data["value"])
    return None


@dataclass(frozen=True, slots=True)
class Series:
    """Each charted series as [(unix seconds, value)], oldest first, and the newest
    history row read (`after_id` of the next poll: only points stored since)."""

    points: dict[str, list[tuple[float, float]]]
    last_id: int


async def _history(
    db: Database, vin: str, key: str, after_id: int | None, limit: int
) -> list[tuple[int | None, int, Any]]:
    """(position, timestamp µs, data) of `key`: the newest `limit` points, oldest first;
    with `after_id` the points stored after that position instead. A point already
    sealed into a chunk has no position (None)."""
    capability, _, name = key.partition(".")
    found: list[tuple[int | None, int, str]]
    if after_id is None:
        points, _ = await history.page(
            db,
            environment=ENVIRONMENT.value,
            vin=vin,
            capability=capability,
            prop=name,
            since=None,
            until=None,
            cursor=None,
            limit=limit,
        )
        found = [(p.row_id, p.timestamp, p.value) for p in reversed(points)]
    else:
        found = list(
            await history.stored_after(
                db,
                environment=ENVIRONMENT.value,
                vin=vin,
                capability=capability,
                prop=name,
                after_id=after_id,
                limit=limit,
            )
        )
    points_out: list[tuple[int | None, int, Any]] = []
    for row_id, timestamp, value in found:
        wrapper = orjson.loads(value)
        data = wrapper.get("data") if isinstance(wrapper, dict) else None
        points_out.append((row_id, timestamp, data))
    return points_out


async def series(
    db: Database, vin: str, *, after_id: int | None = None, limit: int = MAX_POINTS
) -> Series:
    """The charted series; one the vehicle does not deliver (fuel of an electric car)
    is empty. Levels in percent."""
    answer: dict[str, list[tuple[float, float]]] = {}
    # Where the next poll starts when every point read is sealed already (no position).
    start = await history.position(db) if after_id is None else after_id
    last_id = after_id or 0
    positioned = read = False
    for name, key in SERIES.items():
        points = []
        for row_id, timestamp_us, data in await _history(db, vin, key, after_id, limit):
            read = True
            if row_id is not None:
                last_id, positioned = max(last_id, row_id), True
            value = _number(data)
            if value is None:
                continue
            if name in ("battery", "fuel"):
                value = round(value * 100, 2)
            points.append((timestamp_us / 1_000_000, value))
        answer[name] = points
    if read and not positioned:
        last_id = max(last_id, start)
    return Series(answer, last_id)


async def track(db: Database, vin: str, *, limit: int = MAX_POINTS) -> Track | None:
    positions = []
    for _, _, data in await _history(db, vin, POSITION, None, limit):
        if isinstance(data, dict):
            lat, lon = data.get("latitude"), data.get("longitude")
            if isinstance(lat, int | float) and isinstance(lon, int | float):
                positions.append((float(lat), float(lon)))
    return track_of(positions)
