"""The authorization code grant (RFC 6749 §4.1): a code from the consent flow (issued by
autoport.oauth.service.issue_authorization_code) for an access/refresh pair, proven with
PKCE (RFC 7636, autoport.oauth.pkce). A code is consumed once; a second use revokes the
tokens issued from it, committed before the error is raised."""

from __future__ import annotations

from typing import Any

from autoport.kit.crypto import same
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.errors import OAuthError
from autoport.oauth import pkce, repository
from autoport.oauth.client_auth import AuthenticatedClient
from autoport.oauth.tokens import (
    TokenSettings,
    code_hash,
    issue_pair,
    live_authorization,
    record_assertion,
)


async def grant(
    db: Database,
    *,
    environment: Environment,
    client: AuthenticatedClient,
    params: dict[str, str],
    config: TokenSettings,
    now_us: int,
) -> dict[str, Any]:
    code = params.get("code")
    if not code:
        raise OAuthError("invalid_request", "code is missing")
    redirect_uri = params.get("redirect_uri")
    if not redirect_uri:
        raise OAuthError("invalid_request", "redirect_uri is missing")
    verifier = params.get("code_verifier")
    application = client.application
    hashed = code_hash(code)
    failure: OAuthError | None = None
    result: dict[str, Any] = {}
    async with db.transaction() as conn:
        await record_assertion(conn, client)
        row = await repository.consume_code(
            conn, code_hash=hashed, environment=str(environment), now_us=now_us
        )
        if row is None:
            previous = await repository.get_code(
                conn, code_hash=hashed, environment=str(environment)
            )
            if previous is None or previous["application_id"] != application.id:
                raise OAuthError("invalid_grant", "the authorization code is not valid")
            # RFC 6749 §4.1.2: a second use revokes every token issued from the code.
            await repository.revoke_family(conn, previous["family_id"], now_us)
            failure = OAuthError(
                "invalid_grant",
                "the authorization code was already used; the tokens issued from it are revoked",
            )
        else:
            if row["application_id"] != application.id:
                raise OAuthError(
                    "invalid_grant", "the authorization code was issued to another client"
                )
            # RFC 6749 §4.1.2: codes are short-lived (10 minutes at most).
            if row["expires_at"] <= now_us:
                raise OAuthError("invalid_grant", "the authorization code has expired")
            # RFC 6749 §4.1.3: the redirect_uri must be identical to the authorization
            # request's.
            if not same(row["redirect_uri"], redirect_uri):
                raise OAuthError(
                    "invalid_grant",
                    "redirect_uri does not match the one the authorization code was issued for",
                )
            problem = pkce.verifier_problem(
                verifier,
                row["code_challenge"],
                row["code_challenge_method"],
                must=pkce.required(
                    public=application.is_public, confidential_must=config.pkce_confidential
                ),
            )
            if problem is not None:
                raise OAuthError("invalid_grant", problem)
            authorization = await live_authorization(
                conn, environment, row["authorization_id"], application.id
            )
            result = await issue_pair(
                conn,
                environment=environment,
                application=application,
                authorization=authorization,
                family_id=row["family_id"],
                config=config,
                now_us=now_us,
            )
    if failure is not None:
        raise failure
    return result
