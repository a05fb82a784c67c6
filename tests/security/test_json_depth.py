"""JSON nested deeper than the kit's limit (docs/security.md, "Input hygiene and
limits"): the command POST answered 500 to a body nested about 1,000 deep (the standard
library's parser raised RecursionError in its fallback); any route's body, and JSON read
from a query parameter, a string field or a token's parts, is now refused with a 400
naming where, before anything parses it, whether or not the caller is authenticated.
Both backends (nothing is stored)."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.config import Settings
from autoport.kit.jsonlimit import MAX_DEPTH, depth_over_limit, loads
from tests.factories import bearer, client_credentials_token, create_app_credentials

DEPTHS = (MAX_DEPTH + 1, 1_000, 100_000)
ADMIN_TOKEN = "json-depth-admin-token"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"admin_token": SecretStr(ADMIN_TOKEN)})


def nested(depth: int, *, kind: str = "list") -> bytes:
    if kind == "list":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def body_operations(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """Every operation of the API description that takes a JSON body."""
    found = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content or method in ("post", "put", "patch"):
                found.append((method.upper(), path.replace("{", "x").replace("}", "")))
    return found


@pytest.mark.parametrize("depth", DEPTHS)
async def test_every_json_body_deeper_than_the_limit_is_a_400(
    client: httpx.AsyncClient, depth: int
) -> None:
    spec = (await client.get("/openapi.json")).json()
    operations = body_operations(spec)
    assert ("POST", "/v1/vehicle-commands/autoapi-13/xvin") in operations
    assert len(operations) > 30
    for kind in ("list", "object"):
        body = nested(depth, kind=kind)
        for method, path in operations:
            for prefix in ("", "/sandbox"):
                answer = await client.request(
                    method,
                    prefix + path,
                    content=body,
                    headers={"content-type": "application/json", **bearer("not-checked-yet")},
                )
                assert answer.status_code == 400, (method, path, answer.status_code, answer.text)
                problem = answer.json()
                if "errors" in problem:
                    assert problem["errors"][0]["source"] == "body"
                    assert f"more than {MAX_DEPTH} levels" in problem["errors"][0]["detail"]
                else:  # the OAuth endpoints' shape
                    assert problem["error"] == "invalid_request"


async def test_the_command_post_of_the_audit(client: httpx.AsyncClient, app: FastAPI) -> None:
    """The audit's case, with a valid token, and the form its fallback parser took."""
    state = app.state.autoport
    creds = await create_app_credentials(state.database, properties=["doors.locks_state"], now_us=1)
    token = await client_credentials_token(client, creds)
    for body in (
        b'{"capability": "doors", "command": "lock_unlock_doors", "arguments": '
        + nested(1_000, kind="object")
        + b"}",
        nested(999) + b" ",  # orjson's limit is 1,024: the standard library's took it
        "\ufeff".encode() + nested(2_000),  # a BOM: orjson refuses, json.loads recursed
    ):
        answer = await client.post(
            "/v1/vehicle-commands/autoapi-13/WBA3A5C50CF256789",
            content=body,
            headers={"content-type": "application/json", **bearer(token)},
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["errors"][0]["source"] == "body"


@pytest.mark.parametrize("depth", DEPTHS)
async def test_an_authenticated_body_parsed_by_fastapi(
    client: httpx.AsyncClient, depth: int
) -> None:
    """Past authentication FastAPI's parser (the standard library's) would read it."""
    for method, path in (("POST", "/admin/v1/applications"), ("POST", "/admin/v1/accounts")):
        answer = await client.request(
            method,
            path,
            content=nested(depth, kind="object"),
            headers={"content-type": "application/json", **bearer(ADMIN_TOKEN)},
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["errors"][0]["source"] == "body"


async def test_a_document_at_the_limit_reaches_its_route(client: httpx.AsyncClient) -> None:
    """32 levels pass the pipeline: the route answers for itself (here: no token)."""
    answer = await client.post(
        "/v1/fleets/vehicles",
        content=nested(MAX_DEPTH, kind="object"),
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 401, answer.text


async def test_json_in_a_query_parameter_is_limited_too(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    state = app.state.autoport
    creds = await create_app_credentials(state.database, properties=["doors.locks_state"], now_us=1)
    token = await client_credentials_token(client, creds)
    for depth in DEPTHS[:2]:
        answer = await client.get(
            "/v1/fleets/vehicles",
            params={"filter": '{"vin": ' + nested(depth, kind="object").decode() + "}"},
            headers=bearer(token),
        )
        assert answer.status_code == 400, answer.text
        error = answer.json()["errors"][0]
        assert error["source"] == "filter"
        assert f"more than {MAX_DEPTH} levels" in error["detail"]


async def test_json_inside_a_token_or_a_string_field_is_limited_too(
    client: httpx.AsyncClient,
) -> None:
    """A client assertion whose parts are deep JSON, a JWK given as a string of deep
    JSON: refused like any bad assertion or key, never a 500."""
    part = base64.urlsafe_b64encode(nested(5_000, kind="object")).rstrip(b"=").decode()
    answer = await client.post(
        "/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": f"{part}.{part}.c2ln",
        },
    )
    assert answer.status_code in (400, 401), answer.text
    assert answer.json()["error"] in ("invalid_client", "invalid_request")


def test_the_depth_is_measured_as_a_parser_nests() -> None:
    """Brackets inside strings (escaped quotes and backslashes included) do not count;
    every level of objects and arrays does."""
    deep_strings = orjson.dumps({"a": "[" * 100, 'b\\"[': '\\\\"' + "{" * 100})
    assert depth_over_limit(deep_strings) is None
    assert depth_over_limit(nested(MAX_DEPTH)) is None
    assert depth_over_limit(nested(MAX_DEPTH + 1)) == MAX_DEPTH + 1
    mixed = b'{"a": [' * 20 + b"1" + b"]}" * 20
    assert depth_over_limit(mixed) == 40
    assert depth_over_limit(b"[" * 500) == 500  # unclosed: the levels a parser enters
    with pytest.raises(orjson.JSONDecodeError, match="more than 32 levels"):
        loads(nested(1_000))
    assert loads(b'{"a": [1, {"b": "[[[["}]}') == {"a": [1, {"b": "[[[["}]}
