"""JSON from outside: one nesting limit wherever it is read.

A document nested a thousand levels deep is a few kilobytes, yet it exhausts what reads
it: the standard library's parser (FastAPI's, and the commands route's fallback) raises
RecursionError, orjson refuses past 1,024 levels but writes only 255, and any code that
walks a value recursively fails on it; each was a 500. No document of this API needs
more than a dozen levels (an ingested vehicle in the streaming layout: about ten), so
JSON deeper than `MAX_DEPTH` is refused before anything parses it: request bodies by
the request pipeline (autoport.kit.middleware, 400 naming `body`, whichever route), and
JSON read from elsewhere in a request (a query parameter, a string field holding JSON,
a token's parts) through `loads`.

The depth is measured without parsing, with C-speed byte operations only: a body with
no more `{` and `[` than the limit cannot pass it (nearly every body: two counts);
otherwise escapes are dropped, everything but quotes and brackets deleted, the strings
cut out, and the deepest level is the running sum of the brackets left (numpy: a
1.5 MB ingest body in about the time orjson takes to parse a tenth of it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

MAX_DEPTH = 32

_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
# Per byte of what is left: +1 opens a level, -1 closes one.
_STEP = np.zeros(256, dtype=np.int8)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1


def depth_over_limit(text: bytes | str) -> int | None:
    """The nesting depth of a JSON text when it is deeper than MAX_DEPTH, else None.
    Unbalanced brackets (malformed JSON) count as the levels a parser would enter."""
    data = text.encode() if isinstance(text, str) else text
    if data.count(b"{") + data.count(b"[") <= MAX_DEPTH:
        return None
    # Escaped backslashes, then escaped quotes, go (left to right, as a parser pairs
    # them); then every quote opens or closes a string: the brackets outside strings are
    # every other piece between quotes.
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(unescaped.translate(None, _NOT_STRUCTURE).split(b'"')[::2])
    if not brackets:
        return None
    levels = np.cumsum(_STEP[np.frombuffer(brackets, dtype=np.uint8)], dtype=np.int64)
    depth = int(levels.max())
    return depth if depth > MAX_DEPTH else None


def too_deep_detail(depth: int) -> str:
    return f"JSON nested more than {MAX_DEPTH} levels deep (at least {depth}) is not accepted"


class TooDeep(orjson.JSONDecodeError):
    """A document refused for its depth: a JSONDecodeError, so that every caller's
    handling of malformed JSON (a 400 naming the field) applies unchanged."""

    def __init__(self, depth: int) -> None:
        super().__init__(too_deep_detail(depth), "", 0)
        self.depth = depth

    def __str__(self) -> str:
        return self.msg


def loads(text: bytes | str) -> Any:
    """orjson.loads, refusing a document deeper than MAX_DEPTH before it is parsed
    (`TooDeep`, an orjson.JSONDecodeError)."""
    depth = depth_over_limit(text)
    if depth is not None:
        raise TooDeep(depth)
    return orjson.loads(text)


def looks_like_json(body: bytes) -> bool:
    return body.lstrip()[:1] in (b"{", b"[")
