from sqlalchemy import BigInteger, Column, Index, Integer, Table, Text

from autoport.db import metadata

# The transactional outbox: rows are written in the same transaction as the change that
# causes them, one row per consumer (streaming, webhooks), and claimed by workers.
outbox = Table(
    "outbox",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("environment", Text, nullable=False),
    Column("consumer", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("vin", Text, nullable=True),
    Column("application_id", Text, nullable=True),
    Column("payload", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("available_at", BigInteger, nullable=False),
    Column("claimed_until", BigInteger, nullable=True),
    Column("claimed_by", Text, nullable=True),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Index("ix_outbox_consumer_available", "consumer", "available_at", "id"),
)
