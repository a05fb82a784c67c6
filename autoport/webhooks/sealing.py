"""Webhook secrets at rest.

A signing secret must be available in plaintext to sign, so it cannot be hashed like
tokens. It is sealed (autoport.kit.crypto.seal: AES-256-GCM) under a key derived from
the configured `token_hmac_key`; the application id is the authenticated context, so a
sealed secret copied onto another application's row does not open. A database dump alone
reveals no secret. Stored as `v1:<sealed>`: the version names this scheme.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from autoport.kit import crypto

_VERSION = "v1"
_INFO = b"autoport webhook secret sealing v1"


class SealError(Exception):
    """The sealed secret does not open under the configured key (key changed?)."""


@lru_cache(maxsize=16)
def derive_key(master: bytes) -> bytes:
    return crypto.derive_key(master, _INFO)


def seal(key: bytes, secret: str, *, application_id: str) -> str:
    return f"{_VERSION}:" + crypto.seal(key, secret.encode(), context=application_id.encode())


def unseal(key: bytes, sealed: str, *, application_id: str) -> str:
    version, _, data = sealed.partition(":")
    if version != _VERSION:
        raise SealError(f"unknown sealing version {version!r}")
    plain = crypto.unseal(key, data, context=application_id.encode())
    if plain is None:
        raise SealError("the webhook secret does not open with the configured key")
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
