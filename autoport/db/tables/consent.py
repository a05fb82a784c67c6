from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, Table, Text, UniqueConstraint

from autoport.db import metadata

# One owner's walk through the consent pages, from the entry point to the decision. The
# browser holds only a random token in a cookie; its hash finds the row. Everything the
# application sent at the entry point is kept here, so no later URL carries it.
consent_sessions = Table(
    "consent_sessions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("token_hash", Text, nullable=False),
    Column("application_id", Text, ForeignKey("applications.id"), nullable=False),
    Column("redirect_uri", Text, nullable=False),
    Column("state", Text, nullable=True),
    Column("code_challenge", Text, nullable=True),
    Column("code_challenge_method", Text, nullable=True),
    Column("valid_from", BigInteger, nullable=False),
    Column("valid_until", BigInteger, nullable=True),
    Column("locale", Text, nullable=False),
    Column("brand", Text, nullable=True),
    Column("vin", Text, nullable=True),
    # The ownership verification method chosen for the brand, once the VIN is known.
    Column("method", Text, nullable=True),
    Column("verified_at", BigInteger, nullable=True),
    # Stable id of the owner (or of the vehicle when the method knows no owner account).
    Column("subject", Text, nullable=True),
    # oem_login: hash of the nonce the carmaker's login must send back (single use).
    Column("oem_nonce_hash", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("completed_at", BigInteger, nullable=True),
    Column("authorization_id", Text, nullable=True),
    UniqueConstraint("token_hash"),
    Index("ix_consent_sessions_expires", "expires_at"),
)

# A one-time code the vehicle displays (vehicle_code method). `code_hash` is what the
# owner's input is checked against; `display_code` is what the vehicle's screen shows
# (the sandbox emulator reads it), cleared once the code is used or burnt.
consent_vehicle_codes = Table(
    "consent_vehicle_codes",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("vin", Text, nullable=False),
    Column("session_id", Text, ForeignKey("consent_sessions.id"), nullable=False),
    Column("code_hash", Text, nullable=False),
    Column("display_code", Text, nullable=True),
    Column("attempts", Integer, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("consumed_at", BigInteger, nullable=True),
    # Set when the attempts ran out: no new code for this VIN before then.
    Column("locked_until", BigInteger, nullable=True),
    Index("ix_consent_vehicle_codes_vin", "environment", "vin", "created_at"),
)
