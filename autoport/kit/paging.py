"""Keyset paging for list endpoints: the page size and an opaque, signed cursor.

A cursor carries the sort key of the last item of a page (e.g. a timestamp and a row id),
so the next page starts right after it whatever was inserted or deleted meanwhile. It
is signed (HMAC-SHA256, domain-separated) with the deployment's `token_hmac_key` and bound
to a scope
(the endpoint and the caller it was issued to): a client can hand back only a cursor
this endpoint gave it, never an edited one, so the values that reach the SQL are always
values we wrote (no range or type surprises; another application's or endpoint's cursor
is refused). Clients treat it as an opaque string.

Layout: base64url(JSON array of the key values) "." base64url(HMAC-SHA256 of it, 16 bytes).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

import orjson

from autoport.kit.errors import ApiError
from autoport.kit.keyring import accepted

Key = int | str
_TAG_BYTES = 16  # 128 bits: forging one is out of reach
# Far above what a few key values encode to; longer input is refused before any work.
MAX_CURSOR_CHARS = 1024


def page_size(limit: int | None, *, default: int, maximum: int) -> int:
    """The page size asked for (`limit`), or `default`; 400 naming `limit` outside
    1..maximum (a string that is no integer is FastAPI's 422, also naming it)."""
    size = default if limit is None else limit
    if not 1 <= size <= maximum:
        raise ApiError(400, f"limit: must be between 1 and {maximum}, got {size}", source="limit")
    return size


def _tag(key: bytes, scope: Sequence[str], payload: bytes) -> bytes:
    # The scope's parts are joined unambiguously (NUL never occurs in them).
    message = "\0".join(["autoport-cursor", *scope]).encode() + b"\0" + payload
    return hmac.new(key, message, hashlib.sha256).digest()[:_TAG_BYTES]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode_cursor(key: bytes, scope: Sequence[str], values: Sequence[Key]) -> str:
    payload = orjson.dumps(list(values))
    return f"{_b64(payload)}.{_b64(_tag(key, scope, payload))}"


def _refused() -> ApiError:
    return ApiError(400, "cursor: not a cursor this endpoint returned", source="cursor")


def decode_cursor(
    key: bytes, scope: Sequence[str], cursor: str, shape: Sequence[type[Key]]
) -> tuple[Any, ...]:
    """The key values of a cursor `encode_cursor` wrote for this `scope` with this key;
    400 naming `cursor` for anything else (edited, truncated, another scope's, or written
    with a key since changed)."""
    if len(cursor) > MAX_CURSOR_CHARS:
        raise _refused()
    body, dot, tag = cursor.partition(".")
    try:
        payload, presented = _unb64(body), _unb64(tag)
    except (ValueError, binascii.Error):
        raise _refused() from None
    # A cursor written just before a key rotation still pages on (autoport.kit.keyring).
    if not dot or not any(
        hmac.compare_digest(presented, _tag(used, scope, payload)) for used in accepted(key)
    ):
        raise _refused()
    values = orjson.loads(payload)
    # Signed means written by us; the shape is checked anyway, so a change of an
    # endpoint's sort key cannot misread the cursors of the version before.
    if not isinstance(values, list) or len(values) != len(shape):
        raise _refused()
    if not all(type(v) is t for v, t in zip(values, shape, strict=True)):
        raise _refused()
    return tuple(values)  # of the types in `shape`
