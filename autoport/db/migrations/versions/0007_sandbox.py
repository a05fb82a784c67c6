"""Sandbox vehicles: simulator state and emulator settings.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sandbox_vehicles",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=True),
        sa.Column("powertrain", sa.Text, nullable=False),
        sa.Column("profile", sa.Text, nullable=False),
        sa.Column("properties", sa.Text, nullable=False),
        sa.Column("scenario", sa.Text, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("time_scale", sa.Float, nullable=False),
        sa.Column("step_seconds", sa.Float, nullable=False),
        sa.Column("running", sa.Boolean, nullable=False),
        sa.Column("started_at", sa.BigInteger, nullable=False),
        sa.Column("step", sa.BigInteger, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("overrides", sa.Text, nullable=False),
        sa.Column("failures", sa.Text, nullable=False),
        sa.Column("offline", sa.Boolean, nullable=False),
        sa.Column("latency_seconds", sa.Float, nullable=False),
        sa.Column("eligible", sa.Boolean, nullable=False),
        sa.Column("connectivity_status", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("environment", "vin", name="pk_sandbox_vehicles"),
    )
    op.create_index("ix_sandbox_vehicles_running", "sandbox_vehicles", ["running", "environment"])


def downgrade() -> None:
    op.drop_index("ix_sandbox_vehicles_running", table_name="sandbox_vehicles")
    op.drop_table("sandbox_vehicles")
