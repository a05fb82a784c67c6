"""Webhook secrets at rest.

A signing secret must be available in plaintext to sign, so it cannot be hashed like
tokens. It is sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the
configured `token_hmac_key`; the application id is the associated data, so a sealed
secret copied onto another application's row does not open. A database dump alone
reveals no secret.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_VERSION = "v1"
_INFO = b"autoport webhook secret sealing v1"


class SealError(Exception):
    """The sealed secret does not open under the configured key (key changed?)."""


@lru_cache(maxsize=16)
def derive_key(master: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(master)


def seal(key: bytes, secret: str, *, application_id: str) -> str:
    nonce = os.urandom(12)
    sealed = AESGCM(key).encrypt(nonce, secret.encode(), application_id.encode())
    return f"{_VERSION}:" + base64.urlsafe_b64encode(nonce + sealed).decode()


def unseal(key: bytes, sealed: str, *, application_id: str) -> str:
    version, _, data = sealed.partition(":")
    if version != _VERSION:
        raise SealError(f"unknown sealing version {version!r}")
    raw = base64.urlsafe_b64decode(data.encode())
    try:
        plain = AESGCM(key).decrypt(raw[:12], raw[12:], application_id.encode())
    except InvalidTag as error:
        raise SealError("the webhook secret does not open with the configured key") from error
    return plain.decode()


def unseal_any(keys: Sequence[bytes], sealed: str, *, application_id: str) -> str:
    """`unseal` with the first of `keys` that opens it: during a key rotation window a
    secret not yet re-sealed opens under the previous key (autoport.kit.keyring)."""
    problem: SealError | None = None
    for key in keys:
        try:
            return unseal(key, sealed, application_id=application_id)
        except SealError as error:
            problem = error
    raise problem or SealError("no key to open the webhook secret with")
