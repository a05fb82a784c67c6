"""The client credentials grant (RFC 6749 §4.4): an application's own short-lived access
token, for the endpoints that act for the application rather than an owner (eligibility,
fleet clearance)."""

from __future__ import annotations

from typing import Any

from autoport.kit.clock import MICROS
from autoport.kit.crypto import new_token, token_hash
from autoport.kit.db import Connection
from autoport.kit.environments import Environment
from autoport.kit.errors import OAuthError
from autoport.oauth import repository
from autoport.oauth.client_auth import AuthenticatedClient
from autoport.oauth.group_commit import GroupCommit
from autoport.oauth.repository import ACCESS
from autoport.oauth.tokens import (
    ACCESS_PREFIX,
    CLIENT_TOKEN_SECONDS,
    TokenSettings,
    client_scope,
    record_assertion,
    token_response,
)


async def grant(
    group: GroupCommit,
    *,
    environment: Environment,
    client: AuthenticatedClient,
    config: TokenSettings,
    now_us: int,
) -> dict[str, Any]:
    if client.application.is_public:
        # RFC 6749 §4.4: "MUST only be used by confidential clients".
        raise OAuthError(
            "unauthorized_client", "a public client cannot use the client_credentials grant"
        )
    token = new_token(ACCESS_PREFIX)
    scope = client_scope(client.application)
    row = {
        "token_hash": token_hash(config.token_key, token),
        "environment": str(environment),
        "kind": ACCESS,
        "application_id": client.application.id,
        "authorization_id": None,
        "family_id": None,
        "scopes": scope,
        "created_at": now_us,
        "expires_at": now_us + CLIENT_TOKEN_SECONDS * MICROS,
    }

    async def work(conn: Connection) -> None:
        await record_assertion(conn, client)
        await repository.create_token(conn, row)

    await group.run(work)
    return token_response(access=token, expires_in=CLIENT_TOKEN_SECONDS, scope=scope)
