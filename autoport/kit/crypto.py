"""Secrets and tokens: generation, hashing at rest, constant-time comparison.

Random tokens carry 256 bits, so a keyed HMAC-SHA256 is the right hash (1-2 µs);
slow password hashes add nothing for them. The key (`token_hmac_key`) means a stolen
database alone cannot even confirm a guessed token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token(prefix: str = "", nbytes: int = 32) -> str:
    """An opaque random token of `nbytes` bytes of entropy (default 256 bits)."""
    return prefix + secrets.token_urlsafe(nbytes)


def token_hash(key: bytes, token: str) -> str:
    return hmac.new(key, token.encode(), hashlib.sha256).hexdigest()


def same(a: str | bytes, b: str | bytes) -> bool:
    """Constant-time equality for secrets."""
    left = a.encode() if isinstance(a, str) else a
    right = b.encode() if isinstance(b, str) else b
    return hmac.compare_digest(left, right)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
