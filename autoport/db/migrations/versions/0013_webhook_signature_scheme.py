"""webhooks.signature_scheme: default (X-Svc-Signature headers) or standard (Standard
Webhooks), per webhook.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing webhooks keep the headers their receivers already check.
    with op.batch_alter_table("webhooks") as batch:
        batch.add_column(
            sa.Column("signature_scheme", sa.Text, nullable=False, server_default="default")
        )


def downgrade() -> None:
    with op.batch_alter_table("webhooks") as batch:
        batch.drop_column("signature_scheme")
