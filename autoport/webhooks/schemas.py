from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from autoport.webhooks.signing import SignatureScheme

EventType = Literal["ping", "fleet_clearance_changed", "authorization_changed"]
EVENT_TYPES: tuple[str, ...] = get_args(EventType)


class WebhookIn(BaseModel):
    """An application's webhook. Omit `secret` to keep the current one (or, for a new
    webhook, to have a 256-bit secret generated); omit `events` to subscribe to all;
    omit `signature_scheme` to keep the current one (a new webhook: `default`, the
    X-Svc-Signature headers; `standard`: Standard Webhooks, which needs a `whsec_`
    secret)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=2048, examples=["https://example.com/hooks/autoport"])
    secret: str | None = Field(default=None, min_length=16, max_length=256)
    events: list[EventType] | None = Field(default=None, max_length=3)
    signature_scheme: SignatureScheme | None = None
