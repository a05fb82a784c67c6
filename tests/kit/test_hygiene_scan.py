"""`kit.hygiene.may_hold_control`, the body scan of the request pipeline, answers exactly
what the regex of everything that may decode to a control character answers (it only
skips running that regex over bodies that hold neither `%` nor a backslash)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from autoport.kit.hygiene import _MAYBE, may_hold_control

# Bytes and fragments that matter to the regex, mixed with ordinary JSON.
FRAGMENTS = st.sampled_from(
    [b"\x00", b"\x01", b"\x08", b"\t", b"\n", b"\r", b"\x1f", b"\x7f", b"\x80", b"\xff",
     b"%", b"%0", b"%00", b"%1F", b"%1f", b"%20", b"%7F", b"%7f", b"%7e", b"\\", b"\\u00",
     b"\\u0000", b"\\u001F", b"\\u007f", b"\\u0020", b"\\b", b"\\f", b"\\n", b"\\\\",
     b'{"a": "b"}', b"0.5", b"x", b" "]
)  # fmt: skip


@given(st.lists(st.one_of(FRAGMENTS, st.binary(max_size=8)), max_size=30))
def test_the_scan_agrees_with_the_regex(parts: list[bytes]) -> None:
    data = b"".join(parts)
    assert may_hold_control(data) == (_MAYBE.search(data) is not None)


def test_the_scan_finds_each_spelling_in_a_large_body() -> None:
    clean = b'{"vin": "WBA00000000000001", "charging": {"battery_level": 0.5}}' * 2000
    assert not may_hold_control(clean)
    for spelling in (b"\x00", b"\x1f", b"\x7f", b"\n", b"%00", b"%7F", b"\\u0001", b"\\b"):
        assert may_hold_control(clean + spelling + clean), spelling
    # A backslash or a percent sign alone is not a control character.
    assert not may_hold_control(clean + b"\\\\" + b"%25" + clean)


def test_every_single_byte_in_a_clean_body_is_judged_as_the_regex_judges_it() -> None:
    clean = b'{"data": 0.5, "timestamp": "2026-01-01T00:00:00.000Z"}'
    for byte in range(256):
        data = clean + bytes([byte]) + clean
        assert may_hold_control(data) == (_MAYBE.search(data) is not None), byte
