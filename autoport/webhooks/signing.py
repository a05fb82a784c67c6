"""Signatures over the raw body: what the sender adds and what a receiver checks.

Both sides work on bytes: the body is signed exactly as sent, so a receiver must verify
the raw request body before parsing it (re-serialising parsed JSON changes the bytes).
"""

from __future__ import annotations

import hashlib
import hmac

USER_AGENT_VERSION = "1.2.0"


def signature_256(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signature_sha1(secret: str, body: bytes) -> str:
    # Legacy scheme, kept because existing receivers still check it.
    return "sha1=" + hmac.new(secret.encode(), body, hashlib.sha1).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    """True when `header` (the value of X-Svc-Signature-256, or of the legacy
    X-Svc-Signature) is the signature of the raw `body` under `secret`.

    Compared in constant time; an absent, malformed or unknown-scheme header is False.
    """
    if not header or not secret:
        return False
    scheme, _, _ = header.strip().partition("=")
    if scheme == "sha256":
        expected = signature_256(secret, body)
    elif scheme == "sha1":
        expected = signature_sha1(secret, body)
    else:
        return False
    return hmac.compare_digest(expected.encode(), header.strip().encode())


def delivery_headers(
    *, prefix: str, secret: str, body: bytes, delivery_id: str, event_type: str
) -> dict[str, str]:
    """The headers of one delivery; `prefix` is the configured dialect (default Svc)."""
    return {
        "Content-Type": "application/json",
        "User-Agent": f"{prefix}-Webhook/{USER_AGENT_VERSION}",
        f"X-{prefix}-Delivery": delivery_id,
        f"X-{prefix}-Event": event_type,
        f"X-{prefix}-Signature-256": signature_256(secret, body),
        f"X-{prefix}-Signature": signature_sha1(secret, body),
    }
