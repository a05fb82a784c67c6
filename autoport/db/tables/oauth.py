"""Credentials of applications and the authorization server's state (migration 0003).

Secrets, codes and tokens are stored only as HMAC hashes (autoport.kit.crypto.token_hash
with the deployment's token key); a stolen database cannot even confirm a guess.
"""

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Table, Text

from autoport.db import metadata

# Client secrets of confidential applications. Rotation adds a row and gives the old
# one an `expires_at`, so both work during the overlap.
client_secrets = Table(
    "client_secrets",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("application_id", Text, ForeignKey("applications.id"), nullable=False),
    Column("secret_hash", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=True),
    Index("ix_client_secrets_application", "application_id"),
)

# EC P-256 public keys for private_key_jwt client assertions. `id` is the key id, the
# assertion's `iss`; `public_jwk` is the JWK (JSON text) without private members.
client_keys = Table(
    "client_keys",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("application_id", Text, ForeignKey("applications.id"), nullable=False),
    Column("public_jwk", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("revoked_at", BigInteger, nullable=True),
    Index("ix_client_keys_application", "application_id"),
)

# Assertion `jti`s seen, per key, until the assertion could no longer be accepted anyway.
# The primary key makes a replay a failed insert, race-free on both backends.
assertion_jtis = Table(
    "assertion_jtis",
    metadata,
    Column("key_id", Text, primary_key=True),
    Column("jti", Text, primary_key=True),
    Column("expires_at", BigInteger, nullable=False),
    Index("ix_assertion_jtis_expires", "expires_at"),
)

# Authorization codes issued by the consent flow. `family_id` names the token family the
# code's redemption starts, so a second redemption can revoke what the first issued.
authorization_codes = Table(
    "authorization_codes",
    metadata,
    Column("code_hash", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("application_id", Text, ForeignKey("applications.id"), nullable=False),
    Column("authorization_id", Text, ForeignKey("authorizations.id"), nullable=False),
    Column("family_id", Text, nullable=False),
    Column("redirect_uri", Text, nullable=False),
    Column("code_challenge", Text, nullable=True),
    Column("code_challenge_method", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("consumed_at", BigInteger, nullable=True),
    Index("ix_authorization_codes_expires", "expires_at"),
)

# Access and refresh tokens (`kind`). Vehicle tokens carry `authorization_id` and a
# `family_id` shared by every token descending from one code; client_credentials tokens
# have neither. `scopes` is the space-separated scope string of the grant.
# A rotated refresh token keeps `consumed_at` and `successor`: its replacement pair,
# encrypted under a key derived from the old refresh token itself, so that a retry within
# the grace window gets the same pair back and nobody without the old token can read it.
oauth_tokens = Table(
    "oauth_tokens",
    metadata,
    Column("token_hash", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("application_id", Text, ForeignKey("applications.id"), nullable=False),
    Column("authorization_id", Text, ForeignKey("authorizations.id"), nullable=True),
    Column("family_id", Text, nullable=True),
    Column("scopes", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("consumed_at", BigInteger, nullable=True),
    Column("revoked_at", BigInteger, nullable=True),
    Column("successor", Text, nullable=True),
    Index("ix_oauth_tokens_family", "family_id"),
    Index("ix_oauth_tokens_authorization", "authorization_id"),
    Index("ix_oauth_tokens_expires", "expires_at"),
)
