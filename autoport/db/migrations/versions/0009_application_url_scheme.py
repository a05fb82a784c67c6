"""applications.url_scheme: a mobile application's custom URI scheme (nullable).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A nullable column without a default: an ALTER TABLE ADD COLUMN on both dialects.
    op.add_column("applications", sa.Column("url_scheme", sa.Text, nullable=True))


def downgrade() -> None:
    # Batch mode: SQLite rebuilds the table where it cannot drop a column in place.
    with op.batch_alter_table("applications") as batch:
        batch.drop_column("url_scheme")
