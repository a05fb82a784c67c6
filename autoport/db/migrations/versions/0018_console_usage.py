"""Console: requests per application and day (usage_daily), and the account owning a
sandbox vehicle made in the console.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "usage_daily",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("day", sa.Text, nullable=False),
        sa.Column("requests", sa.BigInteger, nullable=False),
        sa.Column("rate_limited", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("environment", "application_id", "day", name="pk_usage_daily"),
    )
    # Vehicles made before: the operator's (no account).
    with op.batch_alter_table("sandbox_vehicles") as batch:
        batch.add_column(sa.Column("account_id", sa.Text, nullable=True))
        batch.create_index("ix_sandbox_vehicles_account", ["environment", "account_id"])


def downgrade() -> None:
    with op.batch_alter_table("sandbox_vehicles") as batch:
        batch.drop_index("ix_sandbox_vehicles_account")
        batch.drop_column("account_id")
    op.drop_table("usage_daily")
