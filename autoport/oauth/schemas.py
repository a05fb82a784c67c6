"""Reading OAuth request bodies: JSON objects or application/x-www-form-urlencoded, as
clients send either (docs/oauth.md). Values are strings; a repeated form parameter is
refused (RFC 6749 §3.2)."""

from __future__ import annotations

from typing import Literal
from urllib.parse import parse_qsl

import orjson
from fastapi import Request
from pydantic import BaseModel, Field

from autoport.kit import jsonlimit
from autoport.kit.errors import OAuthError


async def read_params(request: Request) -> dict[str, str]:
    body = await request.body()
    if not body.strip():
        return {}
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    looks_json = (
        media_type == "application/json"
        or media_type.endswith("+json")
        or (not media_type and body.lstrip().startswith(b"{"))
    )
    if looks_json:
        return _json_params(body)
    if media_type in ("application/x-www-form-urlencoded", ""):
        return _form_params(body)
    raise OAuthError(
        "invalid_request",
        f"the body must be application/x-www-form-urlencoded or application/json, not {media_type}",
    )


def _json_params(body: bytes) -> dict[str, str]:
    try:
        data = jsonlimit.loads(body)
    except orjson.JSONDecodeError as error:
        raise OAuthError("invalid_request", f"the body is not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise OAuthError("invalid_request", "the JSON body must be an object")
    params: dict[str, str] = {}
    for name, value in data.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise OAuthError("invalid_request", f"{name} must be a string")
        params[name] = str(value)
    return {k: v for k, v in params.items() if v != ""}


def _form_params(body: bytes) -> dict[str, str]:
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except (UnicodeDecodeError, ValueError) as error:
        raise OAuthError(
            "invalid_request", "the form body is not valid UTF-8 urlencoded"
        ) from error
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            raise OAuthError("invalid_request", f"{name} is repeated; send each parameter once")
        params[name] = value
    return {k: v for k, v in params.items() if v != ""}


# Answers, as documented in the OpenAPI description (the routes write them with orjson).


class TokenAnswer(BaseModel):
    """The token endpoint's 200. A client_credentials answer has the first four members
    only; a consent (authorization_code, refresh_token) answer all of them."""

    access_token: str
    token_type: Literal["bearer"]
    expires_in: int
    scope: str
    refresh_token: str | None = None
    status: Literal["pending", "approved"] | None = Field(
        default=None, description="the grant's status (pending until the carmaker approves)"
    )
    authorization_id: str | None = None
    validity_start_date: str | None = None
    validity_end_date: str | None = Field(default=None, description="null: open-ended")


class VehicleInfo(BaseModel):
    vin: str
    sub: str = Field(description="the owner's subject of the consent")


class ServerMetadata(BaseModel):
    """RFC 8414 authorization server metadata."""

    issuer: str
    authorization_response_iss_parameter_supported: bool = Field(
        description="RFC 9207: authorization responses carry `iss`"
    )
    authorization_endpoint: str
    token_endpoint: str
    revocation_endpoint: str
    response_types_supported: list[str]
    response_modes_supported: list[str]
    grant_types_supported: list[str]
    token_endpoint_auth_methods_supported: list[str]
    token_endpoint_auth_signing_alg_values_supported: list[str]
    revocation_endpoint_auth_methods_supported: list[str]
    code_challenge_methods_supported: list[str]
    scopes_supported: list[str]
    service_documentation: str
