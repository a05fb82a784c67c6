"""`verify` on each signature scheme, computed here independently of the library: the
right signature passes, a changed body, another secret, an old or future timestamp and a
missing signature fail; the Starlette helper on a real Starlette request; Flask and
Django request objects (those frameworks are not installed here: their request shapes)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from autoport_client import SignatureError
from autoport_client.webhooks import verify, verify_django, verify_flask, verify_starlette

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
BODY = json.dumps(
    {
        "vehicle": {"vin": "WBA12345678901234"},
        "event": {
            "type": "fleet_clearance_changed",
            "received_at": "2026-11-23T14:10:57.123456Z",
            "action": "approved",
        },
        "application": {"id": "0123456789ABCDEF01234567"},
    },
    separators=(",", ":"),
).encode()
DELIVERY = "6f1c7c2e-8d0b-4a8e-9a43-1d2f3e4a5b6c"


def legacy(secret: str = SECRET, body: bytes = BODY) -> dict[str, str]:
    mac = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Svc-Signature-256": f"sha256={mac}", "X-Svc-Delivery": DELIVERY}


def timestamped(at: int, secret: str = SECRET, body: bytes = BODY) -> dict[str, str]:
    content = f"{DELIVERY}.{at}.".encode() + body
    mac = hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()
    return {
        **legacy(secret, body),
        "X-Svc-Timestamp": str(at),
        "X-Svc-Signature-Timestamped": f"sha256={mac}",
    }


def standard(at: int, secret: str = SECRET, body: bytes = BODY) -> dict[str, str]:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{DELIVERY}.{at}.".encode() + body, hashlib.sha256).digest()
    return {
        "webhook-id": DELIVERY,
        "webhook-timestamp": str(at),
        # A rotated-out key's signature first: any matching v1 entry is enough.
        "webhook-signature": " ".join(
            f"v1,{base64.b64encode(sig).decode()}" for sig in (b"x" * 32, mac)
        ),
    }


def test_each_scheme_verifies_and_parses() -> None:
    now = int(time.time())
    for headers in (legacy(), timestamped(now), standard(now)):
        event = verify(SECRET, BODY, headers)
        assert event.type == "fleet_clearance_changed" and event.action == "approved"
        assert event.vin == "WBA12345678901234"
        assert event.application_id == "0123456789ABCDEF01234567"
        assert event.delivery_id == DELIVERY
        assert event.received_at is not None and event.received_at.year == 2026


def test_header_names_are_case_insensitive() -> None:
    lowered = {name.lower(): value for name, value in timestamped(int(time.time())).items()}
    assert verify(SECRET, BODY, lowered).delivery_id == DELIVERY


@pytest.mark.parametrize("scheme", [legacy, timestamped, standard])
def test_a_changed_body_or_another_secret_fails(scheme: object) -> None:
    now = int(time.time())
    make = scheme if scheme is legacy else (lambda **kw: scheme(now, **kw))  # type: ignore[operator]
    headers = make()
    with pytest.raises(SignatureError):
        verify(SECRET, BODY.replace(b"approved", b"rejected"), headers)
    other = "whsec_" + base64.b64encode(b"o" * 32).decode()
    with pytest.raises(SignatureError):
        verify(other, BODY, headers)


def test_timestamps_outside_five_minutes_fail() -> None:
    now = int(time.time())
    for at in (now - 301, now + 301):
        with pytest.raises(SignatureError, match="tolerance"):
            verify(SECRET, BODY, timestamped(at))
        with pytest.raises(SignatureError, match="tolerance"):
            verify(SECRET, BODY, standard(at))
    assert verify(SECRET, BODY, standard(now - 299)).type
    # A replayed timestamped delivery cannot fall back to the body-only signature it also
    # carries: the timestamped one is checked when present.
    assert "X-Svc-Signature-256" in timestamped(now - 3600)


def test_missing_or_body_only_signatures_when_a_timestamp_is_required() -> None:
    with pytest.raises(SignatureError):
        verify(SECRET, BODY, {"X-Svc-Delivery": DELIVERY})
    with pytest.raises(SignatureError):
        verify(SECRET, BODY, legacy(), require_timestamp=True)
    with pytest.raises(SignatureError):
        verify("", BODY, legacy(""))
    # Another header dialect (webhook_header_prefix).
    mac = hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()
    assert verify(SECRET, BODY, {"X-Acme-Signature-256": f"sha256={mac}"}, prefix="Acme").type


async def test_starlette_helper_on_a_real_request() -> None:
    async def hook(request: Request) -> JSONResponse:
        try:
            event = await verify_starlette(SECRET, request)
        except SignatureError as error:
            return JSONResponse({"error": str(error)}, status_code=401)
        return JSONResponse({"type": event.type, "delivery": event.delivery_id})

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as http:
        good = await http.post("/hook", content=BODY, headers=standard(int(time.time())))
        assert good.json() == {"type": "fleet_clearance_changed", "delivery": DELIVERY}
        bad = await http.post("/hook", content=BODY + b" ", headers=legacy())
        assert bad.status_code == 401


@dataclass
class FlaskLikeRequest:
    headers: dict[str, str]
    data: bytes

    def get_data(self) -> bytes:
        return self.data


@dataclass
class DjangoLikeRequest:
    headers: dict[str, str]
    body: bytes


def test_flask_and_django_helpers() -> None:
    headers = timestamped(int(time.time()))
    assert verify_flask(SECRET, FlaskLikeRequest(headers, BODY)).delivery_id == DELIVERY
    assert verify_django(SECRET, DjangoLikeRequest(headers, BODY)).delivery_id == DELIVERY
    with pytest.raises(SignatureError):
        verify_django(SECRET, DjangoLikeRequest(headers, b"{}"))
