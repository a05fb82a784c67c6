"""The owner portal (migration 0016): owners' short sessions, and how often each grant
was read per day."""

from sqlalchemy import BigInteger, Column, Index, PrimaryKeyConstraint, Table, Text

from autoport.db import metadata

# One owner's sign-in. The browser holds a random token in a cookie; its hash finds the
# row, and it is replaced (session rotation) the moment ownership is proven. `vin` is the
# vehicle signed in with; `subject` is set once ownership is proven: the vehicle's subject
# (instant, vehicle_code) or the carmaker account's (oem_login: every vehicle of it).
owner_sessions = Table(
    "owner_sessions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("token_hash", Text, nullable=False),
    Column("locale", Text, nullable=False),
    Column("brand", Text, nullable=False),
    Column("vin", Text, nullable=False),
    Column("method", Text, nullable=False),
    Column("subject", Text, nullable=True),
    Column("verified_at", BigInteger, nullable=True),
    # oem_login: hash of the nonce the carmaker's login must send back (single use).
    Column("oem_nonce_hash", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Index("ix_owner_sessions_token", "token_hash", unique=True),
    Index("ix_owner_sessions_expires", "expires_at"),
)

# Reads of vehicle data per grant and UTC day (`day`: days since the epoch), counted in
# memory by each process and added here off the request path (autoport.owner.reads).
grant_reads = Table(
    "grant_reads",
    metadata,
    Column("authorization_id", Text, nullable=False),
    Column("day", BigInteger, nullable=False),
    Column("environment", Text, nullable=False),
    Column("reads", BigInteger, nullable=False),
    Column("last_read_at", BigInteger, nullable=False),
    PrimaryKeyConstraint("authorization_id", "day"),
)
