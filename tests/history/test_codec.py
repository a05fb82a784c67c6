"""The chunk codec gives back every point byte for byte, whatever the values."""

from __future__ import annotations

import base64
import math
import random
import struct
import zlib

import numpy as np
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from autoport.history import codec
from autoport.kit.clock import to_iso

# Instants ingestion can store: years 1 to 9999 in µs.
INSTANTS = st.integers(min_value=-62_135_596_800_000_000, max_value=253_402_300_799_999_999)
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(places=6, min_value=-1000, max_value=1000, allow_nan=False).map(float),
    st.text(max_size=12),
    st.sampled_from(["charging", "not_charging", "kilometers", "", "a,b", "{x}", '"q"']),
    INSTANTS.map(to_iso),
)
JSON = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _text(value: object) -> str:
    return orjson.dumps(value).decode()


@st.composite
def chunks(draw: st.DrawFn) -> tuple[list[int], list[int], list[str]]:
    count = draw(st.integers(min_value=1, max_value=60))
    start = draw(INSTANTS)
    steps = draw(st.lists(st.integers(0, 10**9), min_size=count, max_size=count))
    timestamps = [start]
    for step in steps[1:]:
        timestamps.append(min(timestamps[-1] + step, 253_402_300_799_999_999))
    received = [draw(INSTANTS) for _ in range(count)]
    values = []
    for timestamp in timestamps:
        kind = draw(st.integers(0, 3))
        if kind == 0:  # a wrapper as ingestion stores it: its own timestamp inside
            values.append(_text({"data": draw(JSON), "timestamp": to_iso(timestamp)}))
        elif kind == 1:
            values.append(
                _text(
                    {
                        "failure": {"reason": "unknown", "description": draw(st.text())},
                        "timestamp": to_iso(timestamp),
                    }
                )
            )
        elif kind == 2:  # an array property: wrappers with timestamps of their own
            values.append(_text([{"data": draw(JSON), "timestamp": draw(INSTANTS.map(to_iso))}]))
        else:
            values.append(_text(draw(JSON)))
    return timestamps, received, values


@settings(max_examples=100, deadline=None)
@given(chunks())
def test_every_chunk_decodes_to_its_points(points: tuple[list[int], list[int], list[str]]) -> None:
    timestamps, received, values = points
    decoded = codec.decode(codec.encode(timestamps, received, values))
    assert decoded.timestamps == timestamps
    assert decoded.received == received
    assert decoded.values == values


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=40))
def test_floats_come_back_with_their_bits(floats: list[float]) -> None:
    """-0.0, subnormals, 1e+21, 0.1 + 0.2: the text orjson wrote comes back."""
    values = [_text({"data": value}) for value in floats]
    stamps = list(range(len(values)))
    assert codec.decode(codec.encode(stamps, stamps, values)).values == values


def test_a_value_that_is_no_json_is_stored_whole() -> None:
    values = ['{"data":1}', "not json", '{"data":18446744073709551615}']
    decoded = codec.decode(codec.encode([1, 2, 3], [4, 5, 6], values))
    assert decoded.values == values


def _series(count: int) -> tuple[list[int], list[int], list[str]]:
    """A driving car's battery level at 1 Hz: millisecond timestamps, arrival within
    a second."""
    timestamps, received, values = [], [], []
    at = 1_767_225_600_000_000
    level = 0.8
    for second in range(count):
        at += 1_000_000 + (second * 7919 % 41) * 1000 - 20_000
        level -= 0.0001 * ((second * 31) % 3 == 0)
        timestamps.append(at)
        received.append(at + 150_000 + (second * 104_729) % 90_000)
        values.append(_text({"data": round(level, 4), "timestamp": to_iso(at)}))
    return timestamps, received, values


def test_a_regular_series_is_small() -> None:
    """The point of the columns: far below the rows' ~60 bytes of JSON each, and below
    what compressing the texts alone gives."""
    timestamps, received, values = _series(2000)
    blob = codec.encode(timestamps, received, values)
    compressed_texts = len(zlib.compress("\n".join(values).encode(), 9))
    assert len(blob) / 2000 < 3.0, len(blob) / 2000
    assert len(blob) < compressed_texts / 2


def test_shapes_are_stored_once() -> None:
    """A unit and the keys are in the chunk once, not per point."""
    values = [
        _text({"data": {"unit": "kilometers", "value": 1000 + i}, "timestamp": to_iso(i)})
        for i in range(500)
    ]
    body = codec.uncompressed(codec.encode(list(range(500)), list(range(500)), values))
    assert body.count(b"kilometers") == 1
    assert not math.isnan(len(body))


def _walked(text: str, own: str) -> tuple[tuple[str, ...], str, list[object]]:
    """`_shape_of` without its shortcut for wrappers: the walk alone."""
    pieces, kinds, leaves = [""], [], []  # type: ignore[var-annotated]
    try:
        codec._split(orjson.loads(text), own, pieces, kinds, leaves)
    except codec._Unfit:
        return ("", ""), codec.RAW, [text]
    return tuple(pieces), "".join(kinds), leaves


@given(data=LEAVES | JSON, at=INSTANTS, other=INSTANTS, key=st.sampled_from(["data", "x"]))
@settings(max_examples=400)
def test_the_wrapper_shortcut_finds_what_the_walk_finds(
    data: object, at: int, other: int, key: str
) -> None:
    own = to_iso(at)
    for value in (
        {key: data, "timestamp": own},
        {key: data, "timestamp": to_iso(other)},
        {"timestamp": own, key: data},
        {key: data, "timestamp": own, "unit": "km"},
    ):
        text = _text(value)
        assert codec._shape_of(text, own) == _walked(text, own), text


# A chunk written by format 1 (before packed bits and split timestamps), with what it
# holds: chunks stored before the upgrade are read as they are.
FORMAT_1 = (
    "eNqdUstugzAQdKNe+hM57NmVgAoInKscek1vBlUWOKoVXjKmrYRQe8gn5Gv6dV2wE9FHKrUri7V3Z8b2mIv3BSE9VBC7"
    "HgUNcQ81xDjdQszcMAg9zw8cG/TaVvxoFQReGEUphWeIbwYKaqTmKENnAt6R5qz8IDRgB8Gt3ccxMNNwx8YjbwR2GWPQ"
    "J5BzzRPEJtBVUuMMKNAEnnjRCbMacKllKVrNy8aWAPU263tMRmXLZdEpYYSU4G1dnaRy0WZKNloea2cFN1aQ/ftcqTnY"
    "LaSYM7xkDzvs5DLT2EbvGOxkUZdCC9WO2K8OoXWWIjJkNJPP9eT59Fyj2Scv+8+M2SaKa/FQyFLq3zeZUV7OIs8x/noT"
    "l/70QxiQrEbZ7+10IK9vdpD93g6yXNoxxYJcjukO43DAz/rqA35IyxI="
)


def _format_1_points() -> tuple[list[int], list[int], list[str]]:
    timestamps, received, values = [], [], []
    for i in range(12):
        at = 1_767_225_600_000_000 + i * 1_000_000 + (i * 337_201) % 1_000_000
        timestamps.append(at)
        received.append(at + 200_000 + (i * 91_433) % 1_800_000)
        if i == 5:
            failure = {"reason": "rate_limit", "description": "x"}
            values.append(_text({"failure": failure, "timestamp": to_iso(at)}))
        elif i == 7:
            data = {"unit": "kilometers", "value": 3.5}
            values.append(_text([{"data": data, "timestamp": to_iso(at - 5)}]))
        else:
            data = {"unit": "kilometers", "value": round(100 + i * 0.37, 2)}
            values.append(_text({"data": data, "timestamp": to_iso(at)}))
    return timestamps, received, values


def test_a_format_1_chunk_is_read() -> None:
    blob = base64.b64decode(FORMAT_1)
    assert zlib.decompress(blob)[0] == 1
    decoded = codec.decode(blob)
    assert (decoded.timestamps, decoded.received, decoded.values) == _format_1_points()
    again = codec.encode(*_format_1_points())
    assert codec.uncompressed(again)[0] == codec.FORMAT == 3
    assert codec.decode(again) == decoded


def test_a_format_2_chunk_is_read() -> None:
    """Format 3 is format 2's body with the preset dictionary: a chunk written before it
    (a zlib stream of the same body) is read as it is."""
    points = _jittered(300, 7)
    body = bytearray(codec.uncompressed(codec.encode(*points)))
    assert body[0] == 3
    body[0] = 2
    decoded = codec.decode(zlib.compress(bytes(body), 9))
    assert (decoded.timestamps, decoded.received, decoded.values) == points


def test_a_small_chunk_is_mostly_its_points() -> None:
    """The header a chunk of a slow series repeats (column descriptions, the value's
    shape and unit) comes from the preset dictionary: a one-point chunk took 155 bytes
    without it, 50-90 with it (bench history's mix)."""
    at = 1_767_225_600_123_456
    data = {"unit": "kilometers", "value": 1234.5}
    blob = codec.encode([at], [at + 812_345], [_text({"data": data, "timestamp": to_iso(at)})])
    assert blob[0] == 3
    assert len(blob) < 100, len(blob)
    assert len(zlib.compress(codec.uncompressed(blob), 9)) > 140


def _jittered(count: int, seed: int) -> tuple[list[int], list[int], list[str]]:
    """A 1-Hz reading with a sub-second jitter of its timestamps (microseconds, as the
    sandbox sends them) and an arrival 0.2-2 s later: noise no encoding can drop."""
    rng = random.Random(seed)
    timestamps, received, values = [], [], []
    for second in range(count):
        at = 1_767_225_600_000_000 + second * 1_000_000 + rng.randrange(1_000_000)
        timestamps.append(at)
        received.append(at + rng.randrange(200_000, 2_000_000))
        values.append(_text({"data": round(0.8 - second * 0.0001, 4), "timestamp": to_iso(at)}))
    return timestamps, received, values


def test_jittered_timestamps_and_arrivals_are_packed() -> None:
    """log2(10**6) + log2(1.8 * 10**6) = 40.7 bits of noise a point: in byte planes each
    column took three bytes less what zlib found (3.0 B and 2.96 B a point, 6.7 B with
    the value, measured on the bench's mix); packed in bits (the microseconds within the
    second apart from the seconds), near the noise itself."""
    timestamps, received, values = _jittered(1000, 3)
    blob = codec.encode(timestamps, received, values)
    body = codec.uncompressed(blob)
    head = orjson.loads(body[5 : 5 + struct.unpack_from("<I", body, 1)[0]])
    assert "tu" in head and "b" in head["tu"] and "b" in head["r"], head
    assert len(blob) / 1000 < 5.6, len(blob) / 1000
    decoded = codec.decode(blob)
    assert (decoded.timestamps, decoded.received, decoded.values) == (timestamps, received, values)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=1, max_size=50)
    | st.lists(st.integers(min_value=-(10**7), max_value=10**7), min_size=1, max_size=300)
)
def test_integer_columns_come_back(values: list[int]) -> None:
    """Whichever way a column is stored (planes or packed bits, at any order), and the
    wrap-around of int64 differences and of the minimum taken off."""
    array = np.array(values, dtype=np.int64)
    column, data = codec._encode_ints(array)
    assert codec._column_bytes(column, len(values)) == len(data)
    assert codec._decode_ints(column, memoryview(data), len(values)).tolist() == values
