"""Attacks on the API documentation (`/docs`, its assets, `/openapi.json`).

- Clickjacking the Authorize dialog (where an operator pastes the admin token): the docs
  pages forbid framing and any script but the package's own files.
- Reading files through the asset route: only the listed Swagger UI files are served,
  whatever the name looks like.
- Secrets in the description: it is public, so the configured admin token, its hash and
  the token key never appear in it, in either environment.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock

ADMIN_TOKEN = "ap_admin_security-apidocs-secret"


@pytest.fixture
async def docs_client(
    sqlite_settings: Settings, clock: FrozenClock
) -> AsyncIterator[tuple[httpx.AsyncClient, Settings]]:
    settings = sqlite_settings.model_copy(update={"admin_token": SecretStr(ADMIN_TOKEN)})
    app = create_app(settings, clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            yield c, app.state.autoport.settings


@pytest.mark.parametrize("path", ["/docs", "/sandbox/docs", "/docs/oauth2-redirect"])
async def test_the_docs_pages_cannot_be_framed_nor_run_foreign_script(
    docs_client: tuple[httpx.AsyncClient, Settings], path: str
) -> None:
    client, _ = docs_client
    answer = await client.get(path)
    assert answer.status_code == 200
    directives = {
        name: value
        for name, _, value in (
            part.strip().partition(" ")
            for part in answer.headers["content-security-policy"].split(";")
        )
    }
    assert directives["frame-ancestors"] == "'none'"
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'none'"
    assert directives["base-uri"] == "'none'"
    assert answer.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "name",
    [
        "..%2Froutes.py",
        "%2e%2e%2f%2e%2e%2fconfig.py",
        "..%5c..%5cconfig.py",
        "swagger-ui%2F..%2F..%2Froutes.py",
        "LICENSE",
        "VENDORED.md",
        "swagger-ui-bundle.js.map",
        "index.html",
    ],
)
async def test_the_asset_route_serves_only_the_listed_files(
    docs_client: tuple[httpx.AsyncClient, Settings], name: str
) -> None:
    client, _ = docs_client
    answer = await client.get(f"/docs/{name}")
    assert answer.status_code == 404
    assert answer.json()["errors"][0]["title"] == "Not Found"


async def test_the_public_description_holds_no_secret(
    docs_client: tuple[httpx.AsyncClient, Settings],
) -> None:
    client, settings = docs_client
    secrets = [ADMIN_TOKEN, str(settings.admin_token_sha256)]
    if settings.token_hmac_key is not None:
        secrets.append(settings.token_hmac_key.get_secret_value())
    for path in ("/openapi.json", "/sandbox/openapi.json", "/docs", "/sandbox/docs"):
        text = (await client.get(path)).text
        for secret in secrets:
            assert secret not in text, path
