"""The data-point history as series and compressed chunks (autoport.history).

A series is one property of one vehicle, named once; its id is a 63-bit hash of the
names (autoport.history.store.series_id), so writers need no lookup. New points land in
`history_hot`, one row each, whose unique key makes a re-delivered point a no-op; the
history worker seals them into `history_chunks` (one row per series and time range,
column-wise and compressed: autoport.history.codec) and deletes them from hot in the
same transaction. On PostgreSQL the chunks are partitioned by day of their newest
arrival (`received_max`), so retention drops whole partitions.
"""

from sqlalchemy import (
    BigInteger,
    Column,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)

from autoport.db import metadata

history_series = Table(
    "history_series",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("environment", Text, nullable=False),
    Column("vin", Text, nullable=False),
    Column("capability", Text, nullable=False),
    Column("property", Text, nullable=False),
    # A sealer's claim of the series until then (µs; 0: free), so that several workers
    # never seal one series at once.
    Column("sealing_until", BigInteger, nullable=False, server_default="0"),
    UniqueConstraint("environment", "vin", "capability", "property"),
)

# Recent points, one row each. `id` orders points stored at the same timestamp (and is
# the live charts' position); it starts above the last id of the old row-per-point
# table, so a position handed out before the upgrade stays valid. `digest` is the
# value's blake2b-64 as a signed integer.
history_hot = Table(
    "history_hot",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("series_id", BigInteger, nullable=False),
    Column("timestamp", BigInteger, nullable=False),
    Column("digest", BigInteger, nullable=False),
    Column("received_at", BigInteger, nullable=False),
    Column("value", Text, nullable=False),
    UniqueConstraint("series_id", "timestamp", "digest"),
    Index("ix_history_hot_received_at", "received_at"),
    sqlite_autoincrement=True,
)

# Sealed points: one row per series and time range [first_ts, last_ts]; the ranges of a
# series never overlap, and the points of one timestamp are always in one chunk. `id`
# is random (63 bits): the decoded-chunk cache's key, new for every rewrite.
history_chunks = Table(
    "history_chunks",
    metadata,
    Column("series_id", BigInteger, nullable=False),
    Column("last_ts", BigInteger, nullable=False),
    Column("received_max", BigInteger, nullable=False),
    Column("first_ts", BigInteger, nullable=False),
    Column("count", Integer, nullable=False),
    Column("id", BigInteger, nullable=False),
    Column("data", LargeBinary, nullable=False),
    PrimaryKeyConstraint("series_id", "last_ts", "received_max"),
    Index("ix_history_chunks_received_max", "received_max"),
    postgresql_partition_by="RANGE (received_max)",
)

# Small facts of the history's own: the migration of the old table (its progress).
history_state = Table(
    "history_state",
    metadata,
    Column("name", Text, primary_key=True),
    Column("value", Text, nullable=False),
)
