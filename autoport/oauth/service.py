"""The grants, token issuance and revocation, and the two functions the consent flow
calls (`issue_authorization_code`, `set_authorization_status`).

Failures that must still be recorded (a reused code or refresh token revokes its token
family) are committed first and raised after the transaction; every other failure is
raised inside it, so nothing half-done is stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass, replace
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from autoport.apps import repository as apps_repository
from autoport.apps.schemas import Application
from autoport.catalog import CATALOG
from autoport.config import Settings
from autoport.kit import outbox
from autoport.kit.auth import GrantStatus
from autoport.kit.clock import MICROS, to_iso
from autoport.kit.crypto import new_token, same, sha256_hex, token_hash
from autoport.kit.db import Connection, Database, Row
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError, OAuthError
from autoport.kit.keyring import accepted
from autoport.oauth import repository
from autoport.oauth.client_auth import AuthenticatedClient
from autoport.oauth.group_commit import run_grouped
from autoport.oauth.repository import ACCESS, REFRESH

CLIENT_SCOPES = "vehicle:data vehicle:eligibility-check fleet:clearance"
CLIENT_TOKEN_SECONDS = 300
ACCESS_PREFIX = "ap_at_"
REFRESH_PREFIX = "ap_rt_"
CODE_PREFIX = "ap_ac_"
PKCE_METHODS = ("S256", "plain")


def code_hash(code: str) -> str:
    # Codes carry 256 random bits and live minutes; a plain SHA-256 suffices and keeps
    # issue_authorization_code free of the deployment key (cross-feature contract).
    return sha256_hex(code)


def vehicle_scope(properties: list[str]) -> str:
    return " ".join(["vehicle:data", *CATALOG.scopes_for(properties)])


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


# -------------------------------------------------------------------- consent side


async def issue_authorization_code(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    authorization_id: str,
    redirect_uri: str,
    code_challenge: str | None,
    code_challenge_method: str | None,
    now_us: int,
    lifetime_seconds: int = 600,
) -> str:
    """A single-use code for an existing authorization (pending or approved), bound to
    the application, the exact redirect_uri and the PKCE challenge. Returns the code."""
    application = await apps_repository.get_application(conn, environment, application_id)
    if application is None:
        raise ApiError(404, f"no application {application_id!r}", source="application_id")
    if redirect_uri not in application.redirect_uris:
        raise ApiError(
            422, "redirect_uri is not registered for the application", source="redirect_uri"
        )
    authorization = await repository.get_authorization(
        conn, authorization_id=authorization_id, environment=str(environment)
    )
    if authorization is None or authorization["application_id"] != application_id:
        raise ApiError(404, f"no authorization {authorization_id!r}", source="authorization_id")
    if authorization["status"] not in (GrantStatus.pending, GrantStatus.approved):
        raise ApiError(
            409, f"the authorization is {authorization['status']}", source="authorization_id"
        )
    method: str | None = None
    if code_challenge:
        method = code_challenge_method or "S256"
        if method not in PKCE_METHODS:
            raise ApiError(
                422, "code_challenge_method must be S256 or plain", source="code_challenge_method"
            )
        if not 43 <= len(code_challenge) <= 128:
            raise ApiError(
                422, "code_challenge must be 43 to 128 characters", source="code_challenge"
            )
    elif application.is_public:
        raise ApiError(422, "a public client must send a code_challenge", source="code_challenge")
    code = new_token(CODE_PREFIX)
    await repository.insert_code(
        conn,
        {
            "code_hash": code_hash(code),
            "environment": str(environment),
            "application_id": application_id,
            "authorization_id": authorization_id,
            "family_id": str(uuid.uuid4()),
            "redirect_uri": redirect_uri,
            "code_challenge": code_challenge or None,
            "code_challenge_method": method,
            "created_at": now_us,
            "expires_at": now_us + min(lifetime_seconds, 600) * MICROS,
        },
    )
    return code


_TRANSITIONS: dict[str, tuple[str, ...]] = {
    GrantStatus.approved: (GrantStatus.pending,),
    GrantStatus.rejected: (GrantStatus.pending,),
    GrantStatus.revoked: (GrantStatus.pending, GrantStatus.approved),
}


async def set_authorization_status(
    conn: Connection,
    *,
    environment: Environment,
    authorization_id: str,
    status: str,
    now_us: int,
    detail: str | None = None,
) -> bool:
    """pending -> approved | rejected, pending/approved -> revoked; emits
    `authorization_changed`. Rejecting or revoking ends every token of the grant.
    Returns False when the authorization already had that status (nothing emitted)."""
    allowed_from = _TRANSITIONS.get(status)
    if allowed_from is None:
        raise ApiError(422, f"status must be approved, rejected or revoked, got {status!r}")
    sources = ", ".join(f"'{value}'" for value in allowed_from)
    row = await conn.fetch_one(
        f"UPDATE authorizations SET status = :status, updated_at = :now "  # noqa: S608
        f"WHERE id = :id AND environment = :environment AND status IN ({sources}) "
        "RETURNING application_id, vin",
        {"status": status, "now": now_us, "id": authorization_id, "environment": str(environment)},
    )
    if row is None:
        current = await repository.get_authorization(
            conn, authorization_id=authorization_id, environment=str(environment)
        )
        if current is None:
            raise ApiError(404, f"no authorization {authorization_id!r}", source="authorization_id")
        if current["status"] == status:
            return False
        raise ApiError(
            409,
            f"the authorization is {current['status']}; it cannot become {status}",
            source="status",
        )
    if status in (GrantStatus.revoked, GrantStatus.rejected):
        await repository.revoke_authorization_tokens(conn, authorization_id, now_us)
    await outbox.emit(
        conn,
        environment=environment,
        event_type="authorization_changed",
        payload={"action": status, "authorization_id": authorization_id, "detail": detail},
        now_us=now_us,
        vin=row["vin"],
        application_id=row["application_id"],
    )
    return True


# --------------------------------------------------------------------------- grants


@dataclass(frozen=True, slots=True)
class TokenSettings:
    token_key: bytes
    access_seconds: int
    refresh_seconds: int
    grace_us: int

    @classmethod
    def from_settings(cls, settings: Settings, token_key: bytes) -> TokenSettings:
        return cls(
            token_key=token_key,
            access_seconds=settings.oauth_access_token_seconds,
            refresh_seconds=settings.oauth_refresh_token_seconds,
            grace_us=int(settings.oauth_refresh_grace_seconds * MICROS),
        )


async def _record_assertion(conn: Connection, client: AuthenticatedClient) -> None:
    use = client.assertion
    if use is not None and not await repository.record_jti(
        conn, key_id=use.key_id, jti=use.jti, expires_at=use.expires_at
    ):
        raise OAuthError(
            "invalid_client", "client_assertion 'jti' was already used (replay)", status=401
        )


async def client_credentials(
    db: Database,
    *,
    environment: Environment,
    client: AuthenticatedClient,
    config: TokenSettings,
    now_us: int,
) -> dict[str, Any]:
    if client.application.is_public:
        raise OAuthError(
            "unauthorized_client", "a public client cannot use the client_credentials grant"
        )
    token = new_token(ACCESS_PREFIX)
    row = {
        "token_hash": token_hash(config.token_key, token),
        "environment": str(environment),
        "kind": ACCESS,
        "application_id": client.application.id,
        "authorization_id": None,
        "family_id": None,
        "scopes": CLIENT_SCOPES,
        "created_at": now_us,
        "expires_at": now_us + CLIENT_TOKEN_SECONDS * MICROS,
    }

    async def work(conn: Connection) -> None:
        await _record_assertion(conn, client)
        await repository.insert_token(conn, row)

    await run_grouped(db, work)
    return token_response(access=token, expires_in=CLIENT_TOKEN_SECONDS, scope=CLIENT_SCOPES)


def token_response(
    *,
    access: str,
    expires_in: int,
    scope: str,
    refresh: str | None = None,
    authorization: Row | None = None,
) -> dict[str, Any]:
    """The token response of every grant. The original types each field as a string or
    integer, never null, and strict clients refuse a null: a field with no value (no
    refresh token or grant for client_credentials, no end of an open-ended grant) is
    left out instead (interface.md, Token responses)."""
    body: dict[str, Any] = {
        "access_token": access,
        "token_type": "bearer",
        "expires_in": expires_in,
    }
    if refresh is not None:
        body["refresh_token"] = refresh
    body["scope"] = scope
    if authorization is not None:
        pending = authorization["status"] == GrantStatus.pending
        body["status"] = "pending" if pending else "approved"
        body["authorization_id"] = authorization["id"]
        body["validity_start_date"] = to_iso(authorization["valid_from"])
        if authorization["valid_until"] is not None:
            body["validity_end_date"] = to_iso(authorization["valid_until"])
    return body


async def _issue_pair(
    conn: Connection,
    *,
    environment: Environment,
    application: Application,
    authorization: Row,
    family_id: str,
    config: TokenSettings,
    now_us: int,
    tokens: tuple[str, str] | None = None,
) -> dict[str, Any]:
    access, refresh = tokens or (new_token(ACCESS_PREFIX), new_token(REFRESH_PREFIX))
    scope = vehicle_scope(orjson.loads(authorization["properties"]))
    common = {
        "environment": str(environment),
        "application_id": application.id,
        "authorization_id": authorization["id"],
        "family_id": family_id,
        "scopes": scope,
        "created_at": now_us,
    }
    await repository.insert_tokens(
        conn,
        [
            {
                **common,
                "token_hash": token_hash(config.token_key, access),
                "kind": ACCESS,
                "expires_at": now_us + config.access_seconds * MICROS,
            },
            {
                **common,
                "token_hash": token_hash(config.token_key, refresh),
                "kind": REFRESH,
                "expires_at": now_us + config.refresh_seconds * MICROS,
            },
        ],
    )
    return token_response(
        access=access,
        expires_in=config.access_seconds,
        scope=scope,
        refresh=refresh,
        authorization=authorization,
    )


async def _live_authorization(
    conn: Connection, environment: Environment, authorization_id: str, application_id: str
) -> Row:
    authorization = await repository.get_authorization(
        conn, authorization_id=authorization_id, environment=str(environment)
    )
    if authorization is None or authorization["application_id"] != application_id:
        raise OAuthError("invalid_grant", "the authorization behind this grant no longer exists")
    if authorization["status"] in (GrantStatus.revoked, GrantStatus.rejected):
        raise OAuthError("invalid_grant", f"the authorization was {authorization['status']}")
    return authorization


async def authorization_code(
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
        await _record_assertion(conn, client)
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
            if row["expires_at"] <= now_us:
                raise OAuthError("invalid_grant", "the authorization code has expired")
            if not same(row["redirect_uri"], redirect_uri):
                raise OAuthError(
                    "invalid_grant",
                    "redirect_uri does not match the one the authorization code was issued for",
                )
            challenge = row["code_challenge"]
            if challenge is not None:
                if not verifier:
                    raise OAuthError(
                        "invalid_grant",
                        "code_verifier is missing: the code was issued with a PKCE code_challenge",
                    )
                computed = s256(verifier) if row["code_challenge_method"] == "S256" else verifier
                if not same(computed, challenge):
                    raise OAuthError(
                        "invalid_grant", "code_verifier does not match the code_challenge"
                    )
            elif verifier:
                raise OAuthError(
                    "invalid_grant", "code_verifier given, but the code was issued without PKCE"
                )
            elif application.is_public:
                raise OAuthError("invalid_grant", "a public client must use PKCE")
            authorization = await _live_authorization(
                conn, environment, row["authorization_id"], application.id
            )
            result = await _issue_pair(
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


def _successor_key(config: TokenSettings, refresh: str) -> bytes:
    # Derived from the old refresh token: only its holder can read the new pair back.
    return hmac.new(config.token_key, b"successor:" + refresh.encode(), hashlib.sha256).digest()


def _seal(config: TokenSettings, refresh: str, pair: tuple[str, str]) -> str:
    nonce = secrets.token_bytes(12)
    sealed = AESGCM(_successor_key(config, refresh)).encrypt(nonce, orjson.dumps(list(pair)), None)
    return base64.urlsafe_b64encode(nonce + sealed).decode()


def _unseal(config: TokenSettings, refresh: str, successor: str) -> tuple[str, str] | None:
    try:
        raw = base64.urlsafe_b64decode(successor)
    except ValueError:
        return None
    # Sealed under the key of its day: during a key rotation window, a previous one.
    for key in accepted(config.token_key):
        successor_key = _successor_key(replace(config, token_key=key), refresh)
        try:
            plain = AESGCM(successor_key).decrypt(raw[:12], raw[12:], None)
        except (InvalidTag, ValueError):
            continue
        access, new_refresh = orjson.loads(plain)
        return str(access), str(new_refresh)
    return None


async def _hash_as_stored(
    conn: Connection, config: TokenSettings, token: str, environment: Environment
) -> str:
    """The token's stored hash: under the current key, or, during a key rotation window,
    under the previous key it was issued with (one lookup per key, only then)."""
    keys = accepted(config.token_key)
    if len(keys) > 1:
        for key in keys:
            hashed = token_hash(key, token)
            found = await repository.get_token(
                conn, token_hash=hashed, environment=str(environment)
            )
            if found is not None:
                return hashed
    return token_hash(config.token_key, token)


async def refresh_token(
    db: Database,
    *,
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
    hashed = await _hash_as_stored(db.reader, config, presented, environment)
    pair = (new_token(ACCESS_PREFIX), new_token(REFRESH_PREFIX))

    async def work(conn: Connection) -> tuple[dict[str, Any], OAuthError | None]:
        await _record_assertion(conn, client)
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
        authorization = await _live_authorization(
            conn, environment, row["authorization_id"], application.id
        )
        issued = await _issue_pair(
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
    result, failure = await run_grouped(db, work)
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
                token_hash=await _hash_as_stored(conn, config, pair[0], environment),
                environment=str(environment),
            )
            refresh_row = await repository.get_token(
                conn,
                token_hash=await _hash_as_stored(conn, config, pair[1], environment),
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
                authorization = await _live_authorization(
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


# ----------------------------------------------------------------------- revocation


async def revoke(
    db: Database,
    *,
    environment: Environment,
    client: AuthenticatedClient,
    token: str,
    config: TokenSettings,
    now_us: int,
) -> None:
    """RFC 7009: revoke a token of this client; unknown tokens (or another client's) are
    silently ignored. A refresh token ends the grant (authorization revoked)."""
    async with db.transaction() as conn:
        hashed = await _hash_as_stored(conn, config, token, environment)
        await _record_assertion(conn, client)
        row = await repository.get_token(conn, token_hash=hashed, environment=str(environment))
        if row is None or row["application_id"] != client.application.id:
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
