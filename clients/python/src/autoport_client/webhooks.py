"""Verify and parse webhook deliveries.

    event = verify(secret, raw_body, headers)      # raises SignatureError, else the event

Three signature schemes are understood, strongest first:

- Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64
  HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, the key being the base64 after `whsec_`;
- autoport's timestamped signature: `X-Svc-Timestamp` and `X-Svc-Signature-Timestamped:
  sha256=<hex HMAC-SHA256(secret, "<X-Svc-Delivery>.<timestamp>.<body>")>`;
- the original's `X-Svc-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`, which
  covers the body only (a captured delivery stays valid: drop duplicates by delivery id).

Where a timestamp is signed it must be within `tolerance` seconds (5 minutes) of now.
Always verify the raw body, before parsing it."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from autoport_client.errors import SignatureError
from autoport_client.models._base import parse_instant

TOLERANCE_SECONDS = 300


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """A delivery's body: `{"vehicle": {"vin"}, "event": {"type", "received_at", "action"?,
    "detail"?, "authorization_id"?}, "application": {"id"}}`."""

    type: str  # ping, fleet_clearance_changed, authorization_changed, ...
    vin: str
    application_id: str
    received_at: datetime | None
    action: str | None = None
    detail: str | None = None
    authorization_id: str | None = None
    delivery_id: str | None = None  # the same for every retry: drop duplicates by it
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], *, delivery_id: str | None = None) -> WebhookEvent:
        event = body.get("event") or {}
        received = event.get("received_at")
        return cls(
            type=str(event.get("type", "")),
            vin=str((body.get("vehicle") or {}).get("vin", "")),
            application_id=str((body.get("application") or {}).get("id", "")),
            received_at=parse_instant(received) if isinstance(received, str) else None,
            action=event.get("action"),
            detail=event.get("detail"),
            authorization_id=event.get("authorization_id"),
            delivery_id=delivery_id,
            raw=dict(body),
        )


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def _fresh(timestamp: str, tolerance: float, now: float | None) -> None:
    try:
        sent = int(timestamp)
    except ValueError:
        raise SignatureError("the signature timestamp is not a number") from None
    if abs((time.time() if now is None else now) - sent) > tolerance:
        raise SignatureError("the signature timestamp is outside the tolerance (replayed?)")


def _standard_key(secret: str) -> bytes:
    text = secret.removeprefix("whsec_")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError("the secret is not whsec_ followed by base64") from None


def _check_standard(
    secret: str, body: bytes, headers: dict[str, str], tolerance: float, now: float | None
) -> str:
    delivery_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not delivery_id or not timestamp:
        raise SignatureError("webhook-id and webhook-timestamp are required")
    content = f"{delivery_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(
        hmac.new(_standard_key(secret), content, hashlib.sha256).digest()
    ).decode()
    offered = [
        sig for version, _, sig in (
            part.partition(",") for part in headers["webhook-signature"].split()
        ) if version == "v1"
    ]  # fmt: skip
    if not any(hmac.compare_digest(expected, sig) for sig in offered):
        raise SignatureError("webhook-signature does not match")
    _fresh(timestamp, tolerance, now)
    return delivery_id


def verify(
    secret: str,
    raw_body: bytes,
    headers: Mapping[str, str],
    *,
    tolerance: float = TOLERANCE_SECONDS,
    require_timestamp: bool = False,
    prefix: str = "Svc",
    now: float | None = None,
) -> WebhookEvent:
    """The delivery's event if its signature is right (and, when signed, its timestamp
    recent); else `SignatureError`. `prefix` is the deployment's header dialect
    (`webhook_header_prefix`); `require_timestamp` refuses body-only signatures."""
    if not secret:
        raise SignatureError("no secret to verify with")
    lowered = _lower(headers)
    name = f"x-{prefix.lower()}"
    delivery_id = lowered.get(f"{name}-delivery")
    if "webhook-signature" in lowered:
        delivery_id = _check_standard(secret, raw_body, lowered, tolerance, now)
    elif f"{name}-signature-timestamped" in lowered and f"{name}-timestamp" in lowered:
        timestamp = lowered[f"{name}-timestamp"]
        content = f"{delivery_id or ''}.{timestamp}.".encode() + raw_body
        expected = "sha256=" + hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, lowered[f"{name}-signature-timestamped"].strip()):
            raise SignatureError(f"X-{prefix}-Signature-Timestamped does not match")
        _fresh(timestamp, tolerance, now)
    elif f"{name}-signature-256" in lowered and not require_timestamp:
        expected = "sha256=" + hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, lowered[f"{name}-signature-256"].strip()):
            raise SignatureError(f"X-{prefix}-Signature-256 does not match")
    else:
        raise SignatureError("the delivery carries no signature this receiver accepts")
    try:
        body = json.loads(raw_body)
    except ValueError:
        raise SignatureError("the signed body is not JSON") from None
    if not isinstance(body, dict):
        raise SignatureError("the signed body is not a JSON object")
    return WebhookEvent.from_json(body, delivery_id=delivery_id)


# ------------------------------------------------------------------ framework helpers


class _StarletteRequest(Protocol):
    @property
    def headers(self) -> Mapping[str, str]: ...

    async def body(self) -> bytes: ...


async def verify_starlette(secret: str, request: _StarletteRequest, **options: Any) -> WebhookEvent:
    """Starlette / FastAPI: `event = await verify_starlette(SECRET, request)`."""
    return verify(secret, await request.body(), request.headers, **options)


class _FlaskRequest(Protocol):
    @property
    def headers(self) -> Mapping[str, str]: ...

    def get_data(self) -> bytes: ...


def verify_flask(secret: str, request: _FlaskRequest, **options: Any) -> WebhookEvent:
    """Flask: `event = verify_flask(SECRET, flask.request)`."""
    return verify(secret, request.get_data(), request.headers, **options)


class _DjangoRequest(Protocol):
    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def body(self) -> bytes: ...


def verify_django(secret: str, request: _DjangoRequest, **options: Any) -> WebhookEvent:
    """Django: `event = verify_django(SECRET, request)` (request.body is the raw body)."""
    return verify(secret, request.body, request.headers, **options)


__all__ = [
    "TOLERANCE_SECONDS",
    "WebhookEvent",
    "verify",
    "verify_django",
    "verify_flask",
    "verify_starlette",
]
