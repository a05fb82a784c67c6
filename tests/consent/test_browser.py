"""The consent pages in a real browser: Debian's Chromium driven by Playwright against a
real uvicorn server on a loopback port, through the whole flow for each verification
method in both languages, and the error paths. Each page is saved as a screenshot under
test-artifacts/consent/ (gitignored).

The flow ends at the application's redirect URI, here a small HTTP server of its own on
another port (so the CSP's form-action must allow the application's origin), with a code
that the application exchanges (PKCE) at the token endpoint; the token then reads the
vehicle's data. An owner_portal grant reads nothing until the carmaker's approval arrives
(`autoport consent approve` in one language, the admin API in the other).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import orjson
import pytest

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from autoport.proof.service import current_vehicle_code
from tests.factories import bearer, pkce_pair
from tests.helpers.browsers import chromium_browser
from tests.helpers.ports import bound_socket, port_of
from tests.helpers.servers import ApplicationCallback, uvicorn_in_thread

from .conftest import (
    BATTERY_LEVEL,
    METHODS,
    VIN,
    ConsentApp,
    insert_application,
    store_vehicle_data,
)

pytestmark = pytest.mark.browser

ADMIN_TOKEN = "ap_admin_consent-browser-test"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "consent"


@dataclass
class Server:
    base: str
    callback: str
    database_url: str
    data_dir: Path
    clock: FrozenClock

    def run(self, coro_fn: Any) -> Any:
        async def go() -> Any:
            db = create_database(self.database_url)
            await db.connect()
            try:
                return await coro_fn(db)
            finally:
                await db.close()

        # Playwright's sync API keeps an event loop in this thread: use another one.
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, go()).result()

    def application(self, **kwargs: Any) -> ConsentApp:
        async def make(db: Database) -> ConsentApp:
            return await insert_application(db, redirect_uris=(self.callback,), **kwargs)

        app: ConsentApp = self.run(make)
        return app

    def entry_url(self, app: ConsentApp, **params: str) -> str:
        return f"{self.base}/sandbox/oauth/new?{urlencode(app.entry_params(**params))}"

    def vehicle_code(self) -> str:
        async def read(db: Database) -> str | None:
            return await current_vehicle_code(
                db.reader, environment=Environment.sandbox, vin=VIN, now_us=self.clock.now_us()
            )

        code = self.run(read)
        assert code is not None
        return str(code)

    def grants(self) -> list[dict[str, Any]]:
        async def read(db: Database) -> list[dict[str, Any]]:
            rows = await db.fetch_all("SELECT id, status, brand, subject FROM authorizations")
            return [
                {"id": r["id"], "status": r["status"], "brand": r["brand"], "subject": r["subject"]}
                for r in rows
            ]

        result: list[dict[str, Any]] = self.run(read)
        return result

    def authorization_events(self, authorization_id: str) -> list[dict[str, Any]]:
        async def read(db: Database) -> list[dict[str, Any]]:
            rows = await db.fetch_all(
                "SELECT payload, vin FROM outbox WHERE event_type = 'authorization_changed' "
                "AND consumer = 'webhooks'"
            )
            return [
                {**orjson.loads(row["payload"]), "vin": row["vin"]}
                for row in rows
                if orjson.loads(row["payload"])["authorization_id"] == authorization_id
            ]

        result: list[dict[str, Any]] = self.run(read)
        return result

    def exchange(self, app: ConsentApp, code: str, verifier: str) -> dict[str, Any]:
        """The application's back channel: the code for tokens (PKCE) over real HTTP."""
        answer = httpx.post(
            f"{self.base}/sandbox/v1/access_tokens", data=app.token_request(code, verifier)
        )
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def read_data(self, access_token: str) -> httpx.Response:
        return httpx.get(
            f"{self.base}/sandbox/v1/vehicle-data/autoapi-13/{VIN}", headers=bearer(access_token)
        )

    def approve_with_cli(self, authorization_id: str) -> str:
        """What the carmaker side does in the sandbox: `autoport consent approve`."""
        env = {**os.environ, "AUTOPORT_DATA_DIR": str(self.data_dir)}
        done = subprocess.run(
            [sys.executable, "-m", "autoport", "consent", "approve", authorization_id, "--sandbox"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def approve_with_admin_api(self, authorization_id: str) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.base}/sandbox/admin/v1/consent/authorizations/{authorization_id}/approve",
            headers=bearer(ADMIN_TOKEN),
        )
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("consent-browser")
    database_url = f"sqlite:///{data_dir / 'autoport.db'}"
    upgrade_sync(database_url)
    # Bound before the server starts: another xdist worker cannot take the port between
    # choosing it and uvicorn binding it (tests/helpers/servers.py).
    sock = bound_socket()
    port = port_of(sock)
    settings = Settings(
        data_dir=data_dir,
        port=port,
        access_log=False,
        admin_token=ADMIN_TOKEN,
        sandbox_connector_verification_methods=METHODS,
    )
    clock = FrozenClock()
    app = create_app(settings, clock=clock, run_background=False)
    callback_server = ThreadingHTTPServer(("127.0.0.1", 0), ApplicationCallback)
    callback_thread = threading.Thread(target=callback_server.serve_forever, daemon=True)
    callback_thread.start()
    callback = f"http://127.0.0.1:{callback_server.server_address[1]}/callback"
    try:
        with uvicorn_in_thread(app, sock, lifespan="on"):
            server = Server(f"http://127.0.0.1:{port}", callback, database_url, data_dir, clock)

            async def ingest(db: Database) -> None:
                await store_vehicle_data(db, now_us=clock.now_us())

            server.run(ingest)
            yield server
    finally:
        callback_server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser(ARTIFACTS) as browser:
        yield browser


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    locale = getattr(request, "param", None) or "en-GB"
    context = browser.new_context(locale=locale, viewport={"width": 1000, "height": 800})
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    # A CSP violation, a failed stylesheet or any other console error fails the test.
    # (Error pages answer 4xx on purpose; Chromium logs that for the document itself.)
    problems: list[str] = []

    def on_console(message: Any) -> None:
        url = str(message.location.get("url", ""))
        expected = "Failed to load resource" in message.text and not url.endswith(".css")
        if message.type == "error" and not expected:
            problems.append(f"{message.text} ({url})")

    tab.on("console", on_console)
    tab.on("pageerror", lambda error: problems.append(str(error)))
    try:
        yield tab
        assert problems == []
    finally:
        context.close()


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


def back_at_application(page: Any, server: Server) -> dict[str, str]:
    page.wait_for_url(f"{server.callback}?*")
    assert page.locator("h1").inner_text() == "Back at the application"
    return query(page.url)


def expect_heading(page: Any, text: str) -> None:
    heading = page.locator("h1")
    assert heading.inner_text() == text, heading.inner_text()


BRAND_NAMES = {
    "sandbox": "Sandbox",
    "bmw": "BMW",
    "mercedes_benz": "Mercedes-Benz",
    "ford": "Ford",
}
TEXT = {
    "en-GB": {
        "brand": "Which carmaker built your vehicle?",
        "vehicle": "Enter your vehicle identification number",
        "verify": "Confirm that the vehicle is yours",
        "continue": "Continue",
        "confirm": "Confirm",
        "approve": "Approve",
        "deny": "Deny",
        "vin": "Vehicle identification number (VIN)",
        "code": "Code shown in your vehicle",
        "sign_in": "Sign in with {brand}",
        "items": "The application asks for 4 data items:",
        "pending": "owner portal",
        "battery": "Battery level",
    },
    "de-DE": {
        "brand": "Von welchem Hersteller ist Ihr Fahrzeug?",
        "vehicle": "Geben Sie die Fahrzeug-Identifizierungsnummer ein",
        "verify": "Bestätigen Sie, dass das Fahrzeug Ihnen gehört",
        "continue": "Weiter",
        "confirm": "Bestätigen",
        "approve": "Zustimmen",
        "deny": "Ablehnen",
        "vin": "Fahrzeug-Identifizierungsnummer (FIN)",
        "code": "Im Fahrzeug angezeigter Code",
        "sign_in": "Mit {brand} anmelden",
        "items": "Die Anwendung bittet um 4 Datenpunkte:",
        "pending": "Kundenportal",
        "battery": "Batterie",
    },
}


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
@pytest.mark.parametrize("brand", ["sandbox", "bmw", "mercedes_benz", "ford"])
def test_owner_consents_with_each_verification_method(
    server: Server, page: Any, brand: str, locale: str
) -> None:
    method = METHODS[brand]
    words = TEXT[locale]
    name = f"{method}-{locale}"
    app = server.application()
    verifier, challenge = pkce_pair()
    # English comes from the browser's default; German through the page's switch.
    page.goto(server.entry_url(app, vin=VIN, state=f"s-{name}", code_challenge=challenge))
    expect_heading(page, TEXT["en-GB"]["brand"])
    if locale == "de-DE":
        page.get_by_role("link", name="Deutsch").click()
        expect_heading(page, words["brand"])
    assert page.locator("html").get_attribute("lang") == locale
    shot(page, f"{name}-1-brand")
    page.get_by_label(BRAND_NAMES[brand], exact=True).check()
    page.get_by_role("button", name=words["continue"]).click()

    expect_heading(page, words["vehicle"])
    assert page.get_by_label(words["vin"]).input_value() == VIN  # pre-filled
    shot(page, f"{name}-2-vehicle")
    page.get_by_role("button", name=words["continue"]).click()

    if method == "vehicle_code":
        expect_heading(page, words["verify"])
        shot(page, f"{name}-3-verify")
        page.get_by_label(words["code"]).fill(server.vehicle_code())
        page.get_by_role("button", name=words["confirm"], exact=True).click()
    elif method == "oem_login":
        expect_heading(page, words["verify"])
        shot(page, f"{name}-3-verify")
        page.get_by_role("button", name=words["sign_in"].format(brand=BRAND_NAMES[brand])).click()
        page.wait_for_url("**/oauth/oem/mercedes_benz/login?state=*")
        shot(page, f"{name}-3b-carmaker-login")
        page.locator("#email").fill("owner@example.com")
        page.locator("#password").fill("sandbox")
        page.locator("button[type=submit]").click()

    page.wait_for_url("**/oauth/consent/review")
    assert words["items"] in page.content()
    assert words["battery"] in page.locator(".groups").inner_text()
    assert VIN in page.locator(".summary").inner_text()
    if method == "owner_portal":
        assert words["pending"] in page.locator(".note").inner_text()
    shot(page, f"{name}-4-review")
    page.get_by_role("button", name=words["approve"]).click()

    received = back_at_application(page, server)
    assert received["state"] == f"s-{name}"
    tokens = server.exchange(app, received["code"], verifier)
    grant = next(g for g in server.grants() if g["id"] == tokens["authorization_id"])
    assert grant["brand"] == brand
    if method == "owner_portal":
        assert grant["status"] == tokens["status"] == "pending"
        waiting = server.read_data(tokens["access_token"])
        assert waiting.status_code == 403
        assert "pending" in waiting.json()["errors"][0]["detail"]
        assert server.authorization_events(grant["id"]) == []
        if locale == "de-DE":
            said = server.approve_with_cli(grant["id"])
            assert f"authorization {grant['id']} is now approved" in said
        else:
            assert server.approve_with_admin_api(grant["id"])["status"] == "approved"
        [event] = server.authorization_events(grant["id"])
        assert event["action"] == "approved" and event["vin"] == VIN
    else:
        assert grant["status"] == tokens["status"] == "approved"
    data = server.read_data(tokens["access_token"])
    assert data.status_code == 200, data.text
    assert data.json()["vin"] == VIN
    assert data.json()["charging"]["battery_level"]["data"] == BATTERY_LEVEL


def test_language_follows_accept_language(server: Server, browser: Any) -> None:
    context = browser.new_context(locale="de-DE")
    try:
        tab = context.new_page()
        tab.goto(server.entry_url(server.application(), brand="sandbox"))
        expect_heading(tab, TEXT["de-DE"]["brand"])
        tab.get_by_role("link", name="English").click()
        expect_heading(tab, TEXT["en-GB"]["brand"])
    finally:
        context.close()


def test_owner_denies(server: Server, page: Any) -> None:
    app = server.application()
    page.goto(server.entry_url(app, brand="sandbox", vin=VIN, state="deny-me"))
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Deny").click()
    received = back_at_application(page, server)
    assert received["error"] == "access_denied"
    assert received["state"] == "deny-me"
    assert "code" not in received


def test_bad_vin_gets_a_clear_message(server: Server, page: Any) -> None:
    page.goto(server.entry_url(server.application(), brand="sandbox"))
    page.get_by_role("button", name="Continue").click()
    field = page.get_by_label("Vehicle identification number (VIN)")
    field.fill("WBA1234")
    page.get_by_role("button", name="Continue").click()
    alert = page.get_by_role("alert")
    assert alert.inner_text() == "A VIN has 17 characters; you entered 7."
    assert field.get_attribute("aria-invalid") == "true"
    assert field.input_value() == "WBA1234"
    shot(page, "error-bad-vin")
    field.fill("WBAQ2345678901234")
    page.get_by_role("button", name="Continue").click()
    assert "I, O or Q" in page.get_by_role("alert").inner_text()


def test_wrong_vehicle_code_then_lockout(server: Server, page: Any) -> None:
    page.goto(server.entry_url(server.application(), brand="bmw", vin=VIN))
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Continue").click()
    right = server.vehicle_code()
    wrong = f"{(int(right) + 1) % 1_000_000:06d}"
    for left in ("4 more attempts", "3 more attempts", "2 more attempts", "1 more attempt."):
        page.get_by_label("Code shown in your vehicle").fill(wrong)
        page.get_by_role("button", name="Confirm", exact=True).click()
        assert left in page.get_by_role("alert").inner_text()
        if left.startswith("4"):
            shot(page, "error-wrong-vehicle-code")
    page.get_by_label("Code shown in your vehicle").fill(wrong)
    page.get_by_role("button", name="Confirm", exact=True).click()
    assert "Too many wrong codes" in page.get_by_role("alert").inner_text()
    assert page.get_by_label("Code shown in your vehicle").count() == 0
    shot(page, "error-vehicle-code-lockout")
    # Let the lockout pass for the other tests of this module (same VIN).
    server.clock.advance(901)


def test_expired_session(server: Server, page: Any) -> None:
    page.goto(server.entry_url(server.application(), brand="sandbox", vin=VIN))
    server.clock.advance(901)
    page.get_by_role("button", name="Continue").click()
    expect_heading(page, "Your session has expired")
    shot(page, "error-expired-session")


def test_missing_csrf_token(server: Server, page: Any) -> None:
    page.goto(server.entry_url(server.application(), brand="sandbox", vin=VIN))
    # Through the DevTools protocol, not page script: the pages run none (CSP).
    page.locator("input[name=csrf_token]").evaluate("input => input.remove()")
    page.get_by_role("button", name="Continue").click()
    expect_heading(page, "The form could not be verified")
    shot(page, "error-missing-csrf")


def test_unregistered_redirect_uri_and_unknown_client_stay_here(server: Server, page: Any) -> None:
    app = server.application()
    url = server.entry_url(app, redirect_uri="https://attacker.example/steal")
    response = page.goto(url)
    assert response.status == 400
    assert urlsplit(page.url).netloc == urlsplit(server.base).netloc
    expect_heading(page, "Invalid return address")
    shot(page, "error-unregistered-redirect-uri")
    app.client_id = "unknown-client"
    response = page.goto(server.entry_url(app))
    assert response.status == 400
    expect_heading(page, "Unknown application")
    shot(page, "error-unknown-client")


def test_bad_validity_dates_go_back_with_invalid_request(server: Server, page: Any) -> None:
    app = server.application()
    page.goto(
        server.entry_url(
            app, validity_start_date="2030-05-01T00:00:00Z", validity_end_date="2030-04-01"
        )
    )
    received = back_at_application(page, server)
    assert received["error"] == "invalid_request"
    assert "validity_end_date" in received["error_description"]


def test_pages_on_a_phone(server: Server, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    try:
        tab = context.new_page()
        tab.goto(server.entry_url(server.application(), brand="bmw", vin=VIN))
        shot(tab, "mobile-1-brand")
        tab.get_by_role("button", name="Continue").click()
        tab.get_by_role("button", name="Continue").click()
        shot(tab, "mobile-3-verify")
        tab.get_by_label("Code shown in your vehicle").fill(server.vehicle_code())
        tab.get_by_role("button", name="Confirm", exact=True).click()
        tab.wait_for_url("**/review")
        # Nothing wider than the screen: no sideways scrolling.
        width = tab.evaluate("document.documentElement.scrollWidth")
        assert width <= 375
        shot(tab, "mobile-4-review")
    finally:
        context.close()


def test_keyboard_focus_is_visible(server: Server, page: Any) -> None:
    page.goto(server.entry_url(server.application(), brand="sandbox", vin=VIN))
    page.keyboard.press("Tab")  # the skip link
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
    shot(page, "keyboard-focus")


def test_artifacts_directory_is_not_committed() -> None:
    ignore = (Path(__file__).resolve().parents[2] / ".gitignore").read_text()
    assert "test-artifacts/" in ignore
