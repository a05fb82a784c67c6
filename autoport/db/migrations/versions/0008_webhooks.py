"""Webhook configuration and the delivery table (queue and delivery log).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("secret_sealed", sa.Text, nullable=False),
        sa.Column("events", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("application_id", name="pk_webhooks"),
        sa.ForeignKeyConstraint(
            ["application_id"], ["applications.id"], name="fk_webhooks_application_id_applications"
        ),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), autoincrement=True),
        sa.Column("delivery_id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("event_type", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("enqueued_at", sa.BigInteger, nullable=False),
        sa.Column("next_attempt_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("claimed_by", sa.Text, nullable=True),
        sa.Column("claimed_until", sa.BigInteger, nullable=True),
        sa.Column("last_attempt_at", sa.BigInteger, nullable=True),
        sa.Column("delivered_at", sa.BigInteger, nullable=True),
        sa.Column("duration_ms", sa.Integer, nullable=True),
        sa.Column("request_headers", sa.Text, nullable=True),
        sa.Column("response_status", sa.Integer, nullable=True),
        sa.Column("response_headers", sa.Text, nullable=True),
        sa.Column("response_body", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
        sa.UniqueConstraint("delivery_id", name="uq_webhook_deliveries_delivery_id"),
    )
    op.create_index(
        "ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_attempt_at"]
    )
    op.create_index(
        "ix_webhook_deliveries_order",
        "webhook_deliveries",
        ["application_id", "vin", "event_type", "status", "id"],
    )
    op.create_index(
        "ix_webhook_deliveries_log", "webhook_deliveries", ["environment", "application_id", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_log", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_order", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
