from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)

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

# A one-time code the vehicle displays (vehicle_code method), for one session and the VIN
# it was shown for. `code_hash` is what the owner's input is checked against;
# `display_code` is what the vehicle's screen shows (the sandbox emulator reads it),
# cleared once the code is used or retired.
consent_vehicle_codes = Table(
    "consent_vehicle_codes",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("vin", Text, nullable=False),
    # A consent session's or an owner-portal session's (owner_sessions) id: no foreign
    # key since migration 0016; each purge deletes its own sessions' codes.
    Column("session_id", Text, nullable=False),
    Column("code_hash", Text, nullable=False),
    Column("display_code", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("consumed_at", BigInteger, nullable=True),
    Index("ix_consent_vehicle_codes_vin", "environment", "vin", "created_at"),
)

# What the vehicle-code check counts across sessions, processes and restarts: code
# tries and codes shown, per VIN and per client address (`kind` says which; `subject` is
# the VIN or a keyed hash of the address). `hits` in a fixed window that ends at
# `window_ends`; `blocked_until` is a running lockout (too many wrong codes) or the end
# of a window whose codes are used up.
consent_throttles = Table(
    "consent_throttles",
    metadata,
    Column("environment", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("hits", Integer, nullable=False),
    Column("window_ends", BigInteger, nullable=False),
    Column("blocked_until", BigInteger, nullable=True),
    PrimaryKeyConstraint("environment", "kind", "subject"),
)
