"""Streaming: the per-application message log, its cursors, MQTT credentials.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "stream_messages",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False, autoincrement=False),
        sa.Column("message_id", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("ingested_at", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("environment", "application_id", "seq", name="pk_stream_messages"),
    )
    op.create_index("ix_stream_messages_created", "stream_messages", ["created_at"])
    op.create_table(
        "stream_cursors",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("last_seq", sa.BigInteger, nullable=False),
        sa.Column("mqtt_seq", sa.BigInteger, nullable=False),
        sa.Column("mqtt_lease_until", sa.BigInteger, nullable=True),
        sa.Column("mqtt_lease_by", sa.Text, nullable=True),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("environment", "application_id", name="pk_stream_cursors"),
    )
    op.create_table(
        "stream_mqtt_credentials",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("application_id", name="pk_stream_mqtt_credentials"),
    )


def downgrade() -> None:
    op.drop_table("stream_mqtt_credentials")
    op.drop_table("stream_cursors")
    op.drop_index("ix_stream_messages_created", table_name="stream_messages")
    op.drop_table("stream_messages")
