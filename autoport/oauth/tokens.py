"""What the token endpoint issues, shared by the grants (autoport.oauth.grants): token
prefixes and lifetimes, the token response (RFC 6749 §5.1), a grant's access/refresh
pair, and the checks every grant makes (a JWT assertion used once, a live grant)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from autoport.apps.schemas import Application
from autoport.catalog import CATALOG
from autoport.catalog.commands import COMMANDS
from autoport.config import Settings
from autoport.kit.auth import GrantStatus
from autoport.kit.clock import MICROS, to_iso
from autoport.kit.crypto import new_token, sha256_hex, token_hash
from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment
from autoport.kit.errors import OAuthError
from autoport.kit.keyring import accepted
from autoport.oauth import repository
from autoport.oauth.client_auth import AuthenticatedClient
from autoport.oauth.repository import ACCESS, REFRESH

CLIENT_SCOPES = "vehicle:data vehicle:eligibility-check fleet:clearance"
CLIENT_TOKEN_SECONDS = 300
ACCESS_PREFIX = "ap_at_"
REFRESH_PREFIX = "ap_rt_"
CODE_PREFIX = "ap_ac_"


def code_hash(code: str) -> str:
    # Codes carry 256 random bits and live minutes; a plain SHA-256 suffices and keeps
    # issue_authorization_code free of the deployment key (cross-feature contract).
    return sha256_hex(code)


def vehicle_scope(properties: list[str], commands: list[str] | None = None) -> str:
    """The read scopes of the granted properties, then the `set` scopes of the granted
    vehicle commands (autoport.commands)."""
    return " ".join(
        ["vehicle:data", *CATALOG.scopes_for(properties), *COMMANDS.scopes_for(commands or ())]
    )


def client_scope(application: Application) -> str:
    """A client_credentials token: the application's own scopes, and the `set` scopes of
    the commands it registered (an approved fleet clearance allows them)."""
    return _client_scope(application.commands)


@lru_cache(maxsize=4096)
def _client_scope(commands: tuple[str, ...]) -> str:
    # Cached: the catalog walk cost every client_credentials token 3 µs, and an
    # application's commands (a tuple) repeat.
    return " ".join([CLIENT_SCOPES, *COMMANDS.scopes_for(commands)])


@dataclass(frozen=True, slots=True)
class TokenSettings:
    token_key: bytes
    access_seconds: int
    refresh_seconds: int
    grace_us: int
    # Confidential clients must use PKCE too (autoport.oauth.pkce.required).
    pkce_confidential: bool = True

    @classmethod
    def from_settings(cls, settings: Settings, token_key: bytes) -> TokenSettings:
        return cls(
            token_key=token_key,
            access_seconds=settings.oauth_access_token_seconds,
            refresh_seconds=settings.oauth_refresh_token_seconds,
            grace_us=int(settings.oauth_refresh_grace_seconds * MICROS),
            pkce_confidential=settings.oauth_pkce_required_for_confidential_clients,
        )


async def record_assertion(conn: Connection, client: AuthenticatedClient) -> None:
    """RFC 7523 §3 (7.): a JWT assertion's `jti` is accepted once; a replay is refused."""
    use = client.assertion
    if use is not None and not await repository.record_jti(
        conn, key_id=use.key_id, jti=use.jti, expires_at=use.expires_at
    ):
        raise OAuthError(
            "invalid_client", "client_assertion 'jti' was already used (replay)", status=401
        )


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
    left out instead (docs/oauth.md, Token endpoint)."""
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


async def issue_pair(
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
    scope = vehicle_scope(
        orjson.loads(authorization["properties"]), orjson.loads(authorization["commands"])
    )
    common = {
        "environment": str(environment),
        "application_id": application.id,
        "authorization_id": authorization["id"],
        "family_id": family_id,
        "scopes": scope,
        "created_at": now_us,
    }
    await repository.create_tokens(
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


async def live_authorization(
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


async def hash_as_stored(
    conn: Connection, config: TokenSettings, token: str, environment: Environment
) -> str:
    """The token's stored hash: under the current key, or, during a key rotation window,
    under the previous key it was issued with (one lookup per key, only then;
    autoport.kit.keyring)."""
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
