"""The pull is served by a hot route (autoport.kit.routing.HotRoute, matched by the
app's router before FastAPI) and documented by its FastAPI twin (the OpenAPI operation
`get_vehicle_data`). Both must answer exactly the same: status, the headers a client
reads, and the body, for the answer and for every error. The twin is reached here
through the same request pipeline, with FastAPI alone behind it."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from autoport.brands.registry import registry_of
from autoport.brands.sources import (
    PrivacyModeActive,
    SourceTimeout,
    SourceUnavailable,
    VehicleOffline,
)
from autoport.kit.ratelimit import RateLimiter
from autoport.state import typed_parts
from tests.vehicle_data.conftest import TestCallers
from tests.vehicle_data.test_pull import ALL, OTHER_VIN, URL, VIN, TestSource, bearer, store

# Differ between two requests made one after the other, by design: the budget left
# (each request counts) and the seconds to the window's end (the clock moves).
_MOVING = frozenset({"ratelimit-remaining", "ratelimit-reset", "retry-after"})


class Twin:
    """The documented FastAPI route behind the app's own pipeline; counts its calls so
    that a test knows FastAPI, not the hot route, answered."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.calls = 0
        self.pipeline = app.pipeline.around(self._framework)  # type: ignore[attr-defined]

    async def _framework(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        await self.app.framework(scope, receive, send)  # type: ignore[attr-defined]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["app"] = self.app  # as AutoportAPI.__call__ sets it
        await self.pipeline(scope, receive, send)


@pytest.fixture
async def twin(app: FastAPI) -> AsyncIterator[tuple[Twin, httpx.AsyncClient]]:
    found = Twin(app)
    transport = httpx.ASGITransport(app=found)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
        yield found, c


async def assert_same(
    client: httpx.AsyncClient,
    twin: tuple[Twin, httpx.AsyncClient],
    url: str,
    headers: dict[str, str] | None = None,
    *,
    method: str = "GET",
    status: int,
) -> httpx.Response:
    """One request to the served app (hot route) and the same to the twin; the same
    request id, so that the bodies are byte for byte comparable."""
    found, twin_client = twin
    sent = {**(headers or {}), "X-Request-Id": "twin-check-1"}
    hot = await client.request(method, url, headers=sent)
    calls = found.calls
    documented = await twin_client.request(method, url, headers=sent)
    assert found.calls == calls + 1, "the twin must be answered by FastAPI"
    assert hot.status_code == documented.status_code == status, (hot.text, documented.text)
    assert hot.content == documented.content
    assert set(hot.headers) == set(documented.headers)
    for name, value in hot.headers.items():
        if name not in _MOVING:
            assert documented.headers[name] == value, name
    if "ratelimit-remaining" in hot.headers:
        left = int(hot.headers["ratelimit-remaining"])
        assert int(documented.headers["ratelimit-remaining"]) == max(0, left - 1)
    return hot


async def test_the_answer_and_head_are_the_same(
    client: httpx.AsyncClient,
    app: FastAPI,
    callers: TestCallers,
    twin: tuple[Twin, httpx.AsyncClient],
) -> None:
    await store(app)
    app_id = await callers.application(properties=ALL)
    headers = bearer(await callers.vehicle_token(app_id, vin=VIN, properties=ALL))
    answer = await assert_same(client, twin, URL, headers, status=200)
    assert answer.json()["vin"] == VIN
    await assert_same(client, twin, URL, headers, method="HEAD", status=200)


async def test_authentication_errors_are_the_same(
    client: httpx.AsyncClient,
    app: FastAPI,
    callers: TestCallers,
    twin: tuple[Twin, httpx.AsyncClient],
) -> None:
    await store(app)
    await assert_same(client, twin, URL, status=401)  # no token
    await assert_same(client, twin, URL, {"Authorization": "Token abc"}, status=401)
    await assert_same(client, twin, URL, bearer("ap_at_unknown"), status=401)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    # The other environment's pull.
    await assert_same(client, twin, f"/sandbox{URL}", bearer(token), status=401)
    await callers.set_grant_status(token, "revoked")
    revoked = await assert_same(client, twin, URL, bearer(token), status=401)
    assert "revoked" in revoked.json()["errors"][0]["detail"]


async def test_access_errors_are_the_same(
    client: httpx.AsyncClient,
    app: FastAPI,
    callers: TestCallers,
    twin: tuple[Twin, httpx.AsyncClient],
) -> None:
    await store(app)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    other = f"/v1/vehicle-data/autoapi-13/{OTHER_VIN}"
    await assert_same(client, twin, other, bearer(token), status=403)  # another VIN
    pending = await callers.vehicle_token(app_id, vin=VIN, properties=ALL, status="pending")
    await assert_same(client, twin, URL, bearer(pending), status=403)
    # A client_credentials token without a fleet clearance; then without the scope.
    fleet = await callers.application(properties=ALL)
    await assert_same(client, twin, URL, bearer(await callers.application_token(fleet)), status=403)
    unscoped = await callers.stored_token(fleet, scopes=["fleet:clearance"])
    await assert_same(client, twin, URL, bearer(unscoped), status=403)


async def test_request_errors_are_the_same(
    client: httpx.AsyncClient,
    app: FastAPI,
    callers: TestCallers,
    twin: tuple[Twin, httpx.AsyncClient],
) -> None:
    app_id = await callers.application(properties=ALL)
    headers = bearer(await callers.vehicle_token(app_id, vin=VIN, properties=ALL))
    await assert_same(client, twin, URL, headers, status=422)  # nothing stored yet
    malformed = "/v1/vehicle-data/autoapi-13/WBA0000000000000I"
    await assert_same(client, twin, malformed, headers, status=400)
    # Neither route matches these: both reach FastAPI's 404 and 405.
    await assert_same(client, twin, "/v1/vehicle-data/autoapi-13/", headers, status=404)
    await assert_same(client, twin, URL, headers, method="POST", status=405)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (VehicleOffline("asleep"), 408),
        (PrivacyModeActive(), 403),
        (SourceUnavailable("oem down"), 503),
        (SourceTimeout("oem slow"), 504),
    ],
)
async def test_data_source_failures_are_the_same(
    client: httpx.AsyncClient,
    app: FastAPI,
    callers: TestCallers,
    twin: tuple[Twin, httpx.AsyncClient],
    error: Exception,
    status: int,
) -> None:
    await store(app)
    source = TestSource()
    source.error = error
    registry_of(app.state.autoport).data_sources["bmw"] = source
    app_id = await callers.application(properties=ALL)
    headers = bearer(await callers.vehicle_token(app_id, vin=VIN, properties=ALL))
    await assert_same(client, twin, URL, headers, status=status)


async def test_the_rate_limit_answer_is_the_same(
    client: httpx.AsyncClient,
    app: FastAPI,
    callers: TestCallers,
    twin: tuple[Twin, httpx.AsyncClient],
) -> None:
    # A smaller budget for this app's reads (the limiters are built once, autoport.state).
    state = app.state.autoport
    state.parts = dataclasses.replace(
        typed_parts(state), vehicle_data_limit=RateLimiter("2/minute", namespace="vd")
    )
    await store(app)
    app_id = await callers.application(properties=ALL)
    headers = bearer(await callers.vehicle_token(app_id, vin=VIN, properties=ALL))
    await assert_same(client, twin, URL, headers, status=200)  # the budget: hot 1, twin 0
    limited = await assert_same(client, twin, URL, headers, status=429)
    assert "retry-after" in limited.headers


def test_the_twin_is_the_documented_operation(app: FastAPI) -> None:
    operation = app.openapi()["paths"]["/v1/vehicle-data/autoapi-13/{vin}"]["get"]
    assert operation["operationId"].startswith("get_vehicle_data")
    assert {"200", "401", "403", "408", "422", "429", "503", "504"} <= set(operation["responses"])
