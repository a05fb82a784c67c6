"""Vehicle-code tries and codes shown, counted per VIN and per client address across
sessions (consent_throttles); the per-code attempt count and lockout columns go.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "consent_throttles",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("hits", sa.Integer, nullable=False),
        sa.Column("window_ends", sa.BigInteger, nullable=False),
        sa.Column("blocked_until", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("environment", "kind", "subject", name="pk_consent_throttles"),
    )
    # Lockouts of VINs still recorded on their codes carry over (the purge drops the ones
    # that already ended).
    op.execute(
        "INSERT INTO consent_throttles (environment, kind, subject, hits, window_ends, "
        "blocked_until) SELECT environment, 'vin_tries', vin, 0, MAX(locked_until), "
        "MAX(locked_until) FROM consent_vehicle_codes WHERE locked_until IS NOT NULL "
        "GROUP BY environment, vin"
    )
    with op.batch_alter_table("consent_vehicle_codes") as batch:
        batch.drop_column("attempts")
        batch.drop_column("locked_until")


def downgrade() -> None:
    with op.batch_alter_table("consent_vehicle_codes") as batch:
        batch.add_column(
            sa.Column("attempts", sa.Integer, nullable=False, server_default=sa.text("0"))
        )
        batch.add_column(sa.Column("locked_until", sa.BigInteger, nullable=True))
    op.drop_table("consent_throttles")
