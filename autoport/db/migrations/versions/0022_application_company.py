"""Applications name their operating company and privacy policy: the consent page shows
both to the owner before the decision (issue #38 item 10).

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("applications") as batch:
        batch.add_column(sa.Column("company", sa.Text, nullable=True))
        batch.add_column(sa.Column("privacy_url", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("applications") as batch:
        batch.drop_column("privacy_url")
        batch.drop_column("company")
