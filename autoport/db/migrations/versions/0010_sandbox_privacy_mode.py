"""Sandbox vehicles: the emulator's privacy mode (the owner switched data sharing off).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing vehicles share their data: off.
    with op.batch_alter_table("sandbox_vehicles") as batch:
        batch.add_column(
            sa.Column("privacy_mode", sa.Boolean, nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("sandbox_vehicles") as batch:
        batch.drop_column("privacy_mode")
