"""The receiver helpers `verify` and `verify_delivery`, the signed headers of both
schemes, and Standard Webhooks secrets. The `standard` scheme is checked against the
spec's algorithm written out here and against the `standardwebhooks` reference library."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from datetime import UTC, datetime

import pytest
import standardwebhooks

from autoport.webhooks import SignatureError, verify, verify_delivery
from autoport.webhooks.signing import (
    delivery_headers,
    new_secret,
    standard_key,
    standard_secret_problem,
)

SECRET = "whsec_receiver-test-secret"
STANDARD_SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
BODY = b'{"vehicle":{"vin":"*"},"event":{"type":"ping"},"application":{"id":"X"}}'
DELIVERY_ID = "7c4c5a9e-34a1-4a8e-9d39-3c4a8d0f7b11"
NOW = 1_764_000_000


def headers(scheme: str = "default", *, secret: str = SECRET, at: int = NOW) -> dict[str, str]:
    return delivery_headers(
        prefix="Svc",
        secret=secret,
        body=BODY,
        delivery_id=DELIVERY_ID,
        event_type="ping",
        timestamp=at,
        scheme=scheme,
    )


def test_verify_accepts_the_sha256_signature_of_the_raw_body() -> None:
    header = "sha256=" + hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()
    assert verify(SECRET, BODY, header)


def test_verify_accepts_the_legacy_sha1_signature() -> None:
    header = "sha1=" + hmac.new(SECRET.encode(), BODY, hashlib.sha1).hexdigest()
    assert verify(SECRET, BODY, header)


def test_verify_refuses_a_changed_body_another_secret_or_a_bad_header() -> None:
    header = headers()["X-Svc-Signature-256"]
    assert verify(SECRET, BODY, header)
    assert not verify(SECRET, BODY + b" ", header)
    assert not verify("another-secret-value", BODY, header)
    assert not verify(SECRET, BODY, None)
    assert not verify(SECRET, BODY, "")
    assert not verify(SECRET, BODY, header.replace("sha256=", "md5="))
    assert not verify(SECRET, BODY, header[:-2])
    assert not verify("", BODY, header)


def test_default_headers_keep_the_old_signatures_and_add_a_timestamped_one() -> None:
    sent = headers()
    # Unchanged for existing receivers: the same values as before timestamps existed.
    assert sent["X-Svc-Signature-256"] == (
        "sha256=" + hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()
    )
    assert sent["X-Svc-Signature"] == (
        "sha1=" + hmac.new(SECRET.encode(), BODY, hashlib.sha1).hexdigest()
    )
    assert sent["X-Svc-Timestamp"] == str(NOW)
    signed = f"{DELIVERY_ID}.{NOW}.".encode() + BODY
    assert sent["X-Svc-Signature-Timestamped"] == (
        "sha256=" + hmac.new(SECRET.encode(), signed, hashlib.sha256).hexdigest()
    )
    assert not any(name.startswith("webhook-") for name in sent)
    assert verify_delivery(SECRET, BODY, sent, now=NOW) == DELIVERY_ID


def test_headers_follow_the_configured_prefix() -> None:
    sent = delivery_headers(
        prefix="Acme",
        secret=SECRET,
        body=BODY,
        delivery_id="d-1",
        event_type="ping",
        timestamp=NOW,
    )
    assert sent["User-Agent"] == "Acme-Webhook/1.2.0"
    assert sent["X-Acme-Delivery"] == "d-1"
    assert sent["X-Acme-Event"] == "ping"
    assert verify(SECRET, BODY, sent["X-Acme-Signature-256"])
    assert verify(SECRET, BODY, sent["X-Acme-Signature"])
    assert sent["Content-Type"] == "application/json"
    assert verify_delivery(SECRET, BODY, sent, prefix="Acme", now=NOW) == "d-1"
    with pytest.raises(SignatureError, match="no timestamped signature"):
        verify_delivery(SECRET, BODY, sent, now=NOW)  # the receiver expects X-Svc-*


def test_standard_headers_follow_the_spec_written_out_independently() -> None:
    sent = headers("standard", secret=STANDARD_SECRET)
    assert set(sent) == {
        "Content-Type",
        "User-Agent",
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
    }
    assert sent["webhook-id"] == DELIVERY_ID
    assert sent["webhook-timestamp"] == str(NOW)
    # The spec: HMAC-SHA256 keyed with the base64-decoded part after whsec_, over
    # "{id}.{timestamp}.{body}", sent as "v1," + base64 of the MAC.
    key = base64.b64decode(STANDARD_SECRET[len("whsec_") :])
    mac = hmac.new(key, f"{DELIVERY_ID}.{NOW}.".encode() + BODY, hashlib.sha256).digest()
    assert sent["webhook-signature"] == "v1," + base64.b64encode(mac).decode()


def test_the_reference_library_verifies_our_standard_signatures() -> None:
    now = int(time.time())
    sent = headers("standard", secret=STANDARD_SECRET, at=now)
    assert standardwebhooks.Webhook(STANDARD_SECRET).verify(BODY, sent) == {
        "vehicle": {"vin": "*"},
        "event": {"type": "ping"},
        "application": {"id": "X"},
    }
    # ... and refuses them under another key or with the body changed.
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        standardwebhooks.Webhook(new_secret()).verify(BODY, sent)
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        standardwebhooks.Webhook(STANDARD_SECRET).verify(BODY + b" ", sent)


def test_our_helper_verifies_the_reference_librarys_signatures() -> None:
    now = int(time.time())
    signature = standardwebhooks.Webhook(STANDARD_SECRET).sign(
        DELIVERY_ID, datetime.fromtimestamp(now, tz=UTC), BODY.decode()
    )
    received = {"Webhook-Id": DELIVERY_ID, "Webhook-Timestamp": str(now)}
    # Several signatures may be offered during a key rotation; one matching suffices.
    other = "v1," + base64.b64encode(b"\0" * 32).decode()
    received["Webhook-Signature"] = f"{other} {signature}"
    assert verify_delivery(STANDARD_SECRET, BODY, received) == DELIVERY_ID
    # The prefix is optional on the receiving side, as in the reference libraries.
    assert verify_delivery(STANDARD_SECRET.removeprefix("whsec_"), BODY, received)
    received["Webhook-Signature"] = other
    with pytest.raises(SignatureError, match="does not match"):
        verify_delivery(STANDARD_SECRET, BODY, received)


@pytest.mark.parametrize("scheme", ["default", "standard"])
def test_verify_delivery_enforces_five_minutes_either_way(scheme: str) -> None:
    sent = headers(scheme, secret=STANDARD_SECRET)
    assert verify_delivery(STANDARD_SECRET, BODY, sent, now=NOW + 300) == DELIVERY_ID
    assert verify_delivery(STANDARD_SECRET, BODY, sent, now=NOW - 300) == DELIVERY_ID
    with pytest.raises(SignatureError, match="too old"):
        verify_delivery(STANDARD_SECRET, BODY, sent, now=NOW + 301)
    with pytest.raises(SignatureError, match="future"):
        verify_delivery(STANDARD_SECRET, BODY, sent, now=NOW - 301)
    assert verify_delivery(STANDARD_SECRET, BODY, sent, now=NOW + 3600, tolerance_seconds=3600)


@pytest.mark.parametrize(
    ("scheme", "id_header", "time_header"),
    [
        ("default", "X-Svc-Delivery", "X-Svc-Timestamp"),
        ("standard", "webhook-id", "webhook-timestamp"),
    ],
)
def test_verify_delivery_refuses_anything_changed_or_missing(
    scheme: str, id_header: str, time_header: str
) -> None:
    sent = headers(scheme, secret=STANDARD_SECRET)

    def refused(changed: dict[str, str], body: bytes = BODY, why: str = "") -> None:
        with pytest.raises(SignatureError, match=why):
            verify_delivery(STANDARD_SECRET, body, changed, now=NOW)

    refused(sent, body=BODY + b" ", why="does not match")
    refused(sent | {time_header: str(NOW - 1)}, why="does not match")
    refused(sent | {id_header: DELIVERY_ID[:-1] + "0"}, why="does not match")
    refused(sent | {id_header: "a.b"}, why="delivery id")
    refused({k: v for k, v in sent.items() if k != id_header}, why="delivery id")
    refused({k: v for k, v in sent.items() if k != time_header}, why="timestamp")
    for bad in ["", "1.5", "-1", " 1764000000", "1e9", "9" * 16]:
        refused(sent | {time_header: bad}, why="timestamp")
    with pytest.raises(SignatureError, match="does not match"):
        verify_delivery(new_secret(), BODY, sent, now=NOW)
    with pytest.raises(SignatureError, match="no secret"):
        verify_delivery("", BODY, sent, now=NOW)
    # Header names in any letter case (aiohttp, Starlette and WSGI differ).
    upper = {name.upper(): value for name, value in sent.items()}
    assert verify_delivery(STANDARD_SECRET, BODY, upper, now=NOW) == DELIVERY_ID


def test_the_untimed_signatures_alone_are_not_enough_for_verify_delivery() -> None:
    sent = headers()
    downgraded = {
        name: value
        for name, value in sent.items()
        if name not in {"X-Svc-Signature-Timestamped", "X-Svc-Timestamp"}
    }
    assert verify(SECRET, BODY, downgraded["X-Svc-Signature-256"])
    with pytest.raises(SignatureError, match="no timestamped signature"):
        verify_delivery(SECRET, BODY, downgraded, now=NOW)


def test_generated_secrets_are_standard_secrets() -> None:
    secret = new_secret()
    assert secret.startswith("whsec_")
    assert standard_secret_problem(secret) is None
    assert len(standard_key(secret)) == 32
    assert new_secret() != secret


@pytest.mark.parametrize(
    ("secret", "why"),
    [
        (base64.b64encode(b"k" * 32).decode(), "starts with whsec_"),
        ("whsec_" + base64.urlsafe_b64encode(b"\xfb" * 32).decode(), "base64"),
        ("whsec_not base64 at all!", "base64"),
        ("whsec_", "empty"),
        ("whsec_" + base64.b64encode(b"k" * 23).decode(), "24 to 64 bytes"),
        ("whsec_" + base64.b64encode(b"k" * 65).decode(), "24 to 64 bytes"),
        ("whsec_schlüssel-schlüssel-schlüssel", "base64"),
    ],
)
def test_standard_secrets_are_checked(secret: str, why: str) -> None:
    problem = standard_secret_problem(secret)
    assert problem is not None and why in problem


def test_standard_secrets_may_leave_off_the_padding() -> None:
    padded = "whsec_" + base64.b64encode(b"k" * 25).decode()
    assert padded.endswith("=")
    assert standard_secret_problem(padded.rstrip("=")) is None
    assert standard_key(padded.rstrip("=")) == b"k" * 25
