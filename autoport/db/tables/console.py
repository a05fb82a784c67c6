from sqlalchemy import BigInteger, Column, ForeignKey, Index, Table, Text, UniqueConstraint

from autoport.db import metadata

# The developer console's people: each user belongs to one account (of one environment)
# with one role. Only an argon2id hash of the password is kept.
console_users = Table(
    "console_users",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("account_id", Text, ForeignKey("accounts.id"), nullable=False),
    # Stored in lower case: the address is the sign-in name.
    Column("email", Text, nullable=False),
    Column("password_hash", Text, nullable=False),
    # owner | developer | viewer
    Column("role", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("disabled_at", BigInteger, nullable=True),
    UniqueConstraint("environment", "email", name="uq_console_users_email"),
    Index("ix_console_users_account", "account_id"),
)

# A signed-in browser: the cookie holds a random token, its keyed hash finds the row.
# `user_id` NULL is the operator (signed in with the admin token).
console_sessions = Table(
    "console_sessions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("token_hash", Text, nullable=False),
    Column("user_id", Text, ForeignKey("console_users.id"), nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("ended_at", BigInteger, nullable=True),
    UniqueConstraint("token_hash", name="uq_console_sessions_token"),
    Index("ix_console_sessions_user", "user_id"),
    Index("ix_console_sessions_expires", "expires_at"),
)

# What the page a change redirects to must show once (a new secret, a link, an upload's
# results), for one session: sealed, taken (deleted) by that page. One per session.
console_flashes = Table(
    "console_flashes",
    metadata,
    Column("session_id", Text, ForeignKey("console_sessions.id"), primary_key=True),
    Column("page", Text, nullable=False),
    Column("sealed", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)

# Single-use links: an invitation to an account (kind `invite`, creates the user) or a
# password reset (kind `reset`, for `user_id`). Only the link token's hash is kept.
console_invitations = Table(
    "console_invitations",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("account_id", Text, ForeignKey("accounts.id"), nullable=False),
    Column("kind", Text, nullable=False),
    Column("email", Text, nullable=False),
    Column("role", Text, nullable=False),
    Column("user_id", Text, ForeignKey("console_users.id"), nullable=True),
    Column("token_hash", Text, nullable=False),
    # Who made it: a user id, or `operator`.
    Column("created_by", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("consumed_at", BigInteger, nullable=True),
    UniqueConstraint("token_hash", name="uq_console_invitations_token"),
    Index("ix_console_invitations_account", "account_id", "created_at"),
)

# Every sign-in (and failed one) and every change made through the console. Append-only:
# the console has no route that changes or deletes a row.
console_audit = Table(
    "console_audit",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    # NULL: not tied to an account (the operator's sign-in, a failed one of an unknown
    # address).
    Column("account_id", Text, nullable=True),
    # A user id, `operator`, or NULL (nobody signed in).
    Column("actor", Text, nullable=True),
    Column("actor_label", Text, nullable=True),
    Column("action", Text, nullable=False),
    Column("target", Text, nullable=True),
    Column("detail", Text, nullable=False),
    Column("address", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_console_audit_account", "environment", "account_id", "created_at"),
    Index("ix_console_audit_created", "environment", "created_at"),
)
