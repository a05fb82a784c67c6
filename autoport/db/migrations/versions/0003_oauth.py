"""Client secrets and keys, assertion jtis, authorization codes and tokens.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "client_secrets",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("secret_hash", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_client_secrets"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_client_secrets_application_id_applications",
        ),
    )
    op.create_index("ix_client_secrets_application", "client_secrets", ["application_id"])
    op.create_table(
        "client_keys",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("public_jwk", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("revoked_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_client_keys"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_client_keys_application_id_applications",
        ),
    )
    op.create_index("ix_client_keys_application", "client_keys", ["application_id"])
    op.create_table(
        "assertion_jtis",
        sa.Column("key_id", sa.Text, nullable=False),
        sa.Column("jti", sa.Text, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("key_id", "jti", name="pk_assertion_jtis"),
    )
    op.create_index("ix_assertion_jtis_expires", "assertion_jtis", ["expires_at"])
    op.create_table(
        "authorization_codes",
        sa.Column("code_hash", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("authorization_id", sa.Text, nullable=False),
        sa.Column("family_id", sa.Text, nullable=False),
        sa.Column("redirect_uri", sa.Text, nullable=False),
        sa.Column("code_challenge", sa.Text, nullable=True),
        sa.Column("code_challenge_method", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("consumed_at", sa.BigInteger, nullable=True),
        sa.PrimaryKeyConstraint("code_hash", name="pk_authorization_codes"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_authorization_codes_application_id_applications",
        ),
        sa.ForeignKeyConstraint(
            ["authorization_id"],
            ["authorizations.id"],
            name="fk_authorization_codes_authorization_id_authorizations",
        ),
    )
    op.create_index("ix_authorization_codes_expires", "authorization_codes", ["expires_at"])
    op.create_table(
        "oauth_tokens",
        sa.Column("token_hash", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("application_id", sa.Text, nullable=False),
        sa.Column("authorization_id", sa.Text, nullable=True),
        sa.Column("family_id", sa.Text, nullable=True),
        sa.Column("scopes", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("consumed_at", sa.BigInteger, nullable=True),
        sa.Column("revoked_at", sa.BigInteger, nullable=True),
        sa.Column("successor", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name="pk_oauth_tokens"),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_oauth_tokens_application_id_applications",
        ),
        sa.ForeignKeyConstraint(
            ["authorization_id"],
            ["authorizations.id"],
            name="fk_oauth_tokens_authorization_id_authorizations",
        ),
    )
    op.create_index("ix_oauth_tokens_family", "oauth_tokens", ["family_id"])
    op.create_index("ix_oauth_tokens_authorization", "oauth_tokens", ["authorization_id"])
    op.create_index("ix_oauth_tokens_expires", "oauth_tokens", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_oauth_tokens_expires", table_name="oauth_tokens")
    op.drop_index("ix_oauth_tokens_authorization", table_name="oauth_tokens")
    op.drop_index("ix_oauth_tokens_family", table_name="oauth_tokens")
    op.drop_table("oauth_tokens")
    op.drop_index("ix_authorization_codes_expires", table_name="authorization_codes")
    op.drop_table("authorization_codes")
    op.drop_index("ix_assertion_jtis_expires", table_name="assertion_jtis")
    op.drop_table("assertion_jtis")
    op.drop_index("ix_client_keys_application", table_name="client_keys")
    op.drop_table("client_keys")
    op.drop_index("ix_client_secrets_application", table_name="client_secrets")
    op.drop_table("client_secrets")
