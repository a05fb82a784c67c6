"""Hostile redirect URIs (both backends, and Chromium): a host that smuggles CSP
directives, spaces, quotes, bad IDNA or user information is refused at registration with
a 422 naming the field; the review page's policy is built from the parsed origin, so a
URI registered before the check can no longer get the Approve page framed; a bare
private scheme is only a public client's own."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from tests.consent.conftest import REDIRECT_URI, consent_settings, insert_application
from tests.consent.flow import PAGES, start, walk_to_review

ADMIN = {"authorization": "Bearer test-admin-token"}
HOSTILE = "https://app.example.com;frame-ancestors *;/cb"


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    settings = consent_settings(settings, admin_token=SecretStr("test-admin-token"))
    application = create_app(settings, clock=clock, run_background=False)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def browser_client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
    ) as client:
        yield client


def database_of(app: FastAPI) -> Database:
    database: Database = app.state.autoport.database
    return database


async def register(client: httpx.AsyncClient, *uris: str, **body: object) -> httpx.Response:
    payload = {
        "name": "Hostile app",
        "redirect_uris": list(uris),
        "properties": ["charging.battery_level"],
        "brands": ["bmw"],  # a production application: the sandbox brand is not one
        **body,
    }
    return await client.post("/admin/v1/applications", json=payload, headers=ADMIN)


async def nothing_registered(client: httpx.AsyncClient) -> None:
    listed = (await client.get("/admin/v1/applications", headers=ADMIN)).json()
    assert listed["applications"] == []


# ------------------------------------------------------------ refused at registration


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        (HOSTILE, "space"),
        ("https://app.example.com;frame-ancestors%20*;/cb", "host is not a DNS name"),
        ("https://app.example.com;/cb", "host is not a DNS name"),
        ("https://app.example.com /cb", "space"),
        ("https://app.example.com/c b", "space"),
        (" https://app.example.com/cb", "space"),
        ('https://app.example.com"/cb', "'\"'"),
        ("https://app.example.com'/cb", "host is not a DNS name"),
        ("https://app.example.com/cb\t", "'\\t'"),
        ("https://app.example.com/cb\nSet-Cookie:x", "'\\n'"),
        ("https://app.example.com/<script>", "'<'"),
        ("https://app.example.com\\@evil.example/cb", "'\\\\'"),
        ("https://xn--zz.example/cb", "not valid IDNA"),
        ("https://xn--a.example/cb", "not valid IDNA"),
        ("https://bücher.example/cb", "ASCII form (xn--bcher-kva.example)"),
        ("https://аpple.com/cb", "ASCII form"),  # Cyrillic а
        ("https://-app.example.com/cb", "host is not a DNS name"),
        ("https://app..example.com/cb", "host is not a DNS name"),
        ("https://app_1.example.com/cb", "host is not a DNS name"),
        ("https://1.2.3.999/cb", "numeric label"),
        ("https://user:pass@app.example.com/cb", "user information"),
        ("https://app.example.com@evil.example/cb", "user information"),
        ("https://app.example.com:99999/cb", "invalid port"),
        ("https://app.example.com:0/cb", "port 0"),
        ("https://app.example.com/%zz", "percent-encoding"),
        ("https:///cb", "needs a host"),
        ("https://app.example.com/cb#frag", "without a fragment"),
    ],
)
async def test_hostile_redirect_uris_are_refused_naming_the_field(
    client: httpx.AsyncClient, uri: str, words: str
) -> None:
    response = await register(client, "https://fine.example.com/cb", uri)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["source"] == "redirect_uris[1]"
    assert words in error["detail"], error["detail"]
    await nothing_registered(client)


async def test_hostile_redirect_uris_are_refused_by_patch_too(client: httpx.AsyncClient) -> None:
    created = await register(client, "https://fine.example.com/cb")
    assert created.status_code == 201, created.text
    path = f"/admin/v1/applications/{created.json()['app_id']}"
    refused = await client.patch(path, json={"redirect_uris": [HOSTILE]}, headers=ADMIN)
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["source"] == "redirect_uris[0]"
    shown = (await client.get(path, headers=ADMIN)).json()
    assert shown["redirect_uris"] == ["https://fine.example.com/cb"]


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example.com/cb",
        "https://xn--bcher-kva.example/cb",
        "https://app.example.com:8443/cb;v=1?x='a'&y=%20",
        "https://192.0.2.10/cb",
        "https://[2001:db8::1]:8443/cb",
        "http://127.0.0.1:9000/cb",
        "http://[::1]/cb",
        "http://localhost/cb",
    ],
)
async def test_strictly_valid_redirect_uris_still_register(
    client: httpx.AsyncClient, uri: str
) -> None:
    response = await register(client, uri)
    assert response.status_code == 201, response.text
    assert response.json()["redirect_uris"] == [uri]


# ------------------------------------------------- the review page's policy, the entry


async def legacy_uri(db: Database, app_id: str, *uris: str) -> None:
    """What an application registered before the check may still hold."""
    await db.execute(
        "UPDATE applications SET redirect_uris = :uris WHERE id = :id",
        {"uris": orjson.dumps(list(uris)).decode(), "id": app_id},
    )


async def test_a_legacy_hostile_uri_opens_no_consent(
    app: FastAPI, browser_client: httpx.AsyncClient
) -> None:
    db = database_of(app)
    consent = await insert_application(db)
    await legacy_uri(db, consent.id, REDIRECT_URI, HOSTILE)
    consent.redirect_uri = HOSTILE
    response = await start(browser_client, consent, brand="sandbox")
    assert response.status_code == 400
    assert "location" not in response.headers
    assert "Invalid return address" in response.text
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_sessions") == 0


async def test_review_policy_names_the_parsed_origin_only(
    app: FastAPI, browser_client: httpx.AsyncClient
) -> None:
    db = database_of(app)
    consent = await insert_application(db, redirect_uris=("https://App.Example.COM:443/cb?x=1",))
    await walk_to_review(browser_client, consent)
    review = await browser_client.get(f"{PAGES}/review")
    policy = review.headers["content-security-policy"]
    assert "form-action 'self' https://app.example.com;" in policy
    assert policy.count("frame-ancestors") == 1 and "frame-ancestors 'none'" in policy
    # A session opened before the check with a hostile URI: its origin is left out, the
    # policy keeps its own directives.
    await db.execute("UPDATE consent_sessions SET redirect_uri = :uri", {"uri": HOSTILE})
    review = await browser_client.get(f"{PAGES}/review")
    policy = review.headers["content-security-policy"]
    assert "form-action 'self';" in policy
    assert policy.count("frame-ancestors") == 1 and "frame-ancestors 'none'" in policy
    assert "*" not in policy


# ------------------------------------------------------------- bare private schemes


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"client_type": "confidential", "url_scheme": "com.example.app123"}, "public clients"),
        ({"client_type": "public"}, "url_scheme (none set)"),
        ({"client_type": "public", "url_scheme": "com.other.app"}, "url_scheme (com.other.app)"),
    ],
)
async def test_a_bare_scheme_is_only_a_public_clients_own_url_scheme(
    client: httpx.AsyncClient, body: dict[str, str], words: str
) -> None:
    response = await register(client, "com.example.app123", **body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["source"] == "redirect_uris[0]" and words in error["detail"]
    await nothing_registered(client)


async def test_a_bare_scheme_without_a_dot_is_refused(client: httpx.AsyncClient) -> None:
    response = await register(client, "myapp", client_type="public", url_scheme="myapp")
    assert response.status_code == 422
    assert "reverse domain name" in response.json()["errors"][0]["detail"]


# ------------------------------------------------------------------------- Chromium


class _Framer(BaseHTTPRequestHandler):
    """The attacker's page: same site as the service (another loopback port, so the
    owner's SameSite=Lax cookie goes along), framing the Approve page."""

    target = ""

    def do_GET(self) -> None:
        body = (
            "<!doctype html><title>Win a prize</title><h1>Click the big button</h1>"
            f'<iframe name="victim" src="{self.target}" width="900" height="700"></iframe>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def framer() -> Iterator[tuple[str, type[_Framer]]]:
    handler = type("Framer", (_Framer,), {})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", handler
    finally:
        httpd.shutdown()


@pytest.mark.browser
def test_chromium_does_not_frame_the_approve_page_for_a_hostile_uri(
    server: Any,  # noqa: F811 - the fixture imported below
    browser: Any,  # noqa: F811 - the fixture imported below
    framer: tuple[str, type[_Framer]],
) -> None:
    from tests.consent.test_browser import VIN  # type: ignore[attr-defined]

    consent = server.application()

    async def legacy(db: Database) -> None:
        await legacy_uri(db, consent.id, server.callback, HOSTILE)

    server.run(legacy)
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    refusals: list[str] = []
    context.on("console", lambda message: refusals.append(message.text))
    try:
        tab = context.new_page()
        tab.set_default_timeout(10_000)
        # The hostile URI itself opens no consent.
        consent.redirect_uri = HOSTILE
        tab.goto(server.entry_url(consent, brand="sandbox", vin=VIN))
        assert tab.locator("h1").inner_text() == "Invalid return address"
        # A consent opened with the registered callback, then (as if opened before the
        # check) pointing at the hostile URI, reaches the Approve page.
        consent.redirect_uri = server.callback
        tab.goto(server.entry_url(consent, brand="sandbox", vin=VIN))
        tab.get_by_role("button", name="Continue").click()
        tab.get_by_role("button", name="Continue").click()
        tab.wait_for_url("**/oauth/consent/review")

        async def point_at_hostile(db: Database) -> None:
            await db.execute("UPDATE consent_sessions SET redirect_uri = :u", {"u": HOSTILE})

        server.run(point_at_hostile)
        tab.reload()
        assert tab.get_by_role("button", name="Approve").is_visible()
        # The attacker's page frames it: Chromium must refuse.
        url, handler = framer
        handler.target = tab.url
        tab.goto(url)
        tab.wait_for_load_state("load")
        frame = tab.frame(name="victim")
        assert frame is not None
        assert frame.locator("button", has_text="Approve").count() == 0
        assert any("frame-ancestors 'none'" in text for text in refusals), refusals
    finally:
        context.close()


# The Chromium test runs against the consent browser tests' server and browser.
from tests.consent.test_browser import browser, server  # noqa: E402, F401
