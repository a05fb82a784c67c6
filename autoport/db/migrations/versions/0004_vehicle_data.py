"""Vehicle data: latest-value store, history, ingest providers.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "vehicles",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("brand", sa.Text, nullable=False),
        sa.Column("document", sa.Text, nullable=False),
        sa.Column("stamps", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("environment", "vin", name="pk_vehicles"),
    )
    op.create_table(
        "vehicle_data_history",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), autoincrement=True),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("capability", sa.Text, nullable=False),
        sa.Column("property", sa.Text, nullable=False),
        sa.Column("timestamp", sa.BigInteger, nullable=False),
        sa.Column("digest", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("received_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vehicle_data_history"),
        sa.UniqueConstraint(
            "environment",
            "vin",
            "capability",
            "property",
            "timestamp",
            "digest",
            name="uq_vehicle_data_history_environment",
        ),
    )
    op.create_index("ix_vehicle_data_history_received_at", "vehicle_data_history", ["received_at"])
    op.create_table(
        "ingest_providers",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("secret_hash", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("revoked_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_ingest_providers"),
        sa.UniqueConstraint("secret_hash", name="uq_ingest_providers_secret_hash"),
    )


def downgrade() -> None:
    op.drop_table("ingest_providers")
    op.drop_index("ix_vehicle_data_history_received_at", table_name="vehicle_data_history")
    op.drop_table("vehicle_data_history")
    op.drop_table("vehicles")
