"""Streaming: leases of work one process does at a time (the MQTT publisher's broker
connection), and the open SSE streams of every process (the per-application limit).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "stream_leases",
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("holder", sa.Text, nullable=False),
        sa.Column("lease_until", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_stream_leases"),
    )
    op.create_table(
        "stream_connections",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("opened_at", sa.BigInteger, nullable=False),
        sa.Column("lease_until", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_stream_connections"),
    )
    op.create_index(
        "ix_stream_connections_application", "stream_connections", ["environment", "application_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_stream_connections_application", table_name="stream_connections")
    op.drop_table("stream_connections")
    op.drop_table("stream_leases")
