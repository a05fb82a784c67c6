"""The developer console: users, sessions, single-use invitation and reset links, and
the audit log.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "console_users",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("account_id", sa.Text, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("email", sa.Text, nullable=False),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("disabled_at", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("environment", "email", name="uq_console_users_email"),
    )
    op.create_index("ix_console_users_account", "console_users", ["account_id"])
    op.create_table(
        "console_sessions",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("token_hash", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, sa.ForeignKey("console_users.id"), nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("ended_at", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("token_hash", name="uq_console_sessions_token"),
    )
    op.create_index("ix_console_sessions_user", "console_sessions", ["user_id"])
    op.create_index("ix_console_sessions_expires", "console_sessions", ["expires_at"])
    op.create_table(
        "console_invitations",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("account_id", sa.Text, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("email", sa.Text, nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, sa.ForeignKey("console_users.id"), nullable=True),
        sa.Column("token_hash", sa.Text, nullable=False),
        sa.Column("created_by", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("consumed_at", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("token_hash", name="uq_console_invitations_token"),
    )
    op.create_index(
        "ix_console_invitations_account", "console_invitations", ["account_id", "created_at"]
    )
    op.create_table(
        "console_audit",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("account_id", sa.Text, nullable=True),
        sa.Column("actor", sa.Text, nullable=True),
        sa.Column("actor_label", sa.Text, nullable=True),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=True),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("address", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_index(
        "ix_console_audit_account", "console_audit", ["environment", "account_id", "created_at"]
    )
    op.create_index("ix_console_audit_created", "console_audit", ["environment", "created_at"])


def downgrade() -> None:
    op.drop_table("console_audit")
    op.drop_table("console_invitations")
    op.drop_table("console_sessions")
    op.drop_table("console_users")
