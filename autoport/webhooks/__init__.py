"""Signed webhook delivery. Receivers: `autoport.webhooks.verify(secret, body, header)`."""

from autoport.webhooks.signing import verify

__all__ = ["verify"]
