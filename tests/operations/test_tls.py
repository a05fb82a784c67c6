"""TLS behind a proxy: an https base URL gives Strict-Transport-Security on every answer
and Secure consent cookies; plain http gives neither; each environment by its own base
URL. X-Forwarded-* are believed from `forwarded_allow_ips` only."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.consent.conftest import consent_settings, insert_application
from tests.helpers.servers import serve_until_up

HTTPS = {
    "base_url": "https://autoport.example",
    "sandbox_base_url": "https://autoport.example/sandbox",
}


async def _app(settings: Settings, clock: FrozenClock, **update: object) -> AsyncIterator[FastAPI]:
    app = create_app(
        consent_settings(settings.model_copy(update=update)), clock=clock, run_background=False
    )
    async with app.router.lifespan_context(app):
        yield app


async def _entry(app: FastAPI, base: str) -> httpx.Response:
    db = app.state.autoport.database
    consent_app = await insert_application(db, environment=Environment.sandbox)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=base) as client:
        return await client.get(
            "/sandbox/oauth/new", params=consent_app.entry_params(brand="sandbox")
        )


async def test_https_gives_hsts_and_secure_cookies(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    async for app in _app(sqlite_settings, clock, **HTTPS):
        started = await _entry(app, "https://autoport.example")
        assert started.status_code == 303
        cookie = started.headers["set-cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie
        assert started.headers["strict-transport-security"] == "max-age=31536000"
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://autoport.example") as c:
            for path in ("/healthz", "/sandbox/healthz", "/no/such/path"):
                answer = await c.get(path)
                assert answer.headers["strict-transport-security"] == "max-age=31536000", path


async def test_plain_http_gives_neither(sqlite_settings: Settings, clock: FrozenClock) -> None:
    async for app in _app(sqlite_settings, clock):
        started = await _entry(app, "http://127.0.0.1:8080")
        assert started.status_code == 303
        assert "Secure" not in started.headers["set-cookie"]
        assert "strict-transport-security" not in started.headers


async def test_each_environment_by_its_own_base_url(
    sqlite_settings: Settings, clock: FrozenClock
) -> None:
    # Production behind TLS, the sandbox on a plain-http host of its own.
    async for app in _app(
        sqlite_settings,
        clock,
        base_url="https://autoport.example",
        sandbox_base_url="http://sandbox.internal:8080/sandbox",
    ):
        started = await _entry(app, "http://sandbox.internal:8080")
        assert "Secure" not in started.headers["set-cookie"]
        assert "strict-transport-security" not in started.headers
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://autoport.example") as c:
            assert "strict-transport-security" in (await c.get("/healthz")).headers


async def test_hsts_can_be_turned_off(sqlite_settings: Settings, clock: FrozenClock) -> None:
    async for app in _app(sqlite_settings, clock, hsts_max_age_seconds=0, **HTTPS):
        started = await _entry(app, "https://autoport.example")
        assert "Secure" in started.headers["set-cookie"]
        assert "strict-transport-security" not in started.headers


@pytest.mark.parametrize(("allowed", "believed"), [("127.0.0.1", True), ("10.9.9.9", False)])
def test_forwarded_headers_are_believed_from_allowed_proxies_only(
    tmp_path: Path, allowed: str, believed: bool
) -> None:
    """A real `autoport serve`: behind an allowed proxy each client is counted by its
    forwarded address (the token endpoint's per-address limit); from anyone else,
    X-Forwarded-For is ignored and every request counts as the connecting address."""
    process, base = serve_until_up(
        tmp_path,
        AUTOPORT_FORWARDED_ALLOW_IPS=allowed,
        AUTOPORT_OAUTH_TOKEN_IP_RATE_LIMIT="2/minute",
        AUTOPORT_SANDBOX_DEMO="false",
        path="/healthz",
    )
    try:

        def token_request(client_address: str) -> int:
            return httpx.post(
                f"{base}/v1/access_tokens",
                data={"grant_type": "client_credentials", "client_id": "x", "client_secret": "y"},
                headers={"X-Forwarded-For": client_address},
            ).status_code

        assert [token_request("203.0.113.7") for _ in range(3)][-1] == 429
        other = token_request("198.51.100.9")
        assert (other != 429) is believed, other
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
