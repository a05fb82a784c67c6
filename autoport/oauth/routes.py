"""Token endpoint, revocation, vehicleinfo and RFC 8414 metadata. Thin: parse, call the
service, answer with the RFC 6749 §5.2 error shape on failure."""

from __future__ import annotations

import functools
from typing import Any, Protocol

from fastapi import APIRouter, Request
from starlette.responses import Response

from autoport.apps.service import CLIENT_TABLES, ClientRecord, client_record
from autoport.kit import environments
from autoport.kit.environments import TOKEN_PATH, Environment, environment_of, public_base_url
from autoport.kit.errors import ApiError, OAuthError
from autoport.kit.openapi import APPLICATION_SECURITY, CLIENT_SECURITY
from autoport.kit.ratelimit import RateLimiter, client_address
from autoport.kit.routing import HotRoute, json_response
from autoport.kit.state import AppState, parts_of, state_of
from autoport.kit.versioned import versioned_of
from autoport.oauth import pkce, revocation
from autoport.oauth.bearer import bearer_token, live_token
from autoport.oauth.client_auth import AuthenticatedClient, authenticate_client
from autoport.oauth.grants import authorization_code, client_credentials, refresh_token
from autoport.oauth.group_commit import group_commit_of
from autoport.oauth.schemas import ServerMetadata, TokenAnswer, VehicleInfo, read_params
from autoport.oauth.tokens import TokenSettings

router = APIRouter(tags=["oauth"])


def _body_doc(properties: dict[str, str], required: list[str]) -> dict[str, Any]:
    """OpenAPI for bodies read by hand (JSON or form, both accepted)."""
    schema = {
        "type": "object",
        "properties": {
            name: {"type": "string", "description": text} for name, text in properties.items()
        },
        "required": required,
    }
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {"schema": schema},
                "application/json": {"schema": schema},
            },
        },
        "security": CLIENT_SECURITY,
    }


TOKEN_BODY = _body_doc(
    {
        "grant_type": "authorization_code | refresh_token (alias refresh) | client_credentials",
        "code": "authorization_code: the code from the consent redirect",
        "redirect_uri": "authorization_code: exactly the redirect_uri the code was issued for",
        "code_verifier": "authorization_code: the PKCE verifier",
        "refresh_token": "refresh_token: the current refresh token",
        "client_id": "client authentication (or HTTP Basic)",
        "client_secret": "confidential clients (or HTTP Basic)",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": "an ES256 JWT (private_key_jwt)",
    },
    ["grant_type"],
)
REVOKE_BODY = _body_doc(
    {
        "token": "the access or refresh token to revoke",
        "token_type_hint": "access_token | refresh_token",
        "client_id": "client authentication (or HTTP Basic)",
        "client_secret": "confidential clients (or HTTP Basic)",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": "an ES256 JWT (private_key_jwt)",
    },
    ["token"],
)

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
TOKEN_ANSWER: dict[int | str, dict[str, Any]] = {
    200: {"model": TokenAnswer, "description": "Tokens (RFC 6749 §5.1)"}
}
REVOKED: dict[int | str, dict[str, Any]] = {
    200: {"description": "Revoked, or unknown (RFC 7009 §2.2): an empty body", "content": {}}
}
GRANT_TYPES = ("authorization_code", "refresh_token", "client_credentials")


def audiences(state: AppState, environment: Environment) -> frozenset[str]:
    base = public_base_url(state.settings, environment)
    # docs/oauth.md: aud = <base_url>/v1; the token URL itself is accepted too (RFC 7523).
    return frozenset({f"{base}/v1", f"{base}/v1/access_tokens", f"{base}/v1/access_token"})


def token_settings(state: AppState) -> TokenSettings:
    # Built per request (about a microsecond): settings changed at run time apply at once.
    return TokenSettings.from_settings(state.settings, state.token_key)


async def _client(
    request: Request,
    state: AppState,
    environment: Environment,
    params: dict[str, str],
    now_us: int,
) -> AuthenticatedClient:
    return await authenticate_client(
        state.database.reader,
        environment=environment,
        params=params,
        authorization=request.headers.get("authorization", ""),
        audiences=audiences(state, environment),
        skew_seconds=state.settings.oauth_assertion_skew_seconds,
        now_us=now_us,
        records=functools.partial(_client_record, state),
    )


async def _client_record(
    state: AppState, environment: Environment, client_id: str
) -> ClientRecord | None:
    """The client's application and secrets, read again only after a commit to
    CLIENT_TABLES (a disabled application, a new or retired secret: seen at once when
    this process wrote it, as the bearer check sees a revoked token; kit.versioned).
    The query and its parsing were a sixth of a client_credentials token."""
    database = state.database
    record: ClientRecord | None = await versioned_of(state).get(
        database,
        CLIENT_TABLES,
        (str(environment), client_id),
        lambda: client_record(database.reader, environment=environment, client_id=client_id),
    )
    return record


class TokenParts(Protocol):
    """The parts the token endpoint takes (autoport.state.Parts; mypy checks it has
    them): its limiters per address and per client."""

    @property
    def token_ip_limit(self) -> RateLimiter: ...
    @property
    def token_client_limit(self) -> RateLimiter: ...


async def _rate_limit(limiter: RateLimiter, key: str, whose: str) -> None:
    verdict = await limiter.hit(key)
    if not verdict.allowed:
        headers = verdict.headers()
        # RFC 6749 has no rate-limit error; `temporarily_unavailable` is its code for a
        # server that cannot take the request now, and clients know to retry it.
        raise OAuthError(
            "temporarily_unavailable",
            f"too many token requests {whose}; retry in {headers['Retry-After']} s",
            status=429,
            headers=headers,
        )


async def _token(request: Request, account_id: str | None = None) -> Response:
    state = state_of(request)
    parts: TokenParts = parts_of(state)
    environment = environment_of(request)
    # Every request counts against its address before any work (parsing, client
    # authentication, database): a flood from one place is turned away cheaply.
    await _rate_limit(
        parts.token_ip_limit, client_address(request), "from this address",
    )  # fmt: skip
    params = await read_params(request)
    grant_type = params.get("grant_type")
    if not grant_type:
        raise OAuthError("invalid_request", "grant_type is missing")
    if grant_type == "refresh":
        grant_type = "refresh_token"
    if grant_type not in GRANT_TYPES:
        raise OAuthError(
            "unsupported_grant_type",
            f"grant_type {grant_type!r} is not supported (use {', '.join(GRANT_TYPES)})",
        )
    now_us = state.clock.now_us()
    client = await _client(request, state, environment, params, now_us)
    # Per client only once it is authenticated: nobody else can spend a client's budget.
    await _rate_limit(
        parts.token_client_limit, client.application.id, "of this client",
    )  # fmt: skip
    if account_id is not None and client.application.account_id != account_id:
        raise OAuthError("invalid_client", "the client does not belong to this account", status=401)
    config = token_settings(state)
    body: dict[str, Any]
    if grant_type == "client_credentials":
        body = await client_credentials.grant(
            group_commit_of(state),
            environment=environment,
            client=client,
            config=config,
            now_us=now_us,
        )
    elif grant_type == "authorization_code":
        body = await authorization_code.grant(
            state.database,
            environment=environment,
            client=client,
            params=params,
            config=config,
            now_us=now_us,
        )
    else:
        body = await refresh_token.grant(
            state.database,
            group=group_commit_of(state),
            environment=environment,
            client=client,
            params=params,
            config=config,
            now_us=now_us,
        )
    return json_response(body, headers=NO_STORE)


@router.post(
    TOKEN_PATH,
    summary="Token endpoint",
    openapi_extra=TOKEN_BODY,
    responses=TOKEN_ANSWER,
)
async def token_endpoint(request: Request) -> Response:
    """Exchange an authorization code, a refresh token (`refresh_token` or `refresh`) or
    client credentials for tokens. JSON or form bodies; client authentication by
    `client_secret` (body or HTTP Basic), `private_key_jwt`, or none with PKCE."""
    return await _token(request)


# The token endpoint as a hot route: POST is answered before FastAPI (autoport.app's
# AppRouter), whose dependency resolution and middleware were a third of a token's cost;
# the FastAPI route above, its twin, documents it and answers the same
# (tests/oauth/test_token_hot_route_twin.py). The alias and the per-account path stay
# FastAPI routes.
hot_routes = [HotRoute(TOKEN_PATH, token_endpoint, methods=["POST"])]


@router.post(
    "/v1/access_token",
    summary="Token endpoint (declared alias)",
    openapi_extra=TOKEN_BODY,
    responses=TOKEN_ANSWER,
)
async def token_endpoint_alias(request: Request) -> Response:
    """The same as `POST /v1/access_tokens`."""
    return await _token(request)


@router.post(
    "/v1/{account_id}/oauth/access_tokens",
    summary="Token endpoint (per account)",
    openapi_extra=TOKEN_BODY,
    responses=TOKEN_ANSWER,
)
async def token_endpoint_account(request: Request, account_id: str) -> Response:
    """The same as `POST /v1/access_tokens`, for clients of the given account."""
    return await _token(request, account_id)


async def _revoke(request: Request) -> Response:
    state = state_of(request)
    parts: TokenParts = parts_of(state)
    environment = environment_of(request)
    # The address's token budget, before any work: revocation authenticates the client
    # as the token endpoint does, so guessing a secret here spends the same budget.
    await _rate_limit(
        parts.token_ip_limit, client_address(request), "from this address",
    )  # fmt: skip
    params = await read_params(request)
    token = params.get("token")
    if not token:
        raise OAuthError("invalid_request", "token is missing")
    now_us = state.clock.now_us()
    client = await _client(request, state, environment, params, now_us)
    async with state.database.transaction() as conn:
        await revocation.revoke(
            conn,
            environment=environment,
            client=client,
            token=token,
            config=token_settings(state),
            now_us=now_us,
        )
    state.access_changed()
    return Response(status_code=200, headers=NO_STORE)


@router.delete(
    "/v1/access_tokens",
    summary="Revoke a token (RFC 7009)",
    openapi_extra=REVOKE_BODY,
    responses=REVOKED,
    response_class=Response,  # documents the empty body (the route answers one anyway)
)
async def revoke_endpoint(request: Request) -> Response:
    """Revoke an access or refresh token of the authenticated client (`token`, optional
    `token_type_hint`). Revoking a refresh token ends the grant. Always `200` with an
    empty body, also for an unknown token."""
    return await _revoke(request)


@router.post(
    "/v1/revoke",
    summary="Revoke a token (RFC 7009, POST form)",
    openapi_extra=REVOKE_BODY,
    responses=REVOKED,
    response_class=Response,  # documents the empty body (the route answers one anyway)
)
async def revoke_endpoint_post(request: Request) -> Response:
    """The same as `DELETE /v1/access_tokens`, for standard clients that POST (RFC 7009)."""
    return await _revoke(request)


def _challenge(error: str, description: str) -> str:
    return f'Bearer error="{error}", error_description="{description}"'


@router.get(
    "/v1/vehicleinfo",
    summary="The vehicle bound to an access token",
    responses={200: {"model": VehicleInfo}},
    openapi_extra={"security": APPLICATION_SECURITY},
)
async def vehicleinfo(request: Request) -> Response:
    """`{"vin", "sub"}` of the consent behind the bearer token."""
    state = state_of(request)
    environment = environment_of(request)
    try:
        row = await live_token(
            state.database.reader,
            state.token_key,
            bearer_token(request),
            environment,
            state.clock.now_us(),
        )
    except ApiError as error:
        raise OAuthError(
            "invalid_token",
            error.detail,
            status=401,
            headers={"WWW-Authenticate": _challenge("invalid_token", error.detail)},
        ) from error
    if row["authorization_id"] is None:
        raise OAuthError(
            "insufficient_scope",
            "a client_credentials token is bound to no vehicle; use a token from the consent flow",
            status=403,
            headers={"WWW-Authenticate": 'Bearer error="insufficient_scope"'},
        )
    return json_response({"vin": row["vin"], "sub": row["subject"]}, headers=NO_STORE)


@router.get(
    "/.well-known/oauth-authorization-server",
    summary="OAuth server metadata",
    responses={200: {"model": ServerMetadata}},
)
async def metadata(request: Request) -> Response:
    """RFC 8414 metadata of this environment's authorization server."""
    state = state_of(request)
    environment = environment_of(request)
    base = public_base_url(state.settings, environment)
    from autoport.catalog import CATALOG

    return json_response(
        {
            "issuer": environments.issuer(state.settings, environment),
            # RFC 9207: every authorization response names its issuer (`iss`).
            "authorization_response_iss_parameter_supported": True,
            "authorization_endpoint": environments.authorization_endpoint(
                state.settings, environment
            ),
            "token_endpoint": environments.token_endpoint(state.settings, environment),
            "revocation_endpoint": f"{base}/v1/revoke",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt",
                "none",
            ],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
            "revocation_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt",
                "none",
            ],
            "code_challenge_methods_supported": list(pkce.METHODS),
            "scopes_supported": [
                "vehicle:data",
                "vehicle:eligibility-check",
                "fleet:clearance",
                *CATALOG.all_scopes(),
            ],
            "service_documentation": f"{base}/docs",
        },
        headers={"Cache-Control": "public, max-age=300"},
    )
