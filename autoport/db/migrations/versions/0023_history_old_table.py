"""The old row-per-point history table goes where nothing was ever stored.

A database that never stored a data point (a new installation: no vehicle, an empty
`vehicle_data_history`) has nothing to move and no process of an older version writing
it: its old table is dropped here. Anywhere else it stays until the history worker (or
`autoport history migrate`) has moved its rows into chunks, and the mover drops it then
(autoport.history.migration).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _exists() -> bool:
    return "vehicle_data_history" in sa.inspect(op.get_bind()).get_table_names()


def upgrade() -> None:
    if not _exists():
        return
    bind = op.get_bind()
    for table in ("vehicle_data_history", "vehicles"):
        if bind.execute(sa.text(f"SELECT 1 FROM {table} LIMIT 1")).first():  # noqa: S608
            return
    op.drop_index("ix_vehicle_data_history_received_at", table_name="vehicle_data_history")
    op.drop_table("vehicle_data_history")


def downgrade() -> None:
    # Its shape as 0004 made it, empty: the points stay in the chunks (0020's downgrade
    # drops those).
    if _exists():
        return
    op.create_table(
        "vehicle_data_history",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("capability", sa.Text, nullable=False),
        sa.Column("property", sa.Text, nullable=False),
        sa.Column("timestamp", sa.BigInteger, nullable=False),
        sa.Column("digest", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("received_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vehicle_data_history"),
        sa.UniqueConstraint(
            "environment",
            "vin",
            "capability",
            "property",
            "timestamp",
            "digest",
            name="uq_vehicle_data_history_environment",
        ),
    )
    op.create_index("ix_vehicle_data_history_received_at", "vehicle_data_history", ["received_at"])
