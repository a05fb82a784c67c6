"""Token revocation (RFC 7009): a client revokes one of its tokens; revoking a refresh
token ends the whole grant (RFC 7009 §2.1: "SHOULD also invalidate all access tokens
based on the same authorization grant"), and here the authorization too."""

from __future__ import annotations

from autoport.kit.auth import GrantStatus
from autoport.kit.db import Connection
from autoport.kit.environments import Environment
from autoport.oauth import repository
from autoport.oauth.client_auth import AuthenticatedClient
from autoport.oauth.repository import REFRESH
from autoport.oauth.service import set_authorization_status
from autoport.oauth.tokens import TokenSettings, hash_as_stored, record_assertion


async def revoke(
    conn: Connection,
    *,
    environment: Environment,
    client: AuthenticatedClient,
    token: str,
    config: TokenSettings,
    now_us: int,
) -> None:
    """RFC 7009: revoke a token of this client; unknown tokens (or another client's) are
    silently ignored. A refresh token ends the grant (authorization revoked). In the
    caller's transaction."""
    hashed = await hash_as_stored(conn, config, token, environment)
    await record_assertion(conn, client)
    row = await repository.get_token(conn, token_hash=hashed, environment=str(environment))
    if row is None or row["application_id"] != client.application.id:
        # RFC 7009 §2.2: an invalid token (or another client's) is answered 200 too.
        return
    if row["kind"] == REFRESH and row["authorization_id"] is not None:
        await repository.revoke_family(conn, row["family_id"], now_us)
        authorization = await repository.get_authorization(
            conn, authorization_id=row["authorization_id"], environment=str(environment)
        )
        if authorization is not None and authorization["status"] in (
            GrantStatus.pending,
            GrantStatus.approved,
        ):
            await set_authorization_status(
                conn,
                environment=environment,
                authorization_id=row["authorization_id"],
                status=GrantStatus.revoked,
                now_us=now_us,
                detail="the application revoked its refresh token",
            )
    else:
        await repository.revoke_token(conn, hashed, now_us)
