"""The chunk codec gives back every point byte for byte, whatever the values."""

from __future__ import annotations

import math
import zlib

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
    body = zlib.decompress(codec.encode(list(range(500)), list(range(500)), values))
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
