"""Vehicle commands: the commands table, and the commands applications register and
owners grant.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("applications") as batch:
        batch.add_column(sa.Column("commands", sa.Text, nullable=False, server_default="[]"))
    with op.batch_alter_table("authorizations") as batch:
        batch.add_column(sa.Column("commands", sa.Text, nullable=False, server_default="[]"))
    op.create_table(
        "vehicle_commands",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("authorization_id", sa.Text, nullable=True),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("brand", sa.Text, nullable=False),
        sa.Column("capability", sa.Text, nullable=False),
        sa.Column("command", sa.Text, nullable=False),
        sa.Column("arguments", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("failure_reason", sa.Text, nullable=True),
        sa.Column("failure_description", sa.Text, nullable=True),
        sa.Column("idempotency_key", sa.Text, nullable=True),
        sa.Column("request_hash", sa.Text, nullable=False),
        sa.Column("inflight", sa.Text, nullable=True),
        sa.Column("claimed_by", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.Column("sent_at", sa.BigInteger, nullable=True),
        sa.Column("finished_at", sa.BigInteger, nullable=True),
        sa.Column("deadline_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vehicle_commands"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_vehicle_commands_application_id_applications",
        ),
        sa.UniqueConstraint(
            "environment",
            "application_id",
            "idempotency_key",
            name="uq_vehicle_commands_idempotency",
        ),
        sa.UniqueConstraint("environment", "inflight", name="uq_vehicle_commands_inflight"),
    )
    op.create_index("ix_vehicle_commands_status", "vehicle_commands", ["status", "created_at"])
    op.create_index(
        "ix_vehicle_commands_vin", "vehicle_commands", ["environment", "vin", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_vehicle_commands_vin", table_name="vehicle_commands")
    op.drop_index("ix_vehicle_commands_status", table_name="vehicle_commands")
    op.drop_table("vehicle_commands")
    with op.batch_alter_table("authorizations") as batch:
        batch.drop_column("commands")
    with op.batch_alter_table("applications") as batch:
        batch.drop_column("commands")
