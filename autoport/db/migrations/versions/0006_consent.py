"""Consent sessions and the one-time codes vehicles display.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "consent_sessions",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("token_hash", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("redirect_uri", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=True),
        sa.Column("code_challenge", sa.Text, nullable=True),
        sa.Column("code_challenge_method", sa.Text, nullable=True),
        sa.Column("valid_from", sa.BigInteger, nullable=False),
        sa.Column("valid_until", sa.BigInteger, nullable=True),
        sa.Column("locale", sa.Text, nullable=False),
        sa.Column("brand", sa.Text, nullable=True),
        sa.Column("vin", sa.Text, nullable=True),
        sa.Column("method", sa.Text, nullable=True),
        sa.Column("verified_at", sa.BigInteger, nullable=True),
        sa.Column("subject", sa.Text, nullable=True),
        sa.Column("oem_nonce_hash", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("completed_at", sa.BigInteger, nullable=True),
        sa.Column("authorization_id", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_consent_sessions"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_consent_sessions_application_id_applications",
        ),
        sa.UniqueConstraint("token_hash", name="uq_consent_sessions_token_hash"),
    )
    op.create_index("ix_consent_sessions_expires", "consent_sessions", ["expires_at"])
    op.create_table(
        "consent_vehicle_codes",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("code_hash", sa.Text, nullable=False),
        sa.Column("display_code", sa.Text, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("consumed_at", sa.BigInteger, nullable=True),
        sa.Column("locked_until", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_consent_vehicle_codes"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["consent_sessions.id"],
            name="fk_consent_vehicle_codes_session_id_consent_sessions",
        ),
    )
    op.create_index(
        "ix_consent_vehicle_codes_vin",
        "consent_vehicle_codes",
        ["environment", "vin", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_consent_vehicle_codes_vin", table_name="consent_vehicle_codes")
    op.drop_table("consent_vehicle_codes")
    op.drop_index("ix_consent_sessions_expires", table_name="consent_sessions")
    op.drop_table("consent_sessions")
