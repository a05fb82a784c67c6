from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Integer,
    Table,
    Text,
    UniqueConstraint,
    false,
)

from autoport.db import metadata

# The latest known data of one vehicle, kept as the document the pull endpoint serves:
# `document` is {capability: {property: wrapper or [wrapper, ...]}} (orjson TEXT), so a
# pull is one primary-key lookup. `stamps` holds, per "capability.property", the instant
# (µs) that orders its value (the wrapper's timestamp; for arrays the newest of theirs),
# which decides whether an incoming data point is newer than the stored one.
vehicles = Table(
    "vehicles",
    metadata,
    Column("environment", Text, primary_key=True),
    Column("vin", Text, primary_key=True),
    Column("brand", Text, nullable=False),
    Column("document", Text, nullable=False),
    Column("stamps", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)

# The history of data points is autoport.history's (db/tables/history.py). Its table
# before 0020, `vehicle_data_history`, is in no MetaData: where it still holds rows it
# is read and emptied by autoport.history.migration, which then drops it.

# Data providers allowed to POST /v1/ingest (created with `autoport providers create`).
# Only an HMAC of the secret is stored (autoport.kit.crypto.token_hash). `brands`
# [canonical brand] (migration 0014): the push-fed brands it speaks for: it pushes data
# only for them and decides their fleet clearances; `auto_approve_clearances` approves
# every request of those brands unseen (dangerous; single-tenant deployments only).
ingest_providers = Table(
    "ingest_providers",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("secret_hash", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("revoked_at", BigInteger, nullable=True),
    Column("brands", Text, nullable=False, server_default="[]"),
    Column("auto_approve_clearances", Boolean, nullable=False, server_default=false()),
    UniqueConstraint("secret_hash"),
)

# When a pull last asked a brand's data source about a vehicle (for one set of
# properties, by its digest) and what the source answered, so that every process serves
# pulls inside the freshness window from the store instead of asking again
# (autoport.vehicle_data.freshness). `lease_until` is held by the one process fetching
# now; `fetched_at` 0 means never fetched.
vehicle_fetches = Table(
    "vehicle_fetches",
    metadata,
    Column("environment", Text, primary_key=True),
    Column("vin", Text, primary_key=True),
    Column("properties", Text, primary_key=True),
    Column("fetched_at", BigInteger, nullable=False),
    Column("lease_until", BigInteger, nullable=False),
    Column("status", Integer, nullable=False),
    Column("detail", Text, nullable=False),
    Column("title", Text, nullable=True),
)
