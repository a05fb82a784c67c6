"""The console answers every change with a redirect to a page (POST -> redirect -> GET):
what that page must show once (a new secret, a link, an upload's results) waits for it,
sealed, one per session (issue #36).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "console_flashes",
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("page", sa.Text, nullable=False),
        sa.Column("sealed", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("session_id", name="pk_console_flashes"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["console_sessions.id"],
            name="fk_console_flashes_session_id_console_sessions",
        ),
    )


def downgrade() -> None:
    op.drop_table("console_flashes")
