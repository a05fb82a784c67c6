"""Reading OAuth request bodies: JSON objects or application/x-www-form-urlencoded, as
clients send either (interface.md). Values are strings; a repeated form parameter is
refused (RFC 6749 §3.2)."""

from __future__ import annotations

from urllib.parse import parse_qsl

import orjson
from fastapi import Request

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
        data = orjson.loads(body)
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
