from sqlalchemy import BigInteger, Column, Table, Text

from autoport.db import metadata

# Requests per application and UTC day, for the console's usage page. Each process counts
# in memory (autoport.kit.usage) and adds its counts here every few seconds with one
# upsert per (application, day): never a write per request. `day` is the ISO date
# ("2026-11-24"); `requests` counts the bearer-authenticated requests of the application,
# `rate_limited` those answered 429 by its vehicle data rate limit.
usage_daily = Table(
    "usage_daily",
    metadata,
    Column("environment", Text, primary_key=True),
    Column("application_id", Text, primary_key=True),
    Column("day", Text, primary_key=True),
    Column("requests", BigInteger, nullable=False),
    Column("rate_limited", BigInteger, nullable=False),
)
