"""Signatures over the raw body: what the sender adds and what a receiver checks.

Both sides work on bytes: the body is signed exactly as sent, so a receiver must verify
the raw request body before parsing it (re-serialising parsed JSON changes the bytes).

Two schemes, chosen per webhook (`signature_scheme`):

- `default`: the original headers, unchanged for existing receivers
  (`X-Svc-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`, legacy
  `X-Svc-Signature: sha1=...`), plus `X-Svc-Timestamp: <unix seconds>` and
  `X-Svc-Signature-Timestamped: sha256=<hex HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`.
  The first two cover the body only, so a captured delivery stays valid forever; the
  timestamped one lets a receiver refuse old deliveries.
- `standard`: Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`,
  `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`
  where the key is the base64 after `whsec_` in the secret.

Binding the delivery id into the timestamped signatures means a replay inside the
tolerance cannot pose as a new delivery (receivers drop duplicates by the id).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Mapping
from typing import Literal, get_args

USER_AGENT_VERSION = "1.2.0"

SignatureScheme = Literal["default", "standard"]
SIGNATURE_SCHEMES: tuple[str, ...] = get_args(SignatureScheme)

# A receiver refuses deliveries signed longer ago than this (or this far in the future:
# the sender's clock may be a little ahead, not minutes).
TOLERANCE_SECONDS = 300

STANDARD_SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret
# The Standard Webhooks signature-scheme table: a symmetric secret is random and
# between 24 bytes (192 bits) and 64 bytes (512 bits).
STANDARD_KEY_BYTES = (24, 64)
_GENERATED_KEY_BYTES = 32
_TIMESTAMP = re.compile(r"[0-9]{1,15}")


class SignatureError(ValueError):
    """A delivery that must not be trusted; the message says why (safe to log)."""


# ------------------------------------------------------------------------ secrets


def new_secret() -> str:
    """A generated secret: `whsec_` + base64 of 256 random bits. It is a valid Standard
    Webhooks secret, and as a string it serves the default scheme just as well, so a
    webhook can switch schemes without a new secret."""
    return STANDARD_SECRET_PREFIX + base64.b64encode(
        secrets.token_bytes(_GENERATED_KEY_BYTES)
    ).decode("ascii")


def standard_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret: the base64 after `whsec_` (the prefix
    may be left off, as the spec's reference libraries allow), decoded."""
    text = secret.removeprefix(STANDARD_SECRET_PREFIX)
    try:
        # Padding is optional; anything outside the base64 alphabet is an error (a
        # lenient decoder would silently drop it and sign with another key).
        key = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError("the secret is not whsec_ followed by base64") from None
    if not key:
        raise SignatureError("the secret is empty")
    return key


def standard_secret_problem(secret: str) -> str | None:
    """Why `secret` cannot be a webhook's Standard Webhooks secret, or None."""
    if not secret.startswith(STANDARD_SECRET_PREFIX):
        return "a Standard Webhooks secret starts with whsec_"
    try:
        key = standard_key(secret)
    except SignatureError as error:
        return str(error)
    low, high = STANDARD_KEY_BYTES
    if not low <= len(key) <= high:
        return f"a Standard Webhooks secret holds {low} to {high} bytes (this one {len(key)})"
    return None


# ------------------------------------------------------------------------ signing


def signature_256(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signature_sha1(secret: str, body: bytes) -> str:
    # Legacy scheme, kept because existing receivers still check it.
    return "sha1=" + hmac.new(secret.encode(), body, hashlib.sha1).hexdigest()


def _signed_content(delivery_id: str, timestamp: str, body: bytes) -> bytes:
    return f"{delivery_id}.{timestamp}.".encode() + body


def timestamped_signature(secret: str, delivery_id: str, timestamp: str, body: bytes) -> str:
    """The default scheme's `X-Svc-Signature-Timestamped` value."""
    content = _signed_content(delivery_id, timestamp, body)
    return "sha256=" + hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()


def standard_signature(key: bytes, delivery_id: str, timestamp: str, body: bytes) -> str:
    """One `v1,<base64>` entry of `webhook-signature`."""
    mac = hmac.new(key, _signed_content(delivery_id, timestamp, body), hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode("ascii")


def delivery_headers(
    *,
    prefix: str,
    secret: str,
    body: bytes,
    delivery_id: str,
    event_type: str,
    timestamp: int,
    scheme: str = "default",
) -> dict[str, str]:
    """The headers of one attempt; `prefix` is the configured dialect (default Svc),
    `timestamp` the attempt's time in Unix seconds (fresh for every attempt)."""
    sent_at = str(timestamp)
    common = {
        "Content-Type": "application/json",
        "User-Agent": f"{prefix}-Webhook/{USER_AGENT_VERSION}",
    }
    if scheme == "standard":
        return common | {
            "webhook-id": delivery_id,
            "webhook-timestamp": sent_at,
            "webhook-signature": standard_signature(
                standard_key(secret), delivery_id, sent_at, body
            ),
        }
    return common | {
        f"X-{prefix}-Delivery": delivery_id,
        f"X-{prefix}-Event": event_type,
        f"X-{prefix}-Signature-256": signature_256(secret, body),
        f"X-{prefix}-Signature": signature_sha1(secret, body),
        f"X-{prefix}-Timestamp": sent_at,
        f"X-{prefix}-Signature-Timestamped": timestamped_signature(
            secret, delivery_id, sent_at, body
        ),
    }


# ---------------------------------------------------------------------- receivers


def verify(secret: str, body: bytes, header: str | None) -> bool:
    """True when `header` (the value of X-Svc-Signature-256, or of the legacy
    X-Svc-Signature) is the signature of the raw `body` under `secret`.

    Compared in constant time; an absent, malformed or unknown-scheme header is False.
    These signatures carry no time: a captured delivery passes forever. New receivers
    use `verify_delivery`, which refuses old deliveries.
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


def verify_delivery(
    secret: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    prefix: str = "Svc",
    tolerance_seconds: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> str:
    """Check a received delivery: its timestamped signature (either scheme, recognised
    by its headers) over the raw `body`, and that it was signed at most
    `tolerance_seconds` ago (and not that far in the future). Returns the delivery id
    (drop duplicates by it); raises SignatureError saying why otherwise.

    `headers` is the request's header mapping (any letter case); `prefix` the sender's
    `webhook_header_prefix`; `now` Unix seconds, the current time when None.
    """
    if not secret:
        raise SignatureError("no secret to verify with")
    found = {name.lower(): value for name, value in headers.items()}
    own = f"x-{prefix.lower()}-"
    standard = "webhook-signature" in found
    if standard:
        delivery_id, sent_at = found.get("webhook-id"), found.get("webhook-timestamp")
        offered = found["webhook-signature"].split()
    elif own + "signature-timestamped" in found:
        delivery_id, sent_at = found.get(own + "delivery"), found.get(own + "timestamp")
        offered = [found[own + "signature-timestamped"].strip()]
    else:
        raise SignatureError("no timestamped signature header")
    if not delivery_id or "." in delivery_id:
        # A full stop in the id would shift where the signed fields meet.
        raise SignatureError("missing or malformed delivery id")
    if sent_at is None or not _TIMESTAMP.fullmatch(sent_at):
        raise SignatureError("missing or malformed timestamp")
    age = (time.time() if now is None else now) - int(sent_at)
    if age > tolerance_seconds:
        raise SignatureError("the delivery is too old (signed more than the tolerance ago)")
    if age < -tolerance_seconds:
        raise SignatureError("the delivery's timestamp is too far in the future")
    if standard:
        expected = standard_signature(standard_key(secret), delivery_id, sent_at, body)
    else:
        expected = timestamped_signature(secret, delivery_id, sent_at, body)
    # Several signatures may be offered (the sender rotating its key): any one matching
    # is enough, each compared in constant time.
    if not any(hmac.compare_digest(expected.encode(), value.encode()) for value in offered):
        raise SignatureError("the signature does not match")
    return delivery_id
