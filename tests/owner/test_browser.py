"""The owner portal in a real browser: Debian's Chromium driven by Playwright against a
real uvicorn server with its background workers (the webhook worker delivers to a real
local receiver). From a granted consent to the portal, the application and its last read,
the withdrawal, and its effects: the application's next pull answers 401 and its webhook
receiver gets `authorization_changed` `revoked`. Every page is checked with axe-core
(0 violations) and saved as a screenshot under test-artifacts/owner/ (gitignored)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import orjson
import pytest
from pydantic import SecretStr

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import Clock
from autoport.kit.db import Database, create_database
from autoport.kit.migrate import upgrade_sync
from tests.consent.conftest import METHODS, VIN, ConsentApp, insert_application, store_vehicle_data
from tests.factories import bearer, pkce_pair
from tests.helpers.browsers import axe_violations, chromium_browser
from tests.helpers.ports import bound_socket, port_of
from tests.helpers.servers import ApplicationCallback, uvicorn_in_thread

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "owner"
ADMIN = "ap_admin_owner-browser-test"


@dataclass
class Receiver:
    """The application's webhook receiver: every event body it was sent."""

    events: list[dict[str, Any]] = field(default_factory=list)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        events = self.events

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                events.append(orjson.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def wait_for(self, authorization_id: str, action: str, seconds: float = 20) -> dict[str, Any]:
        """The `authorization_changed` event of this grant with `action`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for body in list(self.events):
                event = body.get("event", {})
                if (
                    event.get("type") == "authorization_changed"
                    and event.get("authorization_id") == authorization_id
                    and event.get("action") == action
                ):
                    return body
            time.sleep(0.1)
        raise AssertionError(f"no authorization_changed {action} among {self.events}")


@dataclass
class Server:
    base: str
    callback: str
    hook: str
    database_url: str
    receiver: Receiver

    def run(self, coro_fn: Any) -> Any:
        async def go() -> Any:
            db = create_database(self.database_url)
            await db.connect()
            try:
                return await coro_fn(db)
            finally:
                await db.close()

        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, go()).result()

    def application(self) -> ConsentApp:
        async def make(db: Database) -> ConsentApp:
            return await insert_application(db, redirect_uris=(self.callback,))

        app: ConsentApp = self.run(make)
        answer = httpx.put(
            f"{self.base}/sandbox/admin/v1/applications/{app.id}/webhook",
            json={"url": self.hook},
            headers=bearer(ADMIN),
        )
        assert answer.status_code == 201, answer.text
        return app

    def exchange(self, app: ConsentApp, code: str, verifier: str) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.base}/sandbox/v1/access_tokens", data=app.token_request(code, verifier)
        )
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def pull(self, token: str) -> httpx.Response:
        return httpx.get(
            f"{self.base}/sandbox/v1/vehicle-data/autoapi-13/{VIN}", headers=bearer(token)
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("owner-browser")
    database_url = f"sqlite:///{data_dir / 'autoport.db'}"
    upgrade_sync(database_url)
    # Bound before the server starts (tests/helpers/servers.py).
    sock = bound_socket()
    port = port_of(sock)
    settings = Settings(
        data_dir=data_dir,
        port=port,
        access_log=False,
        admin_token=SecretStr(ADMIN),
        sandbox_demo=False,
        webhook_allow_loopback=True,
        sandbox_connector_verification_methods=METHODS,
    )
    # The real clock and the background workers: the webhook worker delivers.
    app = create_app(settings, clock=Clock(), run_background=True)
    receiver = Receiver()
    servers = [
        ThreadingHTTPServer(("127.0.0.1", 0), ApplicationCallback),
        ThreadingHTTPServer(("127.0.0.1", 0), receiver.handler()),
    ]
    for http_server in servers:
        threading.Thread(target=http_server.serve_forever, daemon=True).start()
    callback = f"http://127.0.0.1:{servers[0].server_address[1]}/callback"
    hook = f"http://127.0.0.1:{servers[1].server_address[1]}/hook"
    try:
        with uvicorn_in_thread(app, sock, stop_timeout=15, lifespan="on"):
            server = Server(f"http://127.0.0.1:{port}", callback, hook, database_url, receiver)
            server.run(lambda db: store_vehicle_data(db, now_us=Clock().now_us()))
            yield server
    finally:
        for http_server in servers:
            http_server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser(ARTIFACTS) as browser:
        yield browser


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    # No JavaScript at all: the portal must work without it.
    context = browser.new_context(
        locale="en-GB", viewport={"width": 1000, "height": 800}, java_script_enabled=False
    )
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    problems: list[str] = []

    def on_console(message: Any) -> None:
        url = str(message.location.get("url", ""))
        expected = "Failed to load resource" in message.text and not url.endswith(".css")
        if message.type == "error" and not expected:
            problems.append(f"{message.text} ({url})")

    tab.on("console", on_console)
    try:
        yield tab
        assert problems == []
    finally:
        context.close()


def check(browser: Any, page: Any, name: str) -> None:
    """Screenshot, then axe-core on the same HTML in a tab with JavaScript on (axe is a
    script; these pages are tested with it off): 0 violations."""
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    html = page.content()
    context = browser.new_context(locale="en-GB")
    try:
        tab = context.new_page()
        tab.route("**/*", lambda route: route.fulfill(body=html, content_type="text/html")
                  if route.request.resource_type == "document" else route.continue_())  # fmt: skip
        tab.goto(page.url)
        violations = axe_violations(tab)
    finally:
        context.close()
    assert violations == [], f"{name}: {violations}"


def consent(page: Any, server: Server, app: ConsentApp, verifier_challenge: tuple[str, str]) -> str:
    """The owner grants `app` access on the consent pages; returns the code."""
    _, challenge = verifier_challenge
    params = app.entry_params(vin=VIN, state="s", code_challenge=challenge, brand="sandbox")
    page.goto(f"{server.base}/sandbox/oauth/new?{urlencode(params)}")
    page.get_by_label("Sandbox", exact=True).check()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/oauth/consent/review")
    later = page.locator(".later")
    assert "owner portal" in later.inner_text()
    assert later.locator("a").get_attribute("href").endswith("/sandbox/owner")
    page.screenshot(path=str(ARTIFACTS / "consent-review-with-portal-link.png"), full_page=True)
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url(f"{server.callback}?*")
    return str(parse_qs(urlsplit(page.url).query)["code"][0])


TEXT = {
    "en-GB": {
        "sign_in": "See and withdraw who can read your vehicle's data",
        "carmaker": "Carmaker",
        "vin": "Vehicle identification number (VIN)",
        "continue": "Continue",
        "heading": "Who can access your vehicle's data",
        "withdraw": "Withdraw access of Fleet Tracker",
        "confirm": "Yes, withdraw",
        "done": "its access tokens no longer work",
        "never": "never",
    },
    "de-DE": {
        "sign_in": "Sehen und widerrufen, wer die Daten Ihres Fahrzeugs lesen darf",
        "carmaker": "Hersteller",
        "vin": "Fahrzeug-Identifizierungsnummer (FIN)",
        "continue": "Weiter",
        "heading": "Wer auf die Daten Ihres Fahrzeugs zugreifen darf",
        "withdraw": "Zugriff von Fleet Tracker widerrufen",
        "confirm": "Ja, widerrufen",
        "done": "Ihre Zugriffstoken gelten nicht mehr",
        "never": "nie",
    },
}


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_from_consent_to_withdrawal(server: Server, browser: Any, page: Any, locale: str) -> None:
    words = TEXT[locale]
    app = server.application()
    verifier, challenge = pkce_pair()
    code = consent(page, server, app, (verifier, challenge))
    tokens = server.exchange(app, code, verifier)
    assert server.pull(tokens["access_token"]).status_code == 200

    page.goto(f"{server.base}/sandbox/owner?lang={locale}")
    assert page.locator("h1").inner_text() == words["sign_in"]
    check(browser, page, f"{locale}-1-sign-in")
    page.get_by_label(words["carmaker"]).select_option("sandbox")
    page.get_by_label(words["vin"]).fill(VIN)
    page.get_by_role("button", name=words["continue"]).click()
    page.wait_for_url(f"**/sandbox/owner/vehicles/{VIN}")
    assert page.locator("h1").inner_text() == words["heading"]
    card = page.locator(".grant", has=page.get_by_role("link", name=words["withdraw"]))
    assert "Fleet Tracker" in card.inner_text()
    assert card.locator(".last-read").inner_text() not in ("", words["never"])
    assert card.locator(".read-count").inner_text() == "1"
    check(browser, page, f"{locale}-2-vehicle")

    card.get_by_role("link", name=words["withdraw"]).click()
    page.wait_for_url("**/withdraw?grant=*")
    check(browser, page, f"{locale}-3-confirm")
    page.get_by_role("button", name=words["confirm"]).click()
    page.wait_for_url("**?done=withdrawn")
    assert words["done"] in page.locator(".done").inner_text()
    check(browser, page, f"{locale}-4-withdrawn")

    refused = server.pull(tokens["access_token"])
    assert refused.status_code == 401, refused.text
    delivered = server.receiver.wait_for(tokens["authorization_id"], "revoked")
    assert delivered["vehicle"]["vin"] == VIN
    assert delivered["application"]["id"] == app.id


def test_vehicle_code_and_error_pages_are_accessible(
    server: Server, browser: Any, page: Any
) -> None:
    page.goto(f"{server.base}/sandbox/owner")
    page.get_by_label("Carmaker").select_option("bmw")
    page.get_by_label("Vehicle identification number (VIN)").fill(VIN)
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/sandbox/owner/verify")
    check(browser, page, "en-GB-5-vehicle-code")
    page.get_by_label("Code shown in your vehicle").fill("12")
    page.get_by_role("button", name="Confirm", exact=True).click()
    assert "more attempts" in page.locator(".error").inner_text()
    check(browser, page, "en-GB-6-wrong-code")
    page.goto(f"{server.base}/sandbox/owner/vehicles/SBXTEST0000000009")
    check(browser, page, "en-GB-7-not-signed-in")
    page.goto(f"{server.base}/sandbox/owner")
    page.get_by_label("Carmaker").select_option("ford")
    page.get_by_label("Vehicle identification number (VIN)").fill(VIN)
    page.get_by_role("button", name="Continue").click()
    assert "Ford" in page.locator("h1").inner_text()
    check(browser, page, "en-GB-8-owner-portal-brand")
    page.goto(f"{server.base}/sandbox/owner")
    page.get_by_role("button", name="Continue").click()
    assert page.locator("#form-error").is_visible()
    check(browser, page, "en-GB-9-form-problem")
