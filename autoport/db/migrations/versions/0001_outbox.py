"""The transactional outbox.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), autoincrement=True),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("consumer", sa.Text, nullable=False),
        sa.Column("event_type", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=True),
        sa.Column("application_id", sa.Text, nullable=True),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("available_at", sa.BigInteger, nullable=False),
        sa.Column("claimed_until", sa.BigInteger, nullable=True),
        sa.Column("claimed_by", sa.Text, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
    )
    op.create_index("ix_outbox_consumer_available", "outbox", ["consumer", "available_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_outbox_consumer_available", table_name="outbox")
    op.drop_table("outbox")
