"""Secrets and tokens: generation, hashing at rest, constant-time comparison, and the two
primitives every feature shares instead of its own copy: sealing (AES-256-GCM, secrets
that must be read back) and signing (HMAC-SHA256, values handed to a client and taken
back unchanged).

Random tokens carry 256 bits, so a keyed HMAC-SHA256 is the right hash (1-2 µs);
slow password hashes add nothing for them. The key (`token_hmac_key`) means a stolen
database alone cannot even confirm a guessed token.

The formats are stored or in flight (webhook secrets and refresh successors in the
database, consent steps in browsers): they change only with a reader for the old one
(tests/kit/test_crypto.py opens values made by the code these replaced).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_NONCE_BYTES = 12  # AES-GCM's standard nonce (NIST SP 800-38D §8.2: 96 bits)


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


def derive_key(master: bytes, info: bytes) -> bytes:
    """A 256-bit key for one use (`info` names it) from a master key (HKDF-SHA256,
    RFC 5869): one configured secret, independent keys per purpose."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(master)


def seal(key: bytes, plain: bytes, *, context: bytes = b"") -> str:
    """`plain` encrypted and authenticated under `key` (AES-256-GCM, a random nonce):
    base64url(nonce | ciphertext | tag), padded. `context` is authenticated, not stored:
    a sealed value opens only with the same context (say, the row it belongs to)."""
    nonce = os.urandom(_NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, plain, context or None)
    return base64.urlsafe_b64encode(nonce + sealed).decode()


def unseal(key: bytes, sealed: str, *, context: bytes = b"") -> bytes | None:
    """The plaintext of `seal`, or None when it does not open (another key or context,
    altered, not a sealed value)."""
    try:
        raw = base64.urlsafe_b64decode(sealed.encode())
        return AESGCM(key).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], context or None)
    except (InvalidTag, ValueError, binascii.Error):
        return None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, purpose: str, body: str) -> bytes:
    return hmac.new(key, f"{purpose}.{body}".encode(), hashlib.sha256).digest()


def sign(key: bytes, purpose: str, data: bytes) -> str:
    """A compact signed value: base64url(data) "." base64url(HMAC-SHA256), unpadded. The
    purpose is part of the MAC, so a value made for one use is never accepted by
    another. Readable by anyone: sign what may be seen, seal what may not."""
    body = _b64(data)
    return f"{body}.{_b64(_mac(key, purpose, body))}"


def verify(key: bytes, purpose: str, signed: str) -> bytes | None:
    """The data of a value `sign` made for `purpose` under `key`; None otherwise."""
    body, _, mac = signed.partition(".")
    if not body or not mac:
        return None
    try:
        if not same(_unb64(mac), _mac(key, purpose, body)):
            return None
        return _unb64(body)
    except (ValueError, binascii.Error):
        return None
