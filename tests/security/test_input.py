"""Input hygiene attacks: control characters (NUL above all: PostgreSQL text cannot hold
it, which made lookups of such values a 500) on every input path, and oversized request
headers. Unauthenticated callers, on both backends; nothing is stored."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.config import rotate_admin_token
from autoport.kit.db import Database
from autoport.kit.jsonlimit import MAX_DEPTH
from tests.factories import create_app_credentials
from tests.helpers.servers import serve, wait_until_up


def db_of(app: FastAPI) -> Database:
    database: Database = app.state.autoport.database
    return database


def assert_refused(response: httpx.Response, source: str, *, oauth: bool = False) -> str:
    """A 400 naming the field, in the path's error shape; returns the detail."""
    assert response.status_code == 400, response.text
    body = response.json()
    if oauth:
        assert body["error"] == "invalid_request"
        assert response.headers["cache-control"] == "no-store"
        detail = str(body["error_description"])
    else:
        assert body["request_id"] == response.headers["x-request-id"]
        (item,) = body["errors"]
        assert item["source"] == source
        detail = str(item["detail"])
    assert source in detail and "control character" in detail
    return detail


async def count(app: FastAPI, table: str) -> int:
    return int(await db_of(app).fetch_value(f"SELECT count(*) FROM {table}"))  # noqa: S608


@pytest.mark.parametrize("prefix", ["", "/sandbox"])
async def test_nul_in_client_id_at_the_token_endpoint(
    client: httpx.AsyncClient, prefix: str
) -> None:
    path = f"{prefix}/v1/access_tokens"
    form = await client.post(path, data={"grant_type": "client_credentials", "client_id": "a\0b"})
    assert "U+0000" in assert_refused(form, "client_id", oauth=True)
    raw_json = b'{"grant_type": "client_credentials", "client_id": "a\\u0000b"}'
    as_json = await client.post(
        path, content=raw_json, headers={"Content-Type": "application/json"}
    )
    assert_refused(as_json, "client_id", oauth=True)
    # HTTP Basic carries the client_id base64-encoded (and form-encoded inside): no
    # control character shows in the header, the decoded value is checked all the same.
    for client_id in ("a\0b", "a%00b"):
        basic = await client.post(
            path, data={"grant_type": "client_credentials"}, auth=(client_id, "secret")
        )
        assert_refused(basic, "Authorization", oauth=True)
    # Other control characters too, in any field, and in the query string.
    bell = await client.post(path, data={"grant_type": "client_credentials", "scope": "x\x07"})
    assert "U+0007" in assert_refused(bell, "scope", oauth=True)
    query = await client.post(f"{path}?client_id=%00", data={"grant_type": "client_credentials"})
    assert_refused(query, "client_id", oauth=True)


@pytest.mark.parametrize("prefix", ["", "/sandbox"])
async def test_nul_at_the_consent_entry(
    client: httpx.AsyncClient, app: FastAPI, prefix: str
) -> None:
    creds = await create_app_credentials(db_of(app))
    params = {
        "client_id": creds.client_id,
        "redirect_uri": creds.redirect_uri,
        "response_type": "code",
        "scope": "charging.battery_level",
        "state": "s",
    }
    sessions = await count(app, "consent_sessions")
    for name in ("client_id", "redirect_uri", "state", "scope"):
        response = await client.get(f"{prefix}/oauth/new", params={**params, name: "x\0y"})
        assert_refused(response, name)
    # A line feed has no place in a query either (header and log forging).
    response = await client.get(f"{prefix}/oauth/new", params={**params, "state": "a\r\nb"})
    assert_refused(response, "state")
    assert await count(app, "consent_sessions") == sessions


async def test_nul_in_admin_json_routes(client: httpx.AsyncClient, app: FastAPI) -> None:
    accounts = await count(app, "accounts")
    # Unauthenticated: refused before anything else is looked at.
    response = await client.post("/admin/v1/accounts", json={"name": "evil\0name"})
    assert_refused(response, "name")
    # With the admin token too, and nested fields are named by their path.
    token = rotate_admin_token(app.state.autoport.settings)
    admin = {"Authorization": f"Bearer {token}"}
    response = await client.post("/admin/v1/accounts", json={"name": "evil\0name"}, headers=admin)
    assert_refused(response, "name")
    creds = await create_app_credentials(db_of(app))
    response = await client.patch(
        f"/admin/v1/applications/{creds.app_id}",
        json={"redirect_uris": ["https://ok.example/cb", "https://x.example/\u0000"]},
        headers=admin,
    )
    assert_refused(response, "redirect_uris[1]")
    response = await client.post(
        "/admin/v1/sandbox/vehicles", json={"vin": "\x7f" * 17}, headers=admin
    )
    assert "U+007F" in assert_refused(response, "vin")
    # In a path segment as well.
    response = await client.get("/admin/v1/applications/app%00x", headers=admin)
    assert_refused(response, "path")
    assert await count(app, "accounts") == accounts + 1  # only the factory's account
    # A clean request still works.
    response = await client.post("/admin/v1/accounts", json={"name": "fine"}, headers=admin)
    assert response.status_code == 201, response.text


async def test_nul_in_the_ingest_route(client: httpx.AsyncClient) -> None:
    body = {"vin": "1HGCM82633A00435\u0000", "charging": {"battery_level": 0.5}}
    response = await client.post(
        "/v1/ingest", json={"vehicles": [body]}, headers={"Authorization": "Bearer whatever"}
    )
    assert_refused(response, "vehicles[0].vin")
    response = await client.post("/v1/ingest", json=[{"vin": "x", "brand\u0001": "y"}])
    assert_refused(response, "[0].brand?")
    # A document at the nesting limit is walked (without recursion); a deeper one is
    # refused for its depth first (kit.jsonlimit, tests/security/test_json_depth.py).
    deep = b"[" * MAX_DEPTH + b'"\\u0001"' + b"]" * MAX_DEPTH
    response = await client.post(
        "/v1/ingest", content=deep, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["source"].endswith("[0][0]")
    deeper = b"[" * 1000 + b'"\\u0001"' + b"]" * 1000
    response = await client.post(
        "/v1/ingest", content=deeper, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["source"] == "body"


async def test_control_characters_in_headers_and_pull_path(client: httpx.AsyncClient) -> None:
    # Real HTTP parsers refuse most of these already; the check holds behind any server.
    response = await client.get(
        "/v1/vehicle-data/autoapi-13/1HGCM82633A004352",
        headers=[(b"Authorization", b"Bearer abc\x00def")],
    )
    assert_refused(response, "Authorization")
    response = await client.get("/v1/vehicle-data/autoapi-13/1HGCM82633A00435%00")
    assert_refused(response, "path")
    response = await client.get(
        "/v1/vehicle-data/autoapi-13/1HGCM82633A004352/history", params={"property": "a\x1bb"}
    )
    assert_refused(response, "property")


async def test_harmless_spellings_pass(client: httpx.AsyncClient) -> None:
    # Tab, line feed and carriage return are text in a body; an escaped backslash before
    # "u0000" is no NUL; "%00" inside a JSON string is no NUL either. These reach the route
    # and get its usual answer.
    for content in (
        b'{"grant_type": "client_credentials", "client_id": "a\\nb\\tc"}',
        b'{"grant_type": "client_credentials", "client_id": "a\\\\u0000b"}',
        b'{"grant_type": "client_credentials", "client_id": "a%00b"}',
    ):
        response = await client.post(
            "/v1/access_tokens", content=content, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 401, response.text
        assert response.json()["error"] == "invalid_client"


async def test_oversized_headers_are_refused_by_the_app(client: httpx.AsyncClient) -> None:
    big = {"X-Padding": "a" * 70_000}
    response = await client.get("/healthz", headers=big)
    assert response.status_code == 431
    assert "headers" in response.json()["errors"][0]["detail"]
    response = await client.post("/v1/access_tokens", headers=big, data={"grant_type": "x"})
    assert response.status_code == 431
    assert response.json()["error"] == "invalid_request"
    fits = {"X-Padding": "a" * 30_000}  # the size of a fleet filter of 1000 VINs
    assert (await client.get("/healthz", headers=fits)).status_code == 200


def _raw_request(port: int, header_bytes: int) -> bytes:
    """Send a GET with about `header_bytes` of headers, then read the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        line = b"X-Padding: " + b"a" * 4000 + b"\r\n"
        sent = 0
        try:
            while sent < header_bytes:
                sock.sendall(line)
                sent += len(line)
            sock.sendall(b"\r\n")
        except OSError:
            pass  # the server closed the connection while we were still sending
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and (b"431" in answer[:20] or b"200" in answer[:20]):
                break
        return answer


def test_the_server_stops_reading_oversized_headers(tmp_path: Path) -> None:
    # The uvicorn server `autoport serve` starts: a megabyte of headers is cut off at
    # the limit with 431 and the connection closed; normal requests go on.
    process, base = serve(tmp_path, AUTOPORT_SANDBOX_DEMO="false")
    port = int(base.rsplit(":", 1)[1])
    try:
        wait_until_up(f"{base}/healthz", process)
        started = time.monotonic()
        answer = _raw_request(port, 1024 * 1024)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        body = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert "headers" in body["errors"][0]["detail"]
        assert time.monotonic() - started < 10
        assert _raw_request(port, 30_000).startswith(b"HTTP/1.1 200 ")
        assert httpx.get(f"{base}/healthz").status_code == 200
    finally:
        process.terminate()
        process.communicate(timeout=20)
