"""The column-wise encoding of a chunk: the points of one series over a time range.

A point is (timestamp µs, received_at µs, value), the value being the JSON text that was
accepted (a wrapper, or the whole array of an array property), served back byte for
byte. A chunk stores its points in their order (by timestamp; points sharing a
timestamp in the order they were stored) as columns:

- timestamps: integers, delta or delta-of-delta (whichever is smaller), zigzag, split
  into byte planes (all first bytes, then all second bytes, ...: the planes of small
  numbers are runs of zeros, which the compressor removes);
- received_at: the same, on its own or as the delay after the timestamp;
- values: each JSON text is split into its *shape* (the text around the leaves: keys,
  brackets, units, literals true/false/null) and its leaves. The shapes are stored once
  per chunk (a unit is written once) and each point names its shape. Each leaf position
  of a shape is a column by type: integers as above; decimals scaled to integers
  (0.82 -> 82 at two places) as above, other floats as the XOR of their bits with the
  previous value's (Gorilla's idea, in byte planes); strings by dictionary (enum values,
  failure reasons); a timestamp inside the value equal to the point's is not stored at
  all, another one as its distance to the point's.

The whole is compressed once, with zlib at level 9: on these columns zstandard saved
nothing at the same speed (1-3 % at level 19, 20-50x slower; docs/vehicle-data.md), so
no dependency was added for it. Since format 3 it is a raw deflate stream behind the
byte 3 (a zlib stream never starts so) with a preset dictionary of the text headers
repeat (autoport.history.codec_dictionary): a chunk's header, about 160 bytes
compressed alone, was most of a small chunk. `encode` decodes its own result and compares every
point: a value whose text would not come back byte for byte is stored whole instead
(never seen; the check keeps the promise that answers do not change).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import orjson

from autoport.history.codec_dictionary import DICTIONARY
from autoport.kit.clock import MICROS, from_iso, to_iso

# 2: integer columns may be packed bits, timestamps may be split at the second (`_encode_ints`,
# "tu"); 1 had neither. 3: the same body, compressed with the preset dictionary (formats 1
# and 2 are zlib streams without one). Every format up to FORMAT is read.
FORMAT = 3
READS = (1, 2, 3)
LEVEL = 9
_DICTIONARY_MARK = b"\x03"  # a zlib stream's first byte always ends in the bits 1000
_HEAD = struct.Struct("<BI")  # format, length of the header JSON
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# Decimal places tried for floats (0.82 -> 82 at 2); 10**15 keeps every scaled value
# of a realistic reading inside the 2**53 integers a double holds exactly.
_MAX_PLACES = 15

# Leaf kinds of a shape.
INT, FLOAT, STRING, OWN_STAMP, STAMP, RAW = "I", "F", "S", "T", "D", "R"


@dataclass(frozen=True, slots=True)
class Decoded:
    timestamps: Sequence[int]
    received: Sequence[int]
    values: Sequence[str]


class _Unfit(Exception):
    """A value this encoding cannot split; it is stored whole."""


@lru_cache(maxsize=4096)
def _second(seconds: int) -> str:
    return to_iso(seconds * MICROS)[:19]


# numpy writes years below 1000 with four digits, `kit.clock.to_iso` without padding.
_YEAR_1000_US = -30_610_224_000 * MICROS


def iso_many(stamps: Sequence[int]) -> list[str]:
    """`iso` of each instant, in one numpy call (strftime per point was most of a
    chunk's decoding)."""
    if not stamps or min(stamps) < _YEAR_1000_US:
        return [iso(us) for us in stamps]
    instants = np.array(stamps, dtype=np.int64).astype("datetime64[us]")
    return [text + "Z" for text in np.datetime_as_string(instants, unit="us").tolist()]


def iso(us: int) -> str:
    """`kit.clock.to_iso`, with the part up to the second cached (a chunk's points
    share their seconds' text often, and strftime is most of the cost)."""
    seconds, micros = divmod(us, MICROS)
    return f"{_second(seconds)}.{micros:06d}Z"


def _canonical_stamp(text: str) -> int | None:
    """The µs of `text` when it is a timestamp as ingestion normalizes them."""
    if len(text) != 27 or text[-1] != "Z" or text[10] != "T":
        return None
    try:
        us = from_iso(text)
    except ValueError:
        return None
    return us if iso(us) == text else None


def _split(value: Any, own: str, pieces: list[str], kinds: list[str], leaves: list[Any]) -> None:
    """Append the text of `value` to `pieces[-1]`, or a leaf (kind and value) where the
    text is data: orjson's compact layout, which is how every stored value was written."""
    if isinstance(value, dict):
        pieces[-1] += "{"
        first = True
        for key, item in value.items():
            pieces[-1] += ("" if first else ",") + orjson.dumps(key).decode() + ":"
            first = False
            _split(item, own, pieces, kinds, leaves)
        pieces[-1] += "}"
    elif isinstance(value, list):
        pieces[-1] += "["
        for index, item in enumerate(value):
            if index:
                pieces[-1] += ","
            _split(item, own, pieces, kinds, leaves)
        pieces[-1] += "]"
    elif value is True or value is False or value is None:
        pieces[-1] += orjson.dumps(value).decode()
    elif isinstance(value, str):
        if value == own:
            kinds.append(OWN_STAMP)
            leaves.append(None)
        else:
            stamp = _canonical_stamp(value)
            kinds.append(STRING if stamp is None else STAMP)
            leaves.append(value if stamp is None else stamp)
        pieces.append("")
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _Unfit
        kinds.append(INT)
        leaves.append(value)
        pieces.append("")
    elif isinstance(value, float):
        kinds.append(FLOAT)
        leaves.append(value)
        pieces.append("")
    else:  # pragma: no cover - orjson.loads makes nothing else
        raise _Unfit


# The shape of most values, a wrapper of a number at the point's own timestamp, without
# the walk of `_split` (which was most of a chunk's encoding); the same result.
_WRAPPER = ('{"data":', ',"timestamp":', "}")
_WRAPPER_KINDS = {float: FLOAT + OWN_STAMP, int: INT + OWN_STAMP}


def _shape_of(text: str, own: str) -> tuple[tuple[str, ...], str, list[Any]]:
    """`own`: the point's timestamp as text."""
    try:
        value = orjson.loads(text)
        if type(value) is dict and len(value) == 2:
            (first, data), (second, stamp) = value.items()
            known = _WRAPPER_KINDS.get(type(data))  # (not bool: its type is not int)
            if (
                known is not None
                and first == "data"
                and second == "timestamp"
                and stamp == own
                and (known[0] == FLOAT or _INT64_MIN <= data <= _INT64_MAX)
            ):
                return _WRAPPER, known, [data, None]
        pieces, kinds, leaves = [""], [], []  # type: ignore[var-annotated]
        _split(value, own, pieces, kinds, leaves)
    except (_Unfit, orjson.JSONDecodeError):
        return ("", ""), RAW, [text]
    return tuple(pieces), "".join(kinds), leaves


# --- integer columns: delta or delta-of-delta, zigzag, byte planes ------------------------


def _differences(values: np.ndarray, order: int) -> np.ndarray:
    out = values
    for _ in range(order):
        out = np.concatenate((out[:1], np.diff(out)))  # int64 wraps; cumsum undoes it
    return out


def _planes(unsigned: np.ndarray) -> tuple[int, bytes]:
    top = int(unsigned.max()) if len(unsigned) else 0
    width = (top.bit_length() + 7) // 8
    raw = unsigned.astype("<u8").view(np.uint8).reshape(len(unsigned), 8)[:, :width]
    return width, raw.T.tobytes()


def _unplanes(data: memoryview, width: int, count: int) -> np.ndarray:
    full = np.zeros((count, 8), dtype=np.uint8)
    if width:
        full[:, :width] = (
            np.frombuffer(data, dtype=np.uint8, count=width * count).reshape(width, count).T
        )
    return full.view("<u8").ravel()


def _pack(unsigned: np.ndarray, bits: int) -> bytes:
    """Each value in `bits` bits, least significant first, end to end."""
    if not bits or not len(unsigned):
        return b""
    matrix = (unsigned[:, None] >> np.arange(bits, dtype=np.uint64)) & np.uint64(1)
    return np.packbits(matrix.astype(np.uint8).ravel(), bitorder="little").tobytes()


def _unpack(data: memoryview, bits: int, count: int) -> np.ndarray:
    if not bits or not count:
        return np.zeros(count, dtype=np.uint64)
    packed = np.frombuffer(data, dtype=np.uint8, count=(count * bits + 7) // 8)
    flat = np.unpackbits(packed, bitorder="little")[: count * bits]
    matrix = flat.reshape(count, bits).astype(np.uint64) << np.arange(bits, dtype=np.uint64)
    values: np.ndarray = np.bitwise_or.reduce(matrix, axis=1)
    return values


def _squeezed(data: bytes) -> int:
    """About what `data` costs in the compressed chunk."""
    return len(zlib.compress(data, 6))


def _encode_ints(values: np.ndarray) -> tuple[dict[str, Any], bytes]:
    """The smallest of the values, their deltas and their deltas of deltas; the first
    value(s) of a difference go in the header, so one large start (an absolute
    timestamp) does not widen every other plane. Each either zigzagged in byte planes
    (small numbers: planes of zeros) or, less their minimum, packed in as many bits as
    the widest needs (noise, such as sub-second jitter, which byte planes leave
    incompressible and wider than it is); whichever compresses smaller."""
    planes: tuple[int, dict[str, Any], bytes] | None = None
    packed: tuple[int, dict[str, Any], np.ndarray] | None = None
    for order in (0, 1, 2):
        diffs = _differences(values, order)
        rest = diffs[order:]
        first = diffs[:order].tolist()
        zigzag = (rest.view(np.uint64) << np.uint64(1)) ^ (rest >> 63).view(np.uint64)
        width, data = _planes(zigzag)
        cost = int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8))) + 8 * order
        if planes is None or cost < planes[0]:
            planes = (cost, {"o": order, "f": first, "w": width}, data)
        if len(rest):
            low = int(rest.min())
            shifted = rest.view(np.uint64) - np.uint64(low % 2**64)  # wraps: exact
            bits = int(shifted.max()).bit_length()
            size = (len(rest) * bits + 7) // 8 + 8 * order
            if packed is None or size < packed[0]:
                packed = (size, {"o": order, "f": first, "b": bits, "m": low}, shifted)
    assert planes is not None
    if packed is None or packed[0] >= len(planes[2]):
        return planes[1], planes[2]
    bits_data = _pack(packed[2], packed[1]["b"])
    if _squeezed(bits_data) < _squeezed(planes[2]):
        return packed[1], bits_data
    return planes[1], planes[2]


def _decode_ints(column: dict[str, Any], data: memoryview, count: int) -> np.ndarray:
    order = column["o"]
    rest = max(count - order, 0)
    if "b" in column:  # packed bits, less the minimum
        shifted = _unpack(data, column["b"], rest) + np.uint64(column["m"] % 2**64)
        values = shifted.view(np.int64)
    else:
        zigzag = _unplanes(data, column["w"], rest)
        values = (zigzag >> np.uint64(1)).view(np.int64) ^ -(zigzag & np.uint64(1)).view(np.int64)
    values = np.concatenate((np.array(column["f"][:count], dtype=np.int64), values))
    for _ in range(order):
        values = np.cumsum(values)
    return values


# --- leaf columns ------------------------------------------------------------------------


def _encode_floats(values: list[float]) -> tuple[dict[str, Any], bytes]:
    array = np.array(values, dtype=np.float64)
    bits = array.view(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        for places in range(_MAX_PLACES + 1):
            scale = 10.0**places
            scaled = np.rint(array * scale)
            if not np.all(np.abs(scaled) < 2.0**53):
                break
            if np.array_equal((scaled / scale).view(np.int64), bits):
                column, data = _encode_ints(scaled.astype(np.int64))
                return {"k": "dec", "p": places, **column}, data
    bits_u = array.view(np.uint64)
    xored = bits_u ^ np.concatenate((np.zeros(1, np.uint64), bits_u[:-1]))
    width, data = _planes(xored)
    return {"k": "xor", "w": width}, data


def _float_texts(column: dict[str, Any], data: memoryview, count: int) -> list[str]:
    if column["k"] == "dec":
        floats = _decode_ints(column, data, count).astype(np.float64) / 10.0 ** column["p"]
    else:
        xored = _unplanes(data, column["w"], count)
        floats = np.bitwise_xor.accumulate(xored).view(np.float64)
    return _texts(floats.tolist())


def _texts(values: list[Any]) -> list[str]:
    """The JSON text of each number, in one orjson call."""
    if not values:
        return []
    return orjson.dumps(values).decode()[1:-1].split(",")


def _encode_column(kind: str, values: list[Any], stamps: list[int]) -> tuple[dict[str, Any], bytes]:
    if kind == INT:
        column, data = _encode_ints(np.array(values, dtype=np.int64))
        return {"k": "int", **column}, data
    if kind == FLOAT:
        return _encode_floats(values)
    if kind == STAMP:
        offsets = np.array(values, dtype=np.int64) - np.array(stamps, dtype=np.int64)
        column, data = _encode_ints(offsets)
        return {"k": "int", **column}, data
    words = list(dict.fromkeys(values))
    index = {word: position for position, word in enumerate(words)}
    column, data = _encode_ints(np.array([index[v] for v in values], dtype=np.int64))
    return {"k": "dict", "d": words, **column}, data


def _column_texts(
    kind: str, column: dict[str, Any], data: memoryview, count: int, stamps: list[int]
) -> list[str]:
    if kind == OWN_STAMP:
        return [f'"{text}"' for text in iso_many(stamps)]
    if kind == FLOAT:
        return _float_texts(column, data, count)
    if kind == INT:
        return _texts(_decode_ints(column, data, count).tolist())
    if kind == STAMP:
        offsets = _decode_ints(column, data, count).tolist()
        moved = [s + offset for s, offset in zip(stamps, offsets, strict=True)]
        return [f'"{text}"' for text in iso_many(moved)]
    words = column["d"]
    rendered = words if kind == RAW else [orjson.dumps(word).decode() for word in words]
    return [rendered[i] for i in _decode_ints(column, data, count).tolist()]


def _column_bytes(column: dict[str, Any], count: int) -> int:
    order: int = column.get("o", 0)
    if "b" in column:
        bits: int = column["b"]
        return (max(count - order, 0) * bits + 7) // 8
    width: int = column["w"]
    return width * max(count - order, 0)


# --- chunks ------------------------------------------------------------------------------


def encode(timestamps: Sequence[int], received: Sequence[int], values: Sequence[str]) -> bytes:
    """The chunk of these points (in chunk order); lossless, checked."""
    blob = _encode(timestamps, received, values, split=True)
    decoded = decode(blob)
    if (
        decoded.values != list(values)
        or decoded.timestamps != list(timestamps)
        or decoded.received != list(received)
    ):  # pragma: no cover - a safety net; the property tests look for such values
        blob = _encode(timestamps, received, values, split=False)
    return blob


def _encode(
    timestamps: Sequence[int], received: Sequence[int], values: Sequence[str], *, split: bool
) -> bytes:
    count = len(timestamps)
    stamps = np.array(timestamps, dtype=np.int64)
    arrivals = np.array(received, dtype=np.int64)
    parts: list[bytes] = []
    head: dict[str, Any] = {"n": count}
    head["t"], data = _encode_ints(stamps)
    # Timestamps a second apart with a sub-second jitter: the seconds (their deltas of
    # deltas nearly all zero) and the microseconds within the second (noise, packed)
    # apart are smaller than their deltas, whose noise is twice as wide.
    seconds = stamps // MICROS
    whole, whole_data = _encode_ints(seconds)
    within, within_data = _encode_ints(stamps - seconds * MICROS)
    if _squeezed(whole_data + within_data) < _squeezed(data):
        head["t"], head["tu"] = whole, within
        parts += [whole_data, within_data]
    else:
        parts.append(data)
    # The delay after the timestamp is the smaller column when both move together (live
    # data); the arrival on its own when they do not (a backlog delivered at once).
    alone, alone_data = _encode_ints(arrivals)
    delay, delay_data = _encode_ints(arrivals - stamps)
    if _squeezed(delay_data) < _squeezed(alone_data):
        head["r"], data = {"d": 1, **delay}, delay_data
    else:
        head["r"], data = {"d": 0, **alone}, alone_data
    parts.append(data)

    shapes: dict[tuple[tuple[str, ...], str], int] = {}
    which: list[int] = []
    leaves_of: list[list[list[Any]]] = []  # shape -> leaf position -> values
    stamps_of: list[list[int]] = []  # shape -> its points' timestamps
    owns = iso_many(timestamps) if split else []
    for index, (timestamp, text) in enumerate(zip(timestamps, values, strict=True)):
        pieces, kinds, leaves = _shape_of(text, owns[index]) if split else (("", ""), RAW, [text])
        key = (pieces, kinds)
        number = shapes.get(key)
        if number is None:
            number = shapes[key] = len(shapes)
            leaves_of.append([[] for _ in kinds])
            stamps_of.append([])
        which.append(number)
        stamps_of[number].append(timestamp)
        for position, leaf in enumerate(leaves):
            leaves_of[number][position].append(leaf)
    head["s"], data = _encode_ints(np.array(which, dtype=np.int64))
    parts.append(data)
    head["shapes"] = [[list(pieces), kinds] for pieces, kinds in shapes]
    columns: list[dict[str, Any]] = []
    for (_, kinds), number in shapes.items():
        for position, kind in enumerate(kinds):
            if kind == OWN_STAMP:
                columns.append({"w": 0})
                continue
            column, data = _encode_column(kind, leaves_of[number][position], stamps_of[number])
            columns.append(column)
            parts.append(data)
    head["c"] = columns
    header = orjson.dumps(head)
    body = _HEAD.pack(FORMAT, len(header)) + header + b"".join(parts)
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, -15, zdict=DICTIONARY)
    return _DICTIONARY_MARK + compressor.compress(body) + compressor.flush()


def uncompressed(blob: bytes) -> bytes:
    """A chunk uncompressed: its format byte first (any format read)."""
    if blob[:1] == _DICTIONARY_MARK:
        inflater = zlib.decompressobj(-15, zdict=DICTIONARY)
        return inflater.decompress(memoryview(blob)[1:]) + inflater.flush()
    return zlib.decompress(blob)  # formats 1 and 2


def decode(blob: bytes) -> Decoded:
    body = memoryview(uncompressed(blob))
    version, length = _HEAD.unpack_from(body)
    if version not in READS:
        raise ValueError(f"chunk format {version} is not one this autoport reads")
    offset = _HEAD.size
    head = orjson.loads(body[offset : offset + length])
    offset += length
    count = head["n"]

    def take(column: dict[str, Any], rows: int) -> memoryview:
        nonlocal offset
        size = _column_bytes(column, rows)
        data = body[offset : offset + size]
        offset += size
        return data

    stamps_array = _decode_ints(head["t"], take(head["t"], count), count)
    if "tu" in head:  # seconds, then the microseconds within each
        within = _decode_ints(head["tu"], take(head["tu"], count), count)
        stamps_array = stamps_array * MICROS + within
    arrivals = _decode_ints(head["r"], take(head["r"], count), count)
    if head["r"]["d"]:
        arrivals = arrivals + stamps_array
    timestamps = stamps_array.tolist()
    which = _decode_ints(head["s"], take(head["s"], count), count)
    columns = iter(head["c"])
    texts: list[str] = [""] * count
    single = len(head["shapes"]) == 1
    for number, (pieces, kinds) in enumerate(head["shapes"]):
        rows = list(range(count)) if single else np.flatnonzero(which == number).tolist()
        stamps = timestamps if single else [timestamps[row] for row in rows]
        rendered = []
        for kind in kinds:
            column = next(columns)
            rendered.append(_column_texts(kind, column, take(column, len(rows)), len(rows), stamps))
        template = "{}".join(piece.replace("{", "{{").replace("}", "}}") for piece in pieces)
        made = (
            list(map(template.format, *rendered)) if rendered else [template.format()] * len(rows)
        )
        if single:
            texts = made
        else:
            for row, text in zip(rows, made, strict=True):
                texts[row] = text
    return Decoded(timestamps, arrivals.tolist(), texts)
