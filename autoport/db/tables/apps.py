from sqlalchemy import BigInteger, Column, ForeignKey, Index, Table, Text, UniqueConstraint

from autoport.db import metadata

# Accounts own applications. Both belong to one environment.
accounts = Table(
    "accounts",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)

# An application. `id` is its serial (`app_id`: 24 upper-case hex characters), the id
# every outward message uses (webhook `application.id`, stream `application_id`, MQTT
# topic). JSON columns: redirect_uris [str], properties ["capability.property"],
# brands [canonical brand].
applications = Table(
    "applications",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("account_id", Text, ForeignKey("accounts.id"), nullable=False),
    Column("client_id", Text, nullable=False),
    Column("name", Text, nullable=False),
    # "confidential" (server-side, has a secret) or "public" (native/mobile, PKCE only).
    Column("client_type", Text, nullable=False),
    Column("redirect_uris", Text, nullable=False),
    Column("properties", Text, nullable=False),
    Column("brands", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("disabled_at", BigInteger, nullable=True),
    # A mobile application's own URI scheme (`com.example.app`), lower case, or None.
    # When set, the application's private-scheme redirect URIs must use it.
    Column("url_scheme", Text, nullable=True),
    # The vehicle commands it asks for, ["capability.command"] (autoport.commands).
    Column("commands", Text, nullable=False, server_default="[]"),
    # Who operates the application (the company the owner's data goes to) and its
    # privacy policy: what the consent page tells the owner before they decide.
    Column("company", Text, nullable=True),
    Column("privacy_url", Text, nullable=True),
    UniqueConstraint("client_id"),
    Index("ix_applications_account", "environment", "account_id"),
)

# The owner's authorization of one application for one vehicle (the consent grant).
# `status`: pending | approved | rejected | revoked. `properties` ["capability.property"]
# are the granted ones. Validity bounds are instants (µs); `valid_until` None = open.
authorizations = Table(
    "authorizations",
    metadata,
    Column("id", Text, primary_key=True),
    Column("environment", Text, nullable=False),
    Column("application_id", Text, ForeignKey("applications.id"), nullable=False),
    Column("vin", Text, nullable=False),
    Column("brand", Text, nullable=False),
    Column("properties", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("valid_from", BigInteger, nullable=False),
    Column("valid_until", BigInteger, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    # The granted vehicle commands, ["capability.command"] (their `set` scopes).
    Column("commands", Text, nullable=False, server_default="[]"),
    Index("ix_authorizations_vin", "environment", "vin", "status"),
    Index("ix_authorizations_application", "application_id", "vin"),
)
