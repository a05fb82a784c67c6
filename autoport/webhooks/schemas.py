from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from autoport.webhooks.signing import SignatureScheme

EventType = Literal["ping", "fleet_clearance_changed", "authorization_changed", "command_changed"]
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
    events: list[EventType] | None = Field(default=None, max_length=4)
    signature_scheme: SignatureScheme | None = None


# Answers, as documented in the OpenAPI description (the service builds the dicts).


class WebhookView(BaseModel):
    application_id: str
    url: str
    events: list[EventType]
    signature_scheme: SignatureScheme
    created_at: str
    updated_at: str
    secret: str | None = Field(
        default=None, description="only when saved, or with reveal_secret=true"
    )


class AttemptView(BaseModel):
    """The outcome of the ping sent when a webhook is saved."""

    delivery_id: str
    status: Literal["succeeded", "pending", "failed"]
    attempt: int
    response_status: int | None
    duration_ms: int
    error: str | None
    next_attempt_at: str | None


class WebhookSaved(BaseModel):
    webhook: WebhookView
    ping: AttemptView


class WebhookAnswer(BaseModel):
    webhook: WebhookView


class DeliveryRequestView(BaseModel):
    headers: dict[str, str]
    body: str


class DeliveryResponseView(BaseModel):
    status: int
    headers: dict[str, str]
    body: str | None = Field(description="truncated to webhook_log_body_limit")


class DeliveryView(BaseModel):
    id: str
    event_type: EventType
    vin: str | None
    status: Literal["pending", "succeeded", "failed"]
    attempts: int
    created_at: str | None
    next_attempt_at: str | None
    last_attempt_at: str | None
    delivered_at: str | None
    retry_until: str | None
    duration_ms: int | None
    error: str | None
    request: DeliveryRequestView
    response: DeliveryResponseView | None


class DeliveryList(BaseModel):
    deliveries: list[DeliveryView] = Field(description="newest first")


class DeliveryAnswer(BaseModel):
    delivery: DeliveryView
