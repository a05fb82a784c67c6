"""Input hygiene: control characters in what a request carries, refused in one place.

PostgreSQL text cannot hold NUL (asyncpg raises, which was a 500 on any route that
stored or looked up the value), and no identifier, token, URL, header or form field of
this service has a use for the other C0 control characters or DEL: they are how log
lines, headers and HTML get forged. The request pipeline asks `control_character_in`
about every request before any route runs, so no route needs its own check.

Rules: the path, the query string and header values carry none (header values may hold
tab, as HTTP allows; HTTP Basic credentials are checked decoded); bodies (JSON, form or
any other text) may hold tab, line feed and carriage return, for multi-line text, and
nothing else below U+0020 nor U+007F.

Each input is first scanned with one regular expression over its raw bytes (C speed,
about a microsecond per kilobyte), which also matches harmless spellings such as
`\\u0009` or `%0A`; only then is it decoded (JSON, form, query) to find and name the
offending field, and the decoded value decides.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote

import numpy as np
import orjson

# Decoded text: what is refused where.
_STRICT = re.compile(r"[\x00-\x1f\x7f]")  # path, query
HEADER_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")  # raw header values: tab allowed
_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # bodies: tab, LF, CR allowed

# Raw bytes that may decode to a control character: the byte itself, a percent escape
# (%00-%1F, %7F), or a JSON escape (\u0000-\u001F, \u007F, \b, \f).
_MAYBE = re.compile(
    rb"[\x00-\x1f\x7f]|%[01][0-9a-fA-F]|%7[fF]|\\u00[01][0-9a-fA-F]|\\u007[fF]|\\[bf]"
)


@dataclass(frozen=True, slots=True)
class ControlCharacter:
    """Where a control character was found: `where` is "path", "query", "header" or
    "body", `source` the field (query parameter, header name, JSON path, form field)."""

    where: str
    source: str
    character: str

    @property
    def detail(self) -> str:
        what = {
            "path": "the path",
            "query": f"the query parameter {self.source}",
            "header": f"the header {self.source}",
            "body": f"the body field {self.source}",
        }[self.where]
        code = f"U+{ord(self.character):04X}"
        return f"{what} contains a control character ({code}); such characters are not allowed"


def _in_basic(value: bytes) -> str | None:
    if value[:6].lower() != b"basic ":
        return None
    try:
        decoded = base64.b64decode(value[6:].strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None  # the token endpoint answers that itself
    found = _STRICT.search(unquote(decoded.replace("+", " ")))
    return None if found is None else found.group()


def control_character_in(
    path: str,
    query: bytes,
    headers: Iterable[tuple[bytes, bytes]],
    body: bytes | None,
) -> ControlCharacter | None:
    """The first control character of a request, or None. `headers` are the values to
    check (the pipeline passes those its header scan flagged, usually none)."""
    if (found := _STRICT.search(path)) is not None:
        return ControlCharacter("path", "path", found.group())
    if query and _MAYBE.search(query) is not None:
        for name, value in _pairs(query):
            for text in (name, value):
                if (found := _STRICT.search(text)) is not None:
                    return ControlCharacter("query", _shown(name), found.group())
    for header, raw in headers:
        if (byte := HEADER_CONTROL.search(raw)) is not None:
            return ControlCharacter("header", _header_name(header), byte.group().decode("latin-1"))
        if header == b"authorization" and (decoded := _in_basic(raw)) is not None:
            return ControlCharacter("header", "Authorization", decoded)
    if body and may_hold_control(body):
        return _in_body(body)
    return None


def may_hold_control(data: bytes) -> bool:
    """`_MAYBE.search(data) is not None`, without running the regex over every byte of
    a body: at about 60 ns a byte it took 5-6 ms of every 95 KB ingest batch (a tenth
    of the API's CPU per delivery in `bench fleet_soak`). An escape needs a `%` or a
    backslash (two `memchr`s); without one, only a raw control byte can match, which
    numpy finds in about 10 µs in a large body. A small one (a token request's form,
    ~150 bytes) is looked at by deleting every other byte (`bytes.translate`, 0.5 µs):
    numpy's set-up alone cost it 8 µs, 5 % of a token."""
    if b"%" in data or b"\\" in data:
        return _MAYBE.search(data) is not None
    if len(data) <= _SMALL_BODY:
        return bool(data.translate(None, _NOT_CONTROL))
    raw = np.frombuffer(data, np.uint8)
    return bool(((raw < 0x20) | (raw == 0x7F)).any())


# Below this many bytes `bytes.translate` beats numpy (measured: equal near 4 KB).
_SMALL_BODY = 2048
# Every byte but the raw control bytes (C0 and DEL): what `translate` deletes.
_NOT_CONTROL = bytes(byte for byte in range(256) if byte >= 0x20 and byte != 0x7F)


def _pairs(encoded: bytes) -> list[tuple[str, str]]:
    return parse_qsl(encoded.decode("utf-8", "replace"), keep_blank_values=True)


def _shown(name: str) -> str:
    """A field name as the error names it: control characters (in the name itself) are
    never echoed back."""
    return _STRICT.sub("?", name).strip() or "(unnamed)"


def _capped(path: str) -> str:
    # A path into a deeply nested document can be long; the error names its end.
    return path if len(path) <= 120 else "..." + path[-117:]


def _header_name(name: bytes) -> str:
    # Shown as HTTP spells it (Authorization, X-Request-Id), not as ASGI lowercases it.
    return "-".join(part.capitalize() for part in name.decode("latin-1").split("-"))


def _in_body(body: bytes) -> ControlCharacter | None:
    if body.lstrip()[:1] in (b"{", b"["):
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            pass  # malformed JSON: the route answers that; raw characters still count
        else:
            return _in_json(document)
    else:
        for name, value in _pairs(body):
            for text in (name, value):
                if (found := _TEXT.search(text)) is not None:
                    return ControlCharacter("body", _shown(name), found.group())
    if (found := _TEXT.search(body.decode("utf-8", "replace"))) is not None:
        return ControlCharacter("body", "body", found.group())
    return None


def _in_json(document: Any) -> ControlCharacter | None:
    """Through a decoded document in order, with a stack (a deeply nested body must not
    exhaust the interpreter's recursion); paths as the validation errors name them
    (`vehicles[0].vin`, see kit.errors)."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if (found := _TEXT.search(value)) is not None:
                return ControlCharacter("body", _capped(path or "body"), found.group())
        elif isinstance(value, list):
            stack.extend(
                (f"{path}[{index}]", item) for index, item in reversed(list(enumerate(value)))
            )
        elif isinstance(value, dict):
            children: list[tuple[str, Any]] = []
            for key, item in value.items():
                child = f"{path}.{_shown(key)}" if path else _shown(key)
                if (found := _TEXT.search(key)) is not None:
                    return ControlCharacter("body", _capped(child), found.group())
                children.append((child, item))
            stack.extend(reversed(children))
    return None
