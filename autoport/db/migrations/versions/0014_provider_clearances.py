"""Data providers decide the fleet clearances of their brands: the brands a provider
speaks for, and its (dangerous, off by default) standing approval of every request.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing providers speak for no brand (they decide nothing until given one) and
    # approve nothing by themselves.
    with op.batch_alter_table("ingest_providers") as batch:
        batch.add_column(sa.Column("brands", sa.Text, nullable=False, server_default="[]"))
        batch.add_column(
            sa.Column(
                "auto_approve_clearances", sa.Boolean, nullable=False, server_default=sa.false()
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("ingest_providers") as batch:
        batch.drop_column("auto_approve_clearances")
        batch.drop_column("brands")
