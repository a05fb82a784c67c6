"""The console in a real browser: Debian's Chromium driven by Playwright against a real
uvicorn server on a loopback port. The operator creates an account and invites its
owner; the owner accepts the link, signs in, creates an application (its secret shown
once), sets a webhook to a real local receiver and sees the delivery arrive; the owner
invites a developer and a viewer, who walk the same pages with what their role allows.
Every page is checked with axe-core (vendored under tests/vendor/axe-core, evaluated
in the page through the DevTools protocol, so the CSP stays on) and saved as a screenshot
under test-artifacts/console/ (gitignored). A CSP violation or any script error in the
browser's console fails the test.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.db import Database, create_database
from autoport.kit.migrate import upgrade_sync
from tests.helpers.browsers import axe_violations, chromium_browser
from tests.helpers.ports import free_port

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "console"
ADMIN_TOKEN = "ap_admin_console-browser-test"
PASSWORD = "a long browser passphrase"


class Receiver:
    """A webhook receiver of the application: records what arrives, answers 200."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.requests.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@dataclass
class Server:
    base: str
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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("console-browser")
    database_url = f"sqlite:///{data_dir / 'autoport.db'}"
    upgrade_sync(database_url)
    port = free_port()
    settings = Settings(
        data_dir=data_dir,
        port=port,
        access_log=False,
        admin_token=ADMIN_TOKEN,
        sandbox_demo=False,
        webhook_allow_loopback=True,
        base_url=f"http://127.0.0.1:{port}",
        sandbox_base_url=f"http://127.0.0.1:{port}/sandbox",
    )
    app = create_app(settings, run_background=False)
    uv = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    receiver = Receiver()
    deadline = time.monotonic() + 20
    while not uv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield Server(f"http://127.0.0.1:{port}", database_url, receiver)
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        receiver.server.shutdown()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with chromium_browser(ARTIFACTS) as browser:
        yield browser


class Walker:
    """One person's browser tab: every page it loads is checked (axe, console errors)
    and photographed."""

    def __init__(self, chromium: Any, server: Server, who: str, locale: str = "en-GB") -> None:
        self.context = chromium.new_context(
            locale=locale, viewport={"width": 1200, "height": 900}, accept_downloads=True
        )
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.server = server
        self.who = who
        self.problems: list[str] = []
        self.checked: list[str] = []

        def on_console(message: Any) -> None:
            url = str(message.location.get("url", ""))
            # Refusal pages answer 4xx on purpose; Chromium logs that for the document.
            expected = "Failed to load resource" in message.text and "/static/" not in url
            if message.type == "error" and not expected:
                self.problems.append(f"{message.text} ({url})")

        self.page.on("console", on_console)
        self.page.on("pageerror", lambda error: self.problems.append(str(error)))

    def goto(self, path: str) -> None:
        self.page.goto(self.server.base + path)

    def check(self, name: str) -> None:
        """axe-core on the page as it is now: 0 violations; then a screenshot."""
        self.page.wait_for_load_state("load")
        violations = axe_violations(self.page)
        assert violations == [], f"{self.who}/{name}: {violations}"
        self.page.screenshot(path=str(ARTIFACTS / f"{self.who}-{name}.png"), full_page=True)
        self.checked.append(name)

    def text(self) -> str:
        return str(self.page.locator("main").inner_text())

    def close(self) -> None:
        self.context.close()
        assert self.problems == [], self.problems


def accept_link(chromium: Any, server: Server, url: str, who: str) -> Walker:
    walker = Walker(chromium, server, who)
    walker.page.goto(url)
    walker.check("link")
    walker.page.fill("#password", PASSWORD)
    walker.page.fill("#password_confirm", PASSWORD)
    walker.page.click("button[type=submit]")
    walker.page.wait_for_url(re.compile(r".*/console/sign-in\?done=password$"))
    walker.check("sign-in-after-link")
    return walker


def sign_in(walker: Walker, email: str) -> None:
    walker.page.fill("#email", email)
    walker.page.fill("#password", PASSWORD)
    walker.page.click("main button[type=submit]")
    walker.page.wait_for_url("**/applications")


def invite(walker: Walker, account_path: str, email: str, role: str) -> str:
    walker.goto(f"{account_path}/users")
    walker.page.fill("#invite-email", email)
    walker.page.select_option("#invite-role", role)
    walker.page.click("text=Create invitation link")
    link = str(walker.page.locator("#new-link").inner_text()).strip()
    assert link.startswith(walker.server.base + "/sandbox/console/link/ap_link_")
    return link


def create_application(walker: Walker, account_path: str, name: str) -> tuple[str, str]:
    walker.goto(f"{account_path}/applications/new")
    walker.check("application-new")
    walker.page.fill("#name", name)
    walker.page.fill("#redirect_uris", "https://app.example.com/callback")
    walker.page.check("input[name=brands][value=sandbox]")
    walker.page.fill("#prop-filter", "battery")  # the catalog filter (console.js)
    walker.page.check("input[name=properties][value='charging.battery_level']")
    walker.page.fill("#prop-filter", "odometer")
    walker.page.check("input[name=properties][value='diagnostics.odometer']")
    walker.page.click("text=Create application")
    walker.page.wait_for_selector("#cred-secret")
    secret = walker.page.locator("#cred-secret").inner_text().strip()
    app_id = walker.page.locator("#cred-app-id").inner_text().strip()
    assert secret.startswith("ap_cs_")
    assert walker.page.locator("button[data-copy=cred-secret]").is_visible()  # copy button
    walker.check("application-created")
    walker.page.click("text=Continue to the application")
    walker.page.wait_for_url(f"**/applications/{app_id}")
    assert secret not in walker.page.content()  # shown once
    walker.check("application")
    return app_id, secret


def set_webhook(walker: Walker, account_path: str, app_id: str) -> None:
    before = len(walker.server.receiver.requests)
    walker.goto(f"{account_path}/applications/{app_id}/webhook")
    walker.check("webhook-empty")
    walker.page.fill("#url", walker.server.receiver.url)
    walker.page.click("text=Save and ping")
    walker.page.wait_for_selector("#hook-secret")
    assert "Ping: succeeded" in walker.text()
    assert len(walker.server.receiver.requests) == before + 1  # arrived at the receiver
    walker.page.locator("#deliveries details summary").first.click()
    walker.check("webhook-saved")
    walker.page.click("text=Send test event")
    walker.page.wait_for_selector("text=Ping: succeeded")
    assert len(walker.server.receiver.requests) == before + 2
    walker.goto(f"{account_path}/applications/{app_id}/webhook")
    assert walker.page.locator("#hook-secret").count() == 0  # the secret shown once
    assert walker.page.locator("#deliveries li").count() == 2


def test_operator_and_every_role_walk_the_console(server: Server, chromium: Any) -> None:
    # The operator: sign in with the admin token, create an account, invite its owner.
    operator = Walker(chromium, server, "operator")
    operator.goto("/sandbox/console/")
    operator.page.wait_for_url(re.compile(r".*/console/sign-in\?next=.*"))
    operator.check("sign-in")
    operator.page.click("text=Operator sign-in")
    operator.check("sign-in-operator")
    operator.page.fill("#admin_token", "wrong token")
    operator.page.click("main button[type=submit]")
    assert "This admin token is not valid." in operator.text()
    operator.page.fill("#admin_token", ADMIN_TOKEN)
    operator.page.click("main button[type=submit]")
    operator.page.wait_for_url("**/sandbox/console/")
    operator.page.fill("#account-name", "Acme Mobility")
    operator.page.click("text=Create account")
    operator.page.wait_for_url("**/applications")
    account_path = operator.page.url.removeprefix(server.base).removesuffix("/applications")
    operator.check("applications-empty")
    owner_link = invite(operator, account_path, "owner@acme.example.com", "owner")
    operator.check("users-invited")
    operator.goto("/sandbox/console/")
    operator.check("accounts")

    # The owner: accept the link, sign in, create an app, set its webhook, invite others.
    owner = accept_link(chromium, server, owner_link, "owner")
    sign_in(owner, "owner@acme.example.com")
    owner.check("applications-empty")
    app_id, _ = create_application(owner, account_path, "Acme Charging")
    set_webhook(owner, account_path, app_id)
    owner.goto(f"{account_path}/webhooks")
    owner.check("webhooks")
    developer_link = invite(owner, account_path, "dev@acme.example.com", "developer")
    viewer_link = invite(owner, account_path, "viewer@acme.example.com", "viewer")
    owner.check("users")
    owner.goto(f"{account_path}/applications")
    owner.check("applications")

    # The developer: creates and configures, no users or audit management.
    developer = accept_link(chromium, server, developer_link, "developer")
    sign_in(developer, "dev@acme.example.com")
    second_app, _ = create_application(developer, account_path, "Acme Fleet")
    set_webhook(developer, account_path, second_app)
    developer.goto(f"{account_path}/users")
    assert developer.page.locator("#invite-email").count() == 0
    developer.check("users")
    assert developer.page.locator("nav.tabs >> text=Audit log").count() == 0

    # The viewer: sees everything of the account, changes nothing.
    viewer = accept_link(chromium, server, viewer_link, "viewer")
    sign_in(viewer, "viewer@acme.example.com")
    viewer.check("applications")
    assert viewer.page.locator("text=New application").count() == 0
    viewer.goto(f"{account_path}/applications/{app_id}")
    assert viewer.page.locator("text=Rotate the secret").count() == 0
    viewer.check("application")
    viewer.goto(f"{account_path}/applications/{app_id}/webhook")
    assert viewer.page.locator("#url").count() == 0
    assert viewer.page.locator("#deliveries li").count() == 2
    viewer.check("webhook")
    viewer.goto(f"{account_path}/applications/new")
    assert "Not allowed" in viewer.text()
    viewer.check("refused")

    # The owner's audit log and the operator's, and German pages.
    owner.goto(f"{account_path}/audit")
    # Actions in words (the code stays in data-action).
    for words in ("Application created", "Webhook saved", "Invitation accepted", "Signed in"):
        assert words in owner.text()
    owner.check("audit")
    operator.goto("/sandbox/console/audit")
    operator.check("audit")
    german = Walker(chromium, server, "owner-de", locale="de-DE")
    german.goto("/sandbox/console/sign-in")
    assert "Anmelden" in german.text()
    german.check("sign-in")
    sign_in(german, "owner@acme.example.com")
    german.check("applications")
    german.goto(f"{account_path}/applications/{app_id}")
    german.check("application")
    german.goto(f"{account_path}/applications/{app_id}/webhook")
    german.check("webhook")
    german.goto(f"{account_path}/users")
    german.check("users")
    german.goto(f"{account_path}/audit")
    assert "Anwendung angelegt" in german.text() and "Angemeldet" in german.text()
    german.check("audit")

    # Sign out: the session ends.
    owner.page.click("text=Sign out")
    owner.page.wait_for_url("**/console/sign-in")
    owner.goto(f"{account_path}/applications")
    owner.page.wait_for_url(re.compile(r".*/console/sign-in\?next=.*"))
    for walker in (operator, owner, developer, viewer, german):
        walker.close()


def test_generated_key_downloads_once(server: Server, chromium: Any) -> None:
    async def setup(db: Database) -> tuple[str, str]:
        from autoport.apps import service as apps_service
        from autoport.kit.environments import Environment

        async with db.transaction() as conn:
            account = await apps_service.create_account(
                conn, environment=Environment.sandbox, name="Keys", now_us=1
            )
            app, _ = await apps_service.create_application(
                conn, environment=Environment.sandbox, account_id=account.id, name="Keyed",
                redirect_uris=[], properties=[], brands=[], client_type="confidential", now_us=1,
            )  # fmt: skip
        return account.id, app.id

    account_id, app_id = server.run(setup)
    walker = Walker(chromium, server, "operator-keys")
    walker.goto("/sandbox/console/sign-in?operator=1")
    walker.page.fill("#admin_token", ADMIN_TOKEN)
    walker.page.click("main button[type=submit]")
    walker.page.wait_for_url("**/sandbox/console/")
    walker.goto(f"/sandbox/console/a/{account_id}/applications/{app_id}")
    with walker.page.expect_download() as download_info:
        walker.page.click("text=Generate and download")
    download = download_info.value
    assert download.suggested_filename.startswith("autoport-key-")
    content = Path(download.path()).read_text()
    assert '"d":' in content or '"d" :' in content
    walker.page.reload()
    walker.check("application-with-key")
    assert '"d"' not in walker.page.content()
    walker.close()
