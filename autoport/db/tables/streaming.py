from sqlalchemy import BigInteger, Column, Index, Table, Text

from autoport.db import metadata

# The per-application message log: every schema-v2 message an application may receive,
# numbered by a per-application sequence (the SSE event id; the MQTT publish cursor
# points into it). Filled by the streaming worker in the same transaction that completes
# the outbox rows it came from; pruned after the retention period once published.
stream_messages = Table(
    "stream_messages",
    metadata,
    Column("environment", Text, primary_key=True),
    Column("application_id", Text, primary_key=True),
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("message_id", Text, nullable=False),
    Column("vin", Text, nullable=False),
    # The message exactly as sent (orjson bytes as text).
    Column("message", Text, nullable=False),
    # When the data entered autoport (the outbox row's created_at): publish lag metric.
    Column("ingested_at", BigInteger, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_stream_messages_created", "created_at"),
)

# One row per application that ever had a message: the last sequence number handed out
# (its row lock serializes writers, so sequence order is commit order) and the MQTT
# publisher's cursor and lease (advanced only after the broker's PUBACK).
stream_cursors = Table(
    "stream_cursors",
    metadata,
    Column("environment", Text, primary_key=True),
    Column("application_id", Text, primary_key=True),
    Column("last_seq", BigInteger, nullable=False),
    Column("mqtt_seq", BigInteger, nullable=False),
    Column("mqtt_lease_until", BigInteger, nullable=True),
    Column("mqtt_lease_by", Text, nullable=True),
    Column("updated_at", BigInteger, nullable=False),
)

# MQTT broker credentials of an application (its broker username is the application id).
# `password_hash` is the Mosquitto password file form (`$7$` PBKDF2-SHA512): the password
# itself is shown once and never stored.
stream_mqtt_credentials = Table(
    "stream_mqtt_credentials",
    metadata,
    Column("environment", Text, nullable=False),
    Column("application_id", Text, primary_key=True),
    Column("password_hash", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)

# Leases of work only one process may do at a time: `mqtt-publisher`, the broker
# connection (the broker makes a client's id its username, so two publishers connected
# as the same user would disconnect each other). Taken with one conditional upsert,
# renewed while held, taken over once `lease_until` has passed.
stream_leases = Table(
    "stream_leases",
    metadata,
    Column("name", Text, primary_key=True),
    Column("holder", Text, nullable=False),
    Column("lease_until", BigInteger, nullable=False),
)

# Open SSE streams, counted per application across every process for the limit
# `stream_max_per_application`. A stream renews its row's lease while it runs and
# deletes it when it ends; the rows of a process that died expire with their lease.
stream_connections = Table(
    "stream_connections",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("application_id", Text, nullable=False),
    Column("opened_at", BigInteger, nullable=False),
    Column("lease_until", BigInteger, nullable=False),
    Index("ix_stream_connections_application", "environment", "application_id"),
)
