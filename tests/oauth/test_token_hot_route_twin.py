"""The token endpoint (`POST /v1/access_tokens`) is served by a hot route
(autoport.kit.routing.HotRoute, before FastAPI) and documented by its FastAPI twin. Both
must answer the same: status, the headers a client reads and the body, for tokens and
for every error in RFC 6749's shape. The twin is reached through the same request
pipeline with FastAPI alone behind it (tests/vehicle_data/test_hot_route_twin.Twin)."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit.environments import Environment
from autoport.kit.ratelimit import RateLimiter
from autoport.state import typed_parts
from tests.factories import AppCredentials, create_app_credentials
from tests.vehicle_data.test_hot_route_twin import Twin

# Differ between two requests made one after the other, by design.
_MOVING = frozenset({"ratelimit-remaining", "ratelimit-reset", "retry-after", "content-length"})


@pytest.fixture
async def twin(app: FastAPI) -> AsyncIterator[tuple[Twin, httpx.AsyncClient]]:
    found = Twin(app)
    transport = httpx.ASGITransport(app=found)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
        yield found, c


async def assert_same(
    client: httpx.AsyncClient,
    twin: tuple[Twin, httpx.AsyncClient],
    *,
    status: int,
    path: str = "/v1/access_tokens",
    routed: bool = True,
    **request: Any,
) -> tuple[httpx.Response, httpx.Response]:
    """The same request to the served app (the hot route) and to the twin (FastAPI);
    `routed=False`: one the request pipeline answers before either."""
    found, twin_client = twin
    headers = {**request.pop("headers", {}), "X-Request-Id": "token-twin-1"}
    calls = found.calls
    hot = await client.post(path, headers=headers, **request)
    assert found.calls == calls, "the served app must not reach FastAPI"
    documented = await twin_client.post(path, headers=headers, **request)
    assert found.calls == calls + routed, "the twin must be answered by FastAPI"
    assert hot.status_code == documented.status_code == status, (hot.text, documented.text)
    assert set(hot.headers) == set(documented.headers)
    for name, value in hot.headers.items():
        if name not in _MOVING:
            assert documented.headers[name] == value, name
    if status != 200:  # tokens are new each time; an error is the same bytes
        assert hot.content == documented.content
    return hot, documented


async def _credentials(app: FastAPI, environment: Environment) -> AppCredentials:
    return await create_app_credentials(app.state.autoport.database, environment=environment)


async def test_tokens_are_issued_alike(
    app: FastAPI, client: httpx.AsyncClient, twin: tuple[Twin, httpx.AsyncClient]
) -> None:
    creds = await _credentials(app, Environment.production)
    assert creds.client_secret is not None
    form = {"grant_type": "client_credentials", **creds.auth()}
    basic = base64.b64encode(f"{creds.client_id}:{creds.client_secret}".encode()).decode()
    requests: list[dict[str, Any]] = [
        {"data": form},
        {"json": form},
        {
            "data": {"grant_type": "client_credentials"},
            "headers": {"Authorization": f"Basic {basic}"},
        },
    ]
    for request in requests:
        hot, documented = await assert_same(client, twin, status=200, **request)
        assert hot.json().keys() == documented.json().keys()
        assert hot.json()["token_type"] == documented.json()["token_type"] == "bearer"
        assert hot.json()["scope"] == documented.json()["scope"]
        assert hot.headers["cache-control"] == "no-store"
    # The sandbox's endpoint is the same route behind the environment's prefix.
    sandbox = await _credentials(app, Environment.sandbox)
    await assert_same(
        client,
        twin,
        status=200,
        path="/sandbox/v1/access_tokens",
        data={"grant_type": "client_credentials", **sandbox.auth()},
    )


async def test_every_error_is_answered_alike(
    app: FastAPI, client: httpx.AsyncClient, twin: tuple[Twin, httpx.AsyncClient]
) -> None:
    creds = await _credentials(app, Environment.production)
    cases: list[tuple[int, str, dict[str, Any]]] = [
        (400, "invalid_request", {"data": {"client_id": creds.client_id}}),
        (400, "unsupported_grant_type", {"data": {"grant_type": "password", **creds.auth()}}),
        (
            401,
            "invalid_client",
            {
                "data": {
                    "grant_type": "client_credentials",
                    "client_id": creds.client_id,
                    "client_secret": "wrong",
                }
            },
        ),
        (
            401,
            "invalid_client",
            {
                "data": {
                    "grant_type": "client_credentials",
                    "client_id": "nobody",
                    "client_secret": "x",
                }
            },
        ),
        (
            400,
            "invalid_request",
            {"content": b"grant_type=x", "headers": {"Content-Type": "text/plain"}},
        ),
        (
            400,
            "invalid_request",
            {"content": b"{not json", "headers": {"Content-Type": "application/json"}},
        ),
        (
            400,
            "invalid_grant",
            {
                "data": {
                    "grant_type": "authorization_code",
                    "code": "forged",
                    **creds.auth(),
                    "redirect_uri": creds.redirect_uri,
                }
            },
        ),
        (
            400,
            "invalid_grant",
            {"data": {"grant_type": "refresh_token", "refresh_token": "forged", **creds.auth()}},
        ),
        # Caught by the pipeline before either route: the same answer for both.
        (413, "invalid_request", {"content": b"x" * (2 * 1024 * 1024), "routed": False}),
    ]
    for status, error, request in cases:
        hot, _ = await assert_same(client, twin, status=status, **request)
        assert hot.json()["error"] == error, hot.text
        assert hot.headers["cache-control"] == "no-store"


async def test_the_address_limit_refuses_alike(
    app: FastAPI, client: httpx.AsyncClient, twin: tuple[Twin, httpx.AsyncClient]
) -> None:
    creds = await _credentials(app, Environment.production)
    state = app.state.autoport
    state.parts = dataclasses.replace(
        typed_parts(state), token_ip_limit=RateLimiter("1/minute", namespace="twin-ip")
    )
    form = {"grant_type": "client_credentials", **creds.auth()}
    assert (await client.post("/v1/access_tokens", data=form)).status_code == 200
    hot, _ = await assert_same(client, twin, status=429, data=form)
    assert hot.json()["error"] == "temporarily_unavailable"
    assert int(hot.headers["retry-after"]) >= 1
