"""The owner portal: owner sessions, reads per grant and day, and vehicle codes that may
belong to an owner-portal session as well as to a consent session.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CODES_FK = "fk_consent_vehicle_codes_session_id_consent_sessions"


def upgrade() -> None:
    op.create_table(
        "owner_sessions",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("token_hash", sa.Text, nullable=False),
        sa.Column("locale", sa.Text, nullable=False),
        sa.Column("brand", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("method", sa.Text, nullable=False),
        sa.Column("subject", sa.Text, nullable=True),
        sa.Column("verified_at", sa.BigInteger, nullable=True),
        sa.Column("oem_nonce_hash", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_owner_sessions"),
    )
    op.create_index("ix_owner_sessions_token", "owner_sessions", ["token_hash"], unique=True)
    op.create_index("ix_owner_sessions_expires", "owner_sessions", ["expires_at"])
    op.create_table(
        "grant_reads",
        sa.Column("authorization_id", sa.Text, nullable=False),
        sa.Column("day", sa.BigInteger, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("reads", sa.BigInteger, nullable=False),
        sa.Column("last_read_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("authorization_id", "day", name="pk_grant_reads"),
    )
    # An owner-portal session's vehicle code names an owner_sessions row.
    with op.batch_alter_table("consent_vehicle_codes") as batch:
        batch.drop_constraint(_CODES_FK, type_="foreignkey")


def downgrade() -> None:
    op.execute(
        "DELETE FROM consent_vehicle_codes WHERE session_id NOT IN (SELECT id FROM consent_sessions)"
    )
    with op.batch_alter_table("consent_vehicle_codes") as batch:
        batch.create_foreign_key(_CODES_FK, "consent_sessions", ["session_id"], ["id"])
    op.drop_table("grant_reads")
    op.drop_index("ix_owner_sessions_expires", table_name="owner_sessions")
    op.drop_index("ix_owner_sessions_token", table_name="owner_sessions")
    op.drop_table("owner_sessions")
