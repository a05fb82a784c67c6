"""The request pipeline's rules for every path: HEAD as GET, Allow listing every method a
path serves, bodies (empty, malformed, of another type) refused only after the caller
is authenticated."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import PlainAttributes
from autoport.config import rotate_admin_token
from autoport.kit.environments import Environment
from tests.factories import bearer, client_credentials_token, create_app_credentials

VIN = "1HGCM82633A004352"


def allow(response: httpx.Response) -> set[str]:
    assert response.status_code == 405, response.text
    return {method.strip() for method in response.headers["allow"].split(",")}


async def test_allow_lists_every_method_of_the_path(embedded_client: httpx.AsyncClient) -> None:
    client = embedded_client
    assert allow(await client.put("/v1/fleets/vehicles")) == {"GET", "HEAD", "POST"}
    assert allow(await client.put(f"/v1/fleets/vehicles/{VIN}")) == {"GET", "HEAD", "DELETE"}
    tokens = await client.put("/v1/access_tokens")
    assert allow(tokens) == {"POST", "DELETE"}
    assert tokens.json()["error"] == "invalid_request"  # RFC 6749 shape kept
    # The hot pull route (answered by the pipeline itself) and its FastAPI twin agree.
    assert allow(await client.post(f"/v1/vehicle-data/autoapi-13/{VIN}")) == {"GET", "HEAD"}
    assert allow(await client.delete("/healthz")) == {"GET", "HEAD"}
    # The sandbox prefix routes the same.
    assert allow(await client.put("/sandbox/v1/fleets/vehicles")) == {"GET", "HEAD", "POST"}
    body = (await client.put("/v1/fleets/vehicles")).json()
    assert body["errors"][0]["detail"] == "PUT is not allowed on /v1/fleets/vehicles"


async def test_head_is_get_without_the_body(embedded_client: httpx.AsyncClient) -> None:
    client = embedded_client
    for path in ("/healthz", "/readyz", "/", "/sandbox/"):
        get, head = await client.get(path), await client.head(path)
        assert head.status_code == get.status_code == 200, path
        assert head.content == b""
        assert head.headers["content-length"] == get.headers["content-length"]
        assert head.headers["content-type"] == get.headers["content-type"]
        assert head.headers["x-request-id"]
    # Errors too: the hot pull route without a token, an unknown path, a POST-only path.
    pull = await client.head(f"/v1/vehicle-data/autoapi-13/{VIN}")
    assert pull.status_code == 401 and pull.content == b""
    assert (await client.head("/v1/nowhere")).status_code == 404
    head_post = await client.head("/v1/eligibility")
    assert allow(head_post) == {"POST"}
    assert head_post.content == b""
    assert (await client.head("/v1/nowhere")).status_code == 404


async def test_head_on_a_stream_ends_at_once(client: httpx.AsyncClient, app: FastAPI) -> None:
    creds = await create_app_credentials(app.state.autoport.database)
    token = await client_credentials_token(client, creds)
    response = await client.head("/v1/stream", headers=bearer(token))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.content == b""


@pytest.mark.parametrize(
    "path", ["/sandbox/v1/eligibility", "/v1/eligibility", "/v1/fleets/vehicles"]
)
async def test_bodies_are_judged_after_the_token(
    client: httpx.AsyncClient, app: FastAPI, path: str
) -> None:
    json_type = {"Content-Type": "application/json"}
    no_token: list[httpx.Response] = [
        await client.post(path),
        await client.post(path, content=b"", headers=json_type),
        await client.post(path, content=b"{not json", headers=json_type),
        await client.post(path, content=b"vin=x", headers={"Content-Type": "text/plain"}),
    ]
    for response in no_token:
        assert response.status_code == 401, response.text
        assert response.json()["errors"][0]["source"] == "Authorization"
    environment = Environment.sandbox if path.startswith("/sandbox") else Environment.production
    creds = await create_app_credentials(app.state.autoport.database, environment=environment)
    headers = bearer(await client_credentials_token(client, creds))
    empty = await client.post(path, headers=headers)
    assert empty.status_code == 400, empty.text
    assert empty.json()["errors"][0]["title"] == "Missing body"
    empty_json = await client.post(path, content=b"", headers={**headers, **json_type})
    assert empty_json.status_code == 400, empty_json.text
    malformed = await client.post(path, content=b"{not json", headers={**headers, **json_type})
    assert malformed.status_code == 400
    assert malformed.json()["errors"][0]["title"] == "Malformed JSON"
    other = await client.post(
        path, content=b"vin=x", headers={**headers, "Content-Type": "text/plain"}
    )
    assert other.status_code == 415
    assert other.json()["errors"][0]["source"] == "Content-Type"


async def test_admin_json_routes_judge_bodies_after_the_admin_token(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    routes = ["/admin/v1/accounts", "/admin/v1/applications", "/admin/v1/sandbox/vehicles"]
    for path in routes:
        for content in (b"", b"{not json"):
            response = await client.post(
                path, content=content, headers={"Content-Type": "application/json"}
            )
            assert response.status_code == 401, (path, response.text)
    admin = {"Authorization": f"Bearer {rotate_admin_token(app.state.autoport.settings)}"}
    for path in ["/admin/v1/accounts", "/admin/v1/applications"]:
        empty = await client.post(path, headers=admin)
        assert empty.status_code == 400, (path, empty.text)
        assert empty.json()["request_id"] == empty.headers["x-request-id"]
        malformed = await client.post(
            path, content=b"[", headers={**admin, "Content-Type": "application/json"}
        )
        assert malformed.status_code == 400, (path, malformed.text)


def test_app_state_entries_are_plain_attributes_and_state_still_works() -> None:
    state = PlainAttributes()
    state.autoport = "the app's state"
    # Read as an ordinary attribute: State's __getattr__ is not involved.
    assert vars(state)["autoport"] == "the app's state"
    assert state["autoport"] == state.autoport
    assert getattr(state, "authenticator", None) is None  # what kit.auth relies on
    with pytest.raises(AttributeError):
        _ = state.missing
    del state.autoport
    assert getattr(state, "autoport", None) is None
