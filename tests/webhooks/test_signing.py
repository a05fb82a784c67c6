"""The receiver helper `autoport.webhooks.verify` and the signed headers."""

from __future__ import annotations

import hashlib
import hmac

from autoport.webhooks import verify
from autoport.webhooks.signing import delivery_headers

SECRET = "whsec_receiver-test-secret"
BODY = b'{"vehicle":{"vin":"*"},"event":{"type":"ping"},"application":{"id":"X"}}'


def test_verify_accepts_the_sha256_signature_of_the_raw_body() -> None:
    header = "sha256=" + hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()
    assert verify(SECRET, BODY, header)


def test_verify_accepts_the_legacy_sha1_signature() -> None:
    header = "sha1=" + hmac.new(SECRET.encode(), BODY, hashlib.sha1).hexdigest()
    assert verify(SECRET, BODY, header)


def test_verify_refuses_a_changed_body_another_secret_or_a_bad_header() -> None:
    header = delivery_headers(
        prefix="Svc", secret=SECRET, body=BODY, delivery_id="d", event_type="ping"
    )["X-Svc-Signature-256"]
    assert verify(SECRET, BODY, header)
    assert not verify(SECRET, BODY + b" ", header)
    assert not verify("another-secret-value", BODY, header)
    assert not verify(SECRET, BODY, None)
    assert not verify(SECRET, BODY, "")
    assert not verify(SECRET, BODY, header.replace("sha256=", "md5="))
    assert not verify(SECRET, BODY, header[:-2])
    assert not verify("", BODY, header)


def test_headers_follow_the_configured_prefix() -> None:
    headers = delivery_headers(
        prefix="Acme", secret=SECRET, body=BODY, delivery_id="d-1", event_type="ping"
    )
    assert headers["User-Agent"] == "Acme-Webhook/1.2.0"
    assert headers["X-Acme-Delivery"] == "d-1"
    assert headers["X-Acme-Event"] == "ping"
    assert verify(SECRET, BODY, headers["X-Acme-Signature-256"])
    assert verify(SECRET, BODY, headers["X-Acme-Signature"])
    assert headers["Content-Type"] == "application/json"
