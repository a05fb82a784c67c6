"""The admin token guard and the Caller contract."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.auth import AdminDep
from autoport.kit.routing import api_router, json_response

probe = api_router()


@probe.get("/admin/probe")
async def admin_probe(_: AdminDep) -> object:
    return json_response({"ok": True})


@pytest.fixture
async def admin_client(sqlite_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    settings = sqlite_settings.model_copy(update={"admin_token": SecretStr("correct-admin-token")})
    app = create_app(settings, run_background=False)
    app.include_router(probe)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            yield client


async def test_admin_token_accepted(admin_client: httpx.AsyncClient) -> None:
    response = await admin_client.get(
        "/admin/probe", headers={"authorization": "Bearer correct-admin-token"}
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "header", [None, "Bearer", "Basic Y29ycmVjdA==", "Bearer wrong-admin-token"]
)
async def test_admin_token_refused(admin_client: httpx.AsyncClient, header: str | None) -> None:
    headers = {"authorization": header} if header else {}
    response = await admin_client.get("/admin/probe", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["errors"][0]["source"] == "Authorization"
