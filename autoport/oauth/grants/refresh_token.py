"""The refresh token grant (RFC 6749 §6), with rotation (RFC 9700 §4.14.2): each refresh
token is consumed once for a new pair. A reuse within the grace window (a client whose
answer was lost) gets the same new pair back, sealed under a key only the old token's
holder can derive; a later reuse revokes the token family (RFC 9700 §4.14.2: a replay
means the token leaked)."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import orjson

from autoport.apps.schemas import Application
from autoport.kit import crypto
from autoport.kit.clock import MICROS
from autoport.kit.crypto import new_token
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment
from autoport.kit.errors import OAuthError
from autoport.kit.keyring import accepted
from autoport.oauth import repository
from autoport.oauth.client_auth import AuthenticatedClient
from autoport.oauth.group_commit import GroupCommit
from autoport.oauth.repository import REFRESH
from autoport.oauth.tokens import (
    ACCESS_PREFIX,
    REFRESH_PREFIX,
    TokenSettings,
    hash_as_stored,
    issue_pair,
    live_authorization,
    record_assertion,
    token_response,
)


def _successor_key(token_key: bytes, refresh: str) -> bytes:
    # Derived from the old refresh token: only its holder can read the new pair back.
    return hmac.new(token_key, b"successor:" + refresh.encode(), hashlib.sha256).digest()


def _seal(config: TokenSettings, refresh: str, pair: tuple[str, str]) -> str:
    return crypto.seal(_successor_key(config.token_key, refresh), orjson.dumps(list(pair)))


def _unseal(config: TokenSettings, refresh: str, successor: str) -> tuple[str, str] | None:
    # Sealed under the key of its day: during a key rotation window, a previous one.
    for key in accepted(config.token_key):
        plain = crypto.unseal(_successor_key(key, refresh), successor)
        if plain is not None:
            access, new_refresh = orjson.loads(plain)
            return str(access), str(new_refresh)
    return None


async def grant(
    db: Database,
    *,
    group: GroupCommit,
    environment: Environment,
    client: AuthenticatedClient,
    params: dict[str, str],
    config: TokenSettings,
    now_us: int,
) -> dict[str, Any]:
    presented = params.get("refresh_token")
    if not presented:
        raise OAuthError("invalid_request", "refresh_token is missing")
    application = client.application
    hashed = await hash_as_stored(db.reader, config, presented, environment)
    pair = (new_token(ACCESS_PREFIX), new_token(REFRESH_PREFIX))

    async def work(conn: Connection) -> tuple[dict[str, Any], OAuthError | None]:
        await record_assertion(conn, client)
        row = await repository.consume_refresh(
            conn,
            token_hash=hashed,
            environment=str(environment),
            application_id=application.id,
            successor=_seal(config, presented, pair),
            now_us=now_us,
        )
        if row is None:
            return await _refresh_not_consumable(
                conn,
                environment=environment,
                application=application,
                presented=presented,
                hashed=hashed,
                config=config,
                now_us=now_us,
            )
        authorization = await live_authorization(
            conn, environment, row["authorization_id"], application.id
        )
        issued = await issue_pair(
            conn,
            environment=environment,
            application=application,
            authorization=authorization,
            family_id=row["family_id"],
            config=config,
            now_us=now_us,
            tokens=pair,
        )
        return issued, None

    # A reuse's family revocation is committed; its error is raised after the commit.
    result, failure = await group.run(work)
    if failure is not None:
        raise failure
    return result


async def _refresh_not_consumable(
    conn: Connection,
    *,
    environment: Environment,
    application: Application,
    presented: str,
    hashed: str,
    config: TokenSettings,
    now_us: int,
) -> tuple[dict[str, Any], OAuthError | None]:
    """Why a refresh token could not be consumed; a reuse within the grace window gets
    the pair the first use received, a later reuse revokes the family."""
    token = await repository.get_token(conn, token_hash=hashed, environment=str(environment))
    # RFC 6749 §6: the refresh token must have been issued to the authenticated client.
    if token is None or token["kind"] != REFRESH or token["application_id"] != application.id:
        raise OAuthError("invalid_grant", "the refresh token is not valid")
    if token["revoked_at"] is not None:
        raise OAuthError("invalid_grant", "the refresh token was revoked")
    if token["consumed_at"] is None:
        raise OAuthError("invalid_grant", "the refresh token has expired")
    if now_us - token["consumed_at"] < config.grace_us and token["successor"]:
        pair = _unseal(config, presented, token["successor"])
        if pair is not None:
            access_row = await repository.get_token(
                conn,
                token_hash=await hash_as_stored(conn, config, pair[0], environment),
                environment=str(environment),
            )
            refresh_row = await repository.get_token(
                conn,
                token_hash=await hash_as_stored(conn, config, pair[1], environment),
                environment=str(environment),
            )
            usable = (
                access_row is not None
                and refresh_row is not None
                and refresh_row["revoked_at"] is None
                and refresh_row["consumed_at"] is None
                and access_row["revoked_at"] is None
            )
            if usable:
                assert access_row is not None
                authorization = await live_authorization(
                    conn, environment, token["authorization_id"], application.id
                )
                expires_in = max(0, (access_row["expires_at"] - now_us) // MICROS)
                answer = token_response(
                    access=pair[0],
                    expires_in=int(expires_in),
                    scope=access_row["scopes"],
                    refresh=pair[1],
                    authorization=authorization,
                )
                return answer, None
    await repository.revoke_family(conn, token["family_id"], now_us)
    return {}, OAuthError(
        "invalid_grant",
        "the refresh token was already used; every token of this grant is revoked",
    )
