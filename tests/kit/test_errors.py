"""Every error path answers in our shape with the request id, never a 500 or a trace."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel, Field

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.errors import ApiError, OAuthError
from autoport.kit.routing import api_router
from autoport.oauth import routes as oauth_routes
from autoport.oauth.paths import is_oauth_path


class Vehicle(BaseModel):
    vin: str = Field(min_length=17, max_length=17)
    tags: dict[str, str] = {}


class Fleet(BaseModel):
    vehicles: list[Vehicle]


probe = api_router(prefix="/probe")


@probe.post("/fleet")
async def add_fleet(body: Fleet) -> dict[str, int]:
    return {"count": len(body.vehicles)}


@probe.get("/boom")
async def boom() -> None:
    raise RuntimeError("secret internal detail")


@probe.get("/api-error")
async def api_error() -> None:
    raise ApiError(409, "vehicle 'X' is already being removed", source="vin")


@probe.post("/oauth")
async def oauth_error() -> None:
    raise OAuthError("invalid_grant", "the code has expired")


@pytest.fixture
async def probe_client(sqlite_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    settings = sqlite_settings.model_copy(update={"max_body_bytes": 2048})
    app: FastAPI = create_app(settings, run_background=False)
    app.include_router(probe)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            yield c


def assert_error_shape(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"errors", "request_id"}
    assert body["request_id"] == response.headers["x-request-id"]
    assert body["errors"] and all({"title", "detail"} <= set(e) for e in body["errors"])
    return body


async def test_unknown_route_is_404_in_our_shape(probe_client: httpx.AsyncClient) -> None:
    body = assert_error_shape(await probe_client.get("/v1/nowhere"), 404)
    assert body["errors"][0]["detail"] == "no route GET /v1/nowhere"


async def test_unknown_route_in_sandbox_is_404_too(probe_client: httpx.AsyncClient) -> None:
    body = assert_error_shape(await probe_client.get("/sandbox/v1/nowhere"), 404)
    assert "/v1/nowhere" in body["errors"][0]["detail"]


async def test_wrong_method_is_405(probe_client: httpx.AsyncClient) -> None:
    body = assert_error_shape(await probe_client.delete("/probe/fleet"), 405)
    assert "DELETE" in body["errors"][0]["detail"]


async def test_malformed_json_is_400(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.post(
        "/probe/fleet", content=b'{"vehicles": [', headers={"content-type": "application/json"}
    )
    body = assert_error_shape(response, 400)
    assert body["errors"][0]["title"] == "Malformed JSON"


async def test_wrong_content_type_is_415(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.post(
        "/probe/fleet", content=b"vehicles=1", headers={"content-type": "text/plain"}
    )
    body = assert_error_shape(response, 415)
    assert "text/plain" in body["errors"][0]["detail"]
    assert body["errors"][0]["source"] == "Content-Type"


async def test_missing_content_type_is_415(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.post("/probe/fleet", content=b'{"vehicles": []}')
    assert_error_shape(response, 415)


async def test_json_with_charset_is_accepted(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.post(
        "/probe/fleet",
        content=b'{"vehicles": []}',
        headers={"content-type": "application/json; charset=utf-8"},
    )
    assert response.status_code == 200
    assert response.json() == {"count": 0}


async def test_validation_error_names_the_field(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.post(
        "/probe/fleet", json={"vehicles": [{"vin": "WAUZZZ8V5KA000001"}, {"vin": "short"}]}
    )
    body = assert_error_shape(response, 422)
    assert body["errors"][0]["source"] == "vehicles[1].vin"
    assert body["errors"][0]["detail"].startswith("vehicles[1].vin: ")


async def test_missing_field_is_named(probe_client: httpx.AsyncClient) -> None:
    body = assert_error_shape(await probe_client.post("/probe/fleet", json={}), 422)
    assert body["errors"][0]["detail"] == "vehicles: field required"


async def test_oversized_body_is_413(probe_client: httpx.AsyncClient) -> None:
    big = {"vehicles": [{"vin": "WAUZZZ8V5KA000001", "tags": {"x": "y" * 4000}}]}
    body = assert_error_shape(await probe_client.post("/probe/fleet", json=big), 413)
    assert "limit" in body["errors"][0]["detail"]


async def test_oversized_streamed_body_without_length_is_413(
    probe_client: httpx.AsyncClient,
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b" " * 512

    response = await probe_client.post(
        "/probe/fleet", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_error_shape(response, 413)


async def test_unexpected_exception_is_500_without_trace(
    probe_client: httpx.AsyncClient,
) -> None:
    response = await probe_client.get("/probe/boom")
    body = assert_error_shape(response, 500)
    assert "secret internal detail" not in response.text
    assert "Traceback" not in response.text
    assert "request_id" in body["errors"][0]["detail"]


async def test_api_error_carries_source(probe_client: httpx.AsyncClient) -> None:
    body = assert_error_shape(await probe_client.get("/probe/api-error"), 409)
    assert body["errors"][0] == {
        "title": "Conflict",
        "detail": "vehicle 'X' is already being removed",
        "source": "vin",
    }


async def test_oauth_error_uses_rfc6749_shape(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.post("/probe/oauth")
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_grant",
        "error_description": "the code has expired",
    }
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-request-id"]


async def test_incoming_request_id_is_kept_when_plain(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.get("/v1/nowhere", headers={"x-request-id": "trace-abc.123"})
    assert response.headers["x-request-id"] == "trace-abc.123"
    assert response.json()["request_id"] == "trace-abc.123"


async def test_hostile_request_id_is_replaced(probe_client: httpx.AsyncClient) -> None:
    response = await probe_client.get("/v1/nowhere", headers={"x-request-id": "<script>"})
    assert response.headers["x-request-id"] != "<script>"
    assert len(response.headers["x-request-id"]) == 32


async def test_every_response_has_a_request_id(probe_client: httpx.AsyncClient) -> None:
    for path in ("/healthz", "/", "/sandbox/", "/metrics"):
        response = await probe_client.get(path)
        assert response.status_code == 200
        assert response.headers["x-request-id"]


def assert_oauth_shape(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert response.json() == {"error": "invalid_request", "error_description": words}
    assert response.headers["x-request-id"]
    assert response.headers["cache-control"] == "no-store"


TOO_LARGE = "the request body is larger than the configured limit"
TOKEN_PATHS = [
    "/v1/access_tokens",
    "/v1/access_token",
    "/v1/ACCOUNT123/oauth/access_tokens",
    "/v1/revoke",
    "/sandbox/v1/access_tokens",
    "/sandbox/v1/ACCOUNT123/oauth/access_tokens",
]


@pytest.mark.parametrize("path", TOKEN_PATHS)
async def test_oversized_body_on_oauth_endpoints_is_413_in_rfc6749_shape(
    probe_client: httpx.AsyncClient, path: str
) -> None:
    form = {"grant_type": "client_credentials", "client_secret": "x" * 4000}
    assert_oauth_shape(await probe_client.post(path, data=form), 413, TOO_LARGE)


async def test_oversized_streamed_body_on_the_token_endpoint_is_413_in_rfc6749_shape(
    probe_client: httpx.AsyncClient,
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"x" * 512

    response = await probe_client.post(
        "/v1/access_tokens",
        content=chunks(),
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert_oauth_shape(response, 413, TOO_LARGE)


async def test_oversized_revocation_by_delete_is_413_in_rfc6749_shape(
    probe_client: httpx.AsyncClient,
) -> None:
    response = await probe_client.request("DELETE", "/v1/access_tokens", data={"token": "x" * 4000})
    assert_oauth_shape(response, 413, TOO_LARGE)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/access_tokens"),
        ("PUT", "/v1/access_token"),
        ("GET", "/v1/ACCOUNT123/oauth/access_tokens"),
        ("GET", "/v1/revoke"),
        ("POST", "/v1/vehicleinfo"),
        ("GET", "/sandbox/v1/access_tokens"),
        ("PATCH", "/sandbox/v1/vehicleinfo"),
    ],
)
async def test_wrong_method_on_oauth_endpoints_is_405_in_rfc6749_shape(
    probe_client: httpx.AsyncClient, method: str, path: str
) -> None:
    response = await probe_client.request(method, path)
    routed = path.removeprefix("/sandbox")
    assert response.status_code == 405, response.text
    assert response.json()["error"] == "invalid_request"
    assert method in response.json()["error_description"]
    assert routed in response.json()["error_description"]
    assert response.headers["x-request-id"] and response.headers["allow"]
    assert response.headers["cache-control"] == "no-store"


async def test_the_general_api_keeps_its_shape_for_413_and_405(
    probe_client: httpx.AsyncClient,
) -> None:
    # Paths next to the OAuth ones, and the server metadata (not an OAuth error endpoint).
    big = {"vehicles": [{"vin": "WAUZZZ8V5KA000001", "tags": {"x": "y" * 4000}}]}
    for path in ("/v1/fleets/vehicles", "/sandbox/v1/fleets/vehicles", "/v1/access_tokens/x"):
        body = assert_error_shape(await probe_client.post(path, json=big), 413)
        assert body["errors"][0]["detail"] == TOO_LARGE
    for method, path in (
        ("POST", "/v1/stream"),
        ("POST", "/.well-known/oauth-authorization-server"),
        ("PUT", "/sandbox/v1/fleets/vehicles"),
    ):
        body = assert_error_shape(await probe_client.request(method, path), 405)
        assert method in body["errors"][0]["detail"]


@pytest.mark.parametrize(
    ("path", "oauth"),
    [
        ("/v1/access_tokens", True),
        ("/v1/access_token", True),
        ("/v1/revoke", True),
        ("/v1/vehicleinfo", True),
        ("/v1/acme/oauth/access_tokens", True),
        ("/v1//oauth/access_tokens", False),
        ("/v1/a/b/oauth/access_tokens", False),
        ("/v1/oauth/access_tokens", False),
        ("/v1/access_tokens/", False),
        ("/v1/fleets/vehicles", False),
        ("/.well-known/oauth-authorization-server", False),
        ("/sandbox/v1/access_tokens", False),  # the helper sees routed paths only
    ],
)
def test_is_oauth_path(path: str, oauth: bool) -> None:
    assert is_oauth_path(path) is oauth


def test_is_oauth_path_knows_every_oauth_error_endpoint() -> None:
    # Every route of autoport.oauth.routes but the metadata answers RFC 6749 errors.
    paths = {
        route.path.replace("{account_id}", "acme")
        for route in oauth_routes.router.routes
        if isinstance(route, APIRoute)
    }
    assert "/v1/acme/oauth/access_tokens" in paths and "/v1/vehicleinfo" in paths
    assert paths - {"/.well-known/oauth-authorization-server"} == {
        p for p in paths if is_oauth_path(p)
    }
