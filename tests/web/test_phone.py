"""Every page of the consent flow, the owner portal and the console on a phone: Debian's
Chromium (Playwright) against a real uvicorn server with its background work, 360 px
wide, in en-GB and de-DE. On each page the document is no wider than the screen
(`scrollWidth` against the viewport: no sideways scrolling; the elements sticking out are
named when not), its language links stay in the sandbox, axe-core finds nothing, and a
screenshot is taken on the phone and on a desktop (1280 px) into test-artifacts/pages/
(gitignored), `<surface>-<page>-<locale>-<phone|desktop>.png`. Which pages there are is
read from the application's routes: a GET page route this walk does not visit fails
`test_the_walk_visits_every_page`."""

from __future__ import annotations

import asyncio
import re
import shutil
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from autoport.app import create_app
from autoport.apps import service as apps_service
from autoport.config import Settings
from autoport.console import repository as console_repository
from autoport.console import service as console_service
from autoport.console.schemas import User
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import Clock, now_us
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from autoport.proof.service import current_vehicle_code
from autoport.sandbox import service as sandbox
from autoport.sandbox.service import NewVehicle
from tests.consent.conftest import METHODS, VIN, ConsentApp, insert_application, store_vehicle_data
from tests.factories import bearer, pkce_pair
from tests.helpers.browsers import axe_violations, chromium_browser
from tests.helpers.ports import bound_socket, port_of
from tests.helpers.servers import ApplicationCallback, uvicorn_in_thread

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "pages"
ADMIN = "ap_admin_phone-browser-test"
PASSWORD = "correct horse battery"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 900}
CONSOLE_VIN = "SBX00000000000777"

# GET routes of the three surfaces that are not pages a person opens: data, event
# streams, fragments, stylesheets and scripts, and redirects back from a carmaker.
NOT_PAGES = re.compile(
    r"(\.json|\.csv|\.css|/events|/messages|/track|/deliveries|/static/.*|/oem-callback"
    r"|/console/)$"
)


@dataclass
class World:
    base: str
    database_url: str
    consent_app: ConsentApp
    account_id: str
    app_id: str
    admin_email: str
    visited: set[str] = field(default_factory=set)  # the route paths seen

    def run(self, coro_fn: Any) -> Any:
        return run_on(self.database_url, coro_fn)


def run_on(database_url: str, coro_fn: Any) -> Any:
    """`coro_fn(db)` on its own connection, away from any running event loop."""

    async def go() -> Any:
        db = create_database(database_url)
        await db.connect()
        try:
            return await coro_fn(db)
        finally:
            await db.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, go()).result()


async def _seed(db: Database, callback: str) -> tuple[ConsentApp, str, str, str, str, str]:
    now = now_us()
    consent_app = await insert_application(db, redirect_uris=(callback,))
    async with db.transaction() as conn:
        account = await apps_service.create_account(
            conn, environment=Environment.sandbox, name="Gamma Mobilitätsdienste GmbH", now_us=now
        )
        application, secret = await apps_service.create_application(
            conn,
            environment=Environment.sandbox,
            account_id=account.id,
            name="Gamma Flottenmanagement für Elektrofahrzeuge",
            redirect_uris=["https://app.example.com/a/very/long/callback/path/for/the/phone"],
            properties=["charging.battery_level", "diagnostics.odometer", "doors.locks_state"],
            brands=["sandbox"],
            client_type="confidential",
            now_us=now,
        )
        email = "entwicklungsleitung.fahrzeugdaten@gamma-mobilitaet.example.com"
        user = User(
            str(uuid.uuid4()), Environment.sandbox, account.id, email,
            console_service.hash_password(PASSWORD), "owner", now, None,
        )  # fmt: skip
        await console_repository.create_user(conn, user)
    assert secret is not None
    await sandbox.create_vehicle(
        db,
        ingest=ingest_vehicle_data,
        spec=NewVehicle(
            vin=CONSOLE_VIN,
            name="Langstreckenfahrzeug mit Wärmepumpe",
            profile="full",
            running=False,
            account_id=account.id,
        ),
        now_us=now,
    )
    await store_vehicle_data(db, now_us=now)
    return consent_app, account.id, application.id, application.client_id, secret, email


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    data_dir = tmp_path_factory.mktemp("phone-browser")
    database_url = f"sqlite:///{data_dir / 'autoport.db'}"
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(upgrade_sync, database_url).result()
    callback_server = ThreadingHTTPServer(("127.0.0.1", 0), ApplicationCallback)
    threading.Thread(target=callback_server.serve_forever, daemon=True).start()
    callback = f"http://127.0.0.1:{callback_server.server_address[1]}/callback"
    # Bound before the server starts: a port closed again could be taken by another
    # xdist worker before uvicorn binds it (tests/helpers/servers.py).
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
        sandbox_connector_clearance_delay_seconds=1.0,
    )
    consent_app, account_id, app_id, client_id, secret, email = run_on(
        database_url, lambda db: _seed(db, callback)
    )
    app = create_app(settings, clock=Clock(), run_background=True)
    try:
        with uvicorn_in_thread(app, sock, stop_timeout=15, lifespan="on"):
            base = f"http://127.0.0.1:{port}"
            # Fleet vehicles with long tags, a webhook: the console's tables have rows to show.
            with httpx.Client(base_url=base) as client:
                token = client.post(
                    "/sandbox/v1/access_tokens",
                    data={"grant_type": "client_credentials", "client_id": client_id,
                          "client_secret": secret},
                ).json()["access_token"]  # fmt: skip
                asked = client.post(
                    "/sandbox/v1/fleets/vehicles",
                    json={"vehicles": [{"vin": CONSOLE_VIN, "brand": "sandbox",
                                        "tags": {"depot": "Niederlassung Süd-West"}},
                                       {"vin": "SBX00000000000778", "brand": "sandbox"}]},
                    headers=bearer(token),
                )  # fmt: skip
                assert asked.status_code == 200, asked.text
                for _ in range(3):
                    client.get("/sandbox/v1/fleets/vehicles", headers=bearer(token))
                hooked = client.put(
                    f"/sandbox/admin/v1/applications/{app_id}/webhook",
                    json={"url": "http://127.0.0.1:9/a/webhook/receiver/that/is/rather/long"},
                    headers=bearer(ADMIN),
                )
                assert hooked.status_code == 201, hooked.text
            yield World(base, database_url, consent_app, account_id, app_id, email)
    finally:
        callback_server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)  # no screenshot of a page no longer walked
    with chromium_browser(ARTIFACTS) as browser:
        yield browser


OVERFLOWING = """() => {
  const limit = document.documentElement.clientWidth;
  const out = [];
  for (const element of document.body.querySelectorAll('*')) {
    const box = element.getBoundingClientRect();
    if (box.width && box.right > limit + 0.5 &&
        !Array.from(element.children).some(c => c.getBoundingClientRect().right > limit + 0.5)) {
      out.push(element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') +
        (element.className && typeof element.className === 'string' ?
          '.' + element.className.trim().split(/\\s+/).join('.') : '') +
        ' ' + Math.round(box.right) + 'px');
    }
  }
  return out.slice(0, 8);
}"""


class Walker:
    """One reader on a phone: opens pages and checks each (width, axe, screenshots)."""

    def __init__(self, browser: Any, world: World, locale: str) -> None:
        self.world = world
        self.locale = locale
        self.context = browser.new_context(locale=locale, viewport=PHONE)
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.problems: list[str] = []

    def goto(self, path: str, route: str | None = None, name: str | None = None) -> None:
        self.page.goto(self.world.base + path)
        self.check(route or path, name)

    def check(self, route: str, name: str | None = None) -> None:
        """The page as it is now: no wider than the phone, axe clean, both screenshots.
        `route` is the route path the page answers (recorded for the coverage check)."""
        page = self.page
        self.world.visited.add(route)
        assert page.locator("html").get_attribute("lang") == self.locale, page.url
        label = name or _name(route)
        width, client = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        if width > client:
            self.problems.append(f"{label} ({page.url}): {width} px > {client}: "
                                 f"{page.evaluate(OVERFLOWING)}")  # fmt: skip
        # The language links lead to this page in this environment (the owner portal's
        # "Deutsch" on /sandbox/owner once led to the production portal).
        for href in page.eval_on_selector_all(
            "a[hreflang]", "links => links.map(link => link.getAttribute('href'))"
        ):
            if not href.startswith("/sandbox/"):
                self.problems.append(f"{label}: a language link leaves the sandbox: {href}")
        violations = axe_violations(page)
        if violations:
            self.problems.append(f"{label}: axe {violations}")
        stem = ARTIFACTS / f"{label}-{self.locale}"
        page.screenshot(path=f"{stem}-phone.png", full_page=True)
        page.set_viewport_size(DESKTOP)
        page.screenshot(path=f"{stem}-desktop.png", full_page=True)
        page.set_viewport_size(PHONE)

    def close(self) -> None:
        self.context.close()


def _name(route: str) -> str:
    parts = [p for p in route.replace("/sandbox/", "/").split("/") if p and "{" not in p]
    return "-".join(parts) or "root"


def _consent(walker: Walker, world: World, brand: str) -> None:
    page = walker.page
    _, challenge = pkce_pair()
    entry = httpx.Request(
        "GET", world.base + "/sandbox/oauth/new",
        params=world.consent_app.entry_params(brand=None, vin=None, code_challenge=challenge),
    )  # fmt: skip
    page.goto(str(entry.url))
    page.wait_for_url("**/oauth/consent/brand")
    walker.check("/sandbox/oauth/consent/brand", f"consent-brand-{brand}")
    page.check(f"input[name=brand][value={brand}]")
    page.click("main form button[type=submit]")
    page.wait_for_url("**/oauth/consent/vehicle")
    walker.check("/sandbox/oauth/consent/vehicle", f"consent-vehicle-{brand}")
    page.fill("#vin", VIN)
    page.click("main form button[type=submit]")
    page.wait_for_url("**/oauth/consent/verify")
    walker.check("/sandbox/oauth/consent/verify", f"consent-verify-{brand}")


@pytest.mark.timeout(600)  # some 40 pages, each measured, checked and photographed twice
@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_every_page_fits_a_phone(browser: Any, world: World, locale: str) -> None:
    walker = Walker(browser, world, locale)
    try:
        walk_consent(walker, world)
        walk_owner(walker, world)
        walk_console(walker, world)
        walk_operator(walker, world)
    finally:
        walker.close()
    assert walker.problems == [], "\n".join(walker.problems)


def walk_consent(walker: Walker, world: World) -> None:
    page = walker.page
    # The carmaker login (the sandbox's simulated one) and its page.
    _consent(walker, world, "mercedes_benz")
    page.click("main form button[type=submit]")
    page.wait_for_url("**/oauth/oem/mercedes_benz/login**")
    walker.check("/sandbox/oauth/oem/{brand}/login", "consent-oem-login")
    # A vehicle code, a wrong one, the right one, the review, the approval.
    _consent(walker, world, "bmw")
    page.fill("#code", "000000")
    page.click("main form:has(#code) button[type=submit]")
    walker.check("/sandbox/oauth/consent/verify", "consent-verify-wrong-code")
    code = world.run(  # what the vehicle's display shows
        lambda db: current_vehicle_code(
            db.reader, environment=Environment.sandbox, vin=VIN, now_us=now_us()
        )
    )
    page.fill("#code", code)
    page.click("main form:has(#code) button[type=submit]")
    page.wait_for_url("**/oauth/consent/review")
    walker.check("/sandbox/oauth/consent/review", "consent-review")
    page.click("main form button[value=approve]")
    page.wait_for_url("**/callback**")
    # An expired consent session: the error page.
    walker.goto("/sandbox/oauth/consent/review", name="consent-error-expired")
    walker.world.visited.add("/sandbox/oauth/new")


def walk_owner(walker: Walker, world: World) -> None:
    page = walker.page
    page.context.clear_cookies()
    walker.goto("/sandbox/owner/vehicles", name="owner-please-sign-in")
    walker.goto("/sandbox/owner", name="owner-sign-in")
    page.select_option("#brand", "bmw")
    page.fill("#vin", "SBXTEST000000001")  # 16 characters: the form's error
    page.click("main form button[type=submit]")
    walker.check("/sandbox/owner", "owner-sign-in-error")
    page.select_option("#brand", "bmw")
    page.fill("#vin", VIN)
    page.click("main form button[type=submit]")
    page.wait_for_url("**/owner/verify")
    walker.check("/sandbox/owner/verify", "owner-verify")
    page.goto(world.base + "/sandbox/owner")
    page.select_option("#brand", "sandbox")
    page.fill("#vin", VIN)
    page.click("main form button[type=submit]")
    page.wait_for_url("**/owner/vehicles/**")
    walker.world.visited.add("/sandbox/owner/vehicles")
    walker.check("/sandbox/owner/vehicles/{vin}", "owner-vehicle")
    page.click("a[href*='/withdraw']")
    walker.check("/sandbox/owner/vehicles/{vin}/withdraw", "owner-withdraw")


def walk_console(walker: Walker, world: World) -> None:
    page = walker.page
    base = f"/sandbox/console/a/{world.account_id}"
    walker.goto("/sandbox/console/sign-in", name="console-sign-in")
    page.fill("#email", world.admin_email)
    page.fill("#password", PASSWORD)
    page.click("main form:has(#email) button[type=submit]")
    page.wait_for_url(f"**{base}/**")
    app = world.app_id
    for path in (
        "/applications", "/applications/new", f"/applications/{app}",
        f"/applications/{app}/webhook",
        "/webhooks", "/fleet", f"/fleet/{app}", "/sandbox", f"/sandbox/{CONSOLE_VIN}",
        "/streaming", f"/streaming/{app}", "/usage", "/users", "/audit",
    ):  # fmt: skip
        route = path.replace(app, "{app_id}").replace(CONSOLE_VIN, "{vin}")
        name = path.replace(app, "app").replace(CONSOLE_VIN, "car").replace("/", "-")
        walker.goto(
            base + path, route=f"/sandbox/console/a/{{account_id}}{route}", name=f"console{name}"
        )
    # A new application's page with its secret, once.
    page.goto(world.base + base + "/applications/new")
    page.fill("#name", "Ein sehr langer Anwendungsname für das Telefon")
    page.fill("#redirect_uris", "https://app.example.com/callback")
    page.check("input[name=brands][value=sandbox]")
    page.check("input[name=properties][value='charging.battery_level']")
    page.click("main form button[type=submit].primary")
    page.wait_for_selector("#cred-secret")
    walker.check("/sandbox/console/a/{account_id}/applications/{app_id}/created", "console-created")
    # An invitation link and its page.
    page.goto(world.base + base + "/users")
    page.fill("#invite-email", f"neu-{walker.locale}@gamma-mobilitaet.example.com")
    page.click("main form:has(#invite-email) button[type=submit]")
    walker.check("/sandbox/console/a/{account_id}/users", "console-users-invited")
    link = page.locator("#new-link").inner_text().strip()
    # A page that is not there.
    walker.goto(f"{base}/sandbox/SBX00000000000999", route="", name="console-not-found")
    page.context.clear_cookies()
    page.goto(link)
    walker.check("/sandbox/console/link/{token}", "console-link")


def walk_operator(walker: Walker, world: World) -> None:
    page = walker.page
    page.context.clear_cookies()
    page.goto(world.base + "/sandbox/console/sign-in")
    page.click("a[href*='operator']") if page.locator("a[href*='operator']").count() else None
    page.fill("#admin_token", ADMIN)
    page.click("main form:has(#admin_token) button[type=submit]")
    page.wait_for_url("**/sandbox/console/")
    walker.check("/sandbox/console", "console-accounts")
    walker.goto("/sandbox/console/audit", name="console-operator-audit")


def test_the_walk_visits_every_page(world: World) -> None:
    """Every GET page route of the three surfaces (the sandbox's) is visited by the walk
    above, which runs first: a new page is walked on a phone or this fails."""
    assert world.visited, "the walk did not run"
    app = create_app(Settings(data_dir=Path(world.database_url[10:]).parent, sandbox_demo=False))
    pages = set()
    surfaces = re.compile(r"/(console|owner|oauth/consent|oauth/oem|oauth/new)")
    for route in app.routes:
        for context in route.effective_route_contexts():  # type: ignore[attr-defined]
            path = "/sandbox" + context.path
            if "GET" not in (context.methods or ()) or not surfaces.search(path):
                continue
            if path.endswith("/console/"):  # the operator's accounts page
                pages.add(path.rstrip("/"))
            elif not NOT_PAGES.search(path):
                pages.add(path)
    assert pages - world.visited == set()
