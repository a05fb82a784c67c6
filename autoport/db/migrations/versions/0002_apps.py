"""Accounts, applications, the owners' authorizations and fleet clearances.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_accounts"),
    )
    op.create_table(
        "applications",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("account_id", sa.Text, nullable=False),
        sa.Column("client_id", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("client_type", sa.Text, nullable=False),
        sa.Column("redirect_uris", sa.Text, nullable=False),
        sa.Column("properties", sa.Text, nullable=False),
        sa.Column("brands", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("disabled_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_applications"),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name="fk_applications_account_id_accounts"
        ),
        sa.UniqueConstraint("client_id", name="uq_applications_client_id"),
    )
    op.create_index("ix_applications_account", "applications", ["environment", "account_id"])
    op.create_table(
        "authorizations",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("brand", sa.Text, nullable=False),
        sa.Column("properties", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("valid_from", sa.BigInteger, nullable=False),
        sa.Column("valid_until", sa.BigInteger, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_authorizations"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_authorizations_application_id_applications",
        ),
    )
    op.create_index("ix_authorizations_vin", "authorizations", ["environment", "vin", "status"])
    op.create_index("ix_authorizations_application", "authorizations", ["application_id", "vin"])
    op.create_table(
        "fleet_vehicles",
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("brand", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("tags", sa.Text, nullable=False),
        sa.Column("changelog", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("inserted_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.Column("approved_at", sa.BigInteger, nullable=True),
        sa.Column("next_check_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("environment", "application_id", "vin", name="pk_fleet_vehicles"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_fleet_vehicles_application_id_applications",
        ),
    )
    op.create_index("ix_fleet_vehicles_vin", "fleet_vehicles", ["environment", "vin", "status"])
    op.create_index("ix_fleet_vehicles_due", "fleet_vehicles", ["next_check_at"])


def downgrade() -> None:
    op.drop_index("ix_fleet_vehicles_due", table_name="fleet_vehicles")
    op.drop_index("ix_fleet_vehicles_vin", table_name="fleet_vehicles")
    op.drop_table("fleet_vehicles")
    op.drop_index("ix_authorizations_application", table_name="authorizations")
    op.drop_index("ix_authorizations_vin", table_name="authorizations")
    op.drop_table("authorizations")
    op.drop_index("ix_applications_account", table_name="applications")
    op.drop_table("applications")
    op.drop_table("accounts")
