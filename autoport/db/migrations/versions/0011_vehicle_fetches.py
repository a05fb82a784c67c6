"""Vehicle data: when a pull last asked the data source (the freshness window).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "vehicle_fetches",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("properties", sa.Text, nullable=False),
        sa.Column("fetched_at", sa.BigInteger, nullable=False),
        sa.Column("lease_until", sa.BigInteger, nullable=False),
        sa.Column("status", sa.Integer, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("environment", "vin", "properties", name="pk_vehicle_fetches"),
    )


def downgrade() -> None:
    op.drop_table("vehicle_fetches")
