"""History as series and compressed chunks (autoport.history, issue #34).

The old row-per-point table stays until the history worker has moved its rows into
chunks (online, in batches: docs/operations.md); readers read both meanwhile.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    op.create_table(
        "history_series",
        sa.Column("id", sa.BigInteger, autoincrement=False, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("vin", sa.Text, nullable=False),
        sa.Column("capability", sa.Text, nullable=False),
        sa.Column("property", sa.Text, nullable=False),
        sa.Column("sealing_until", sa.BigInteger, nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("id", name="pk_history_series"),
        sa.UniqueConstraint(
            "environment", "vin", "capability", "property", name="uq_history_series_environment"
        ),
    )
    op.create_table(
        "history_hot",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("series_id", sa.BigInteger, nullable=False),
        sa.Column("timestamp", sa.BigInteger, nullable=False),
        sa.Column("digest", sa.BigInteger, nullable=False),
        sa.Column("received_at", sa.BigInteger, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_history_hot"),
        sa.UniqueConstraint("series_id", "timestamp", "digest", name="uq_history_hot_series_id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_history_hot_received_at", "history_hot", ["received_at"])
    op.create_table(
        "history_chunks",
        sa.Column("series_id", sa.BigInteger, nullable=False),
        sa.Column("last_ts", sa.BigInteger, nullable=False),
        sa.Column("received_max", sa.BigInteger, nullable=False),
        sa.Column("first_ts", sa.BigInteger, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("id", sa.BigInteger, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.PrimaryKeyConstraint("series_id", "last_ts", "received_max", name="pk_history_chunks"),
        postgresql_partition_by="RANGE (received_max)",
    )
    op.create_index("ix_history_chunks_received_max", "history_chunks", ["received_max"])
    op.create_table(
        "history_state",
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_history_state"),
    )
    # Hot ids continue the old table's, so the console's live positions stay valid.
    if postgres:
        op.execute(
            "SELECT setval(pg_get_serial_sequence('history_hot', 'id'), "
            "(SELECT coalesce(max(id), 0) + 1 FROM vehicle_data_history), false)"
        )
        # Compressed already: PostgreSQL's own compression would only spend time.
        op.execute("ALTER TABLE history_chunks ALTER COLUMN data SET STORAGE EXTERNAL")
    else:
        op.execute(
            "INSERT INTO sqlite_sequence (name, seq) "
            "SELECT 'history_hot', coalesce(max(id), 0) FROM vehicle_data_history"
        )


def downgrade() -> None:
    op.drop_table("history_state")
    op.drop_index("ix_history_chunks_received_max", table_name="history_chunks")
    op.drop_table("history_chunks")
    op.drop_index("ix_history_hot_received_at", table_name="history_hot")
    op.drop_table("history_hot")
    op.drop_table("history_series")
