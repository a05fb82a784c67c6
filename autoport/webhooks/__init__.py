"""Signed webhook delivery. Receivers: `autoport.webhooks.verify_delivery(secret, body,
headers)` (timestamped signatures, refuses replays older than five minutes); the older
`verify(secret, body, header)` checks the untimed X-Svc-Signature-256 only."""

from autoport.webhooks.signing import SignatureError, verify, verify_delivery

__all__ = ["SignatureError", "verify", "verify_delivery"]
