"""A vehicle command's Idempotency-Key names one request per application and vehicle:
the unique key of (environment, application, key) becomes (environment, application,
VIN, key). Keys stored before keep naming their commands.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | Sequence[str] | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("vehicle_commands") as batch:
        batch.drop_constraint("uq_vehicle_commands_idempotency", type_="unique")
        batch.create_unique_constraint(
            "uq_vehicle_commands_idempotency",
            ["environment", "application_id", "vin", "idempotency_key"],
        )


def downgrade() -> None:
    # Two vehicles' commands under one key cannot both stay: the later ones forget it.
    op.execute(
        "UPDATE vehicle_commands SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL "
        "AND id NOT IN (SELECT MIN(id) FROM vehicle_commands WHERE idempotency_key IS NOT NULL "
        "GROUP BY environment, application_id, idempotency_key)"
    )
    with op.batch_alter_table("vehicle_commands") as batch:
        batch.drop_constraint("uq_vehicle_commands_idempotency", type_="unique")
        batch.create_unique_constraint(
            "uq_vehicle_commands_idempotency", ["environment", "application_id", "idempotency_key"]
        )
