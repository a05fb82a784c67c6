from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    Table,
    Text,
    UniqueConstraint,
)

from autoport.db import metadata

# One webhook per application. The secret is needed in plaintext to sign deliveries, so
# it cannot be hashed: it is sealed (AES-GCM, key derived from the configured secrets,
# see autoport.webhooks.sealing). `events` is a JSON list of subscribed event types.
# `signature_scheme`: default (the X-Svc-Signature headers) | standard (Standard Webhooks).
webhooks = Table(
    "webhooks",
    metadata,
    Column("application_id", Text, ForeignKey("applications.id"), primary_key=True),
    Column("environment", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("secret_sealed", Text, nullable=False),
    Column("events", Text, nullable=False),
    Column("signature_scheme", Text, nullable=False, server_default="default"),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)

# The delivery table is the durable queue and the delivery log at once. `id` is the
# queue order (per application, vin and event type no row overtakes an earlier pending
# one); `delivery_id` is the uuid sent as X-Svc-Delivery, stable across retries.
# `status`: pending | succeeded | failed. A row is leased by a worker through
# claimed_by/claimed_until; `attempts` counts the claims, so (delivery_id, attempts)
# names one attempt. The request/response columns describe the latest attempt.
webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("delivery_id", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("application_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("vin", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("created_at", BigInteger, nullable=False),
    Column("enqueued_at", BigInteger, nullable=False),
    Column("next_attempt_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("claimed_by", Text, nullable=True),
    Column("claimed_until", BigInteger, nullable=True),
    Column("last_attempt_at", BigInteger, nullable=True),
    Column("delivered_at", BigInteger, nullable=True),
    Column("duration_ms", Integer, nullable=True),
    Column("request_headers", Text, nullable=True),
    Column("response_status", Integer, nullable=True),
    Column("response_headers", Text, nullable=True),
    Column("response_body", Text, nullable=True),
    Column("error", Text, nullable=True),
    UniqueConstraint("delivery_id"),
    Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
    Index("ix_webhook_deliveries_order", "application_id", "vin", "event_type", "status", "id"),
    Index("ix_webhook_deliveries_log", "environment", "application_id", "id"),
)
