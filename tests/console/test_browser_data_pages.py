"""The Fleet, Sandbox vehicles, Streaming and Usage pages in a real browser: Debian's
Chromium driven by Playwright against a real uvicorn server with its background work
running (the sandbox runner moves the car, the usage flusher writes the counts) and a
real Mosquitto configured by autoport (MQTT on, so the Streaming page offers MQTT
credentials). A
developer adds fleet vehicles from a CSV file, creates a sandbox car, scripts it and
watches its chart and track move, issues MQTT credentials, reads the usage; a viewer
only looks. axe-core (tests/vendor) reports 0 violations on every page in en-GB and
de-DE; screenshots go to test-artifacts/console-data-pages/ (gitignored)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from autoport.app import create_app
from autoport.apps import service as apps_service
from autoport.config import Settings, ensure_secrets
from autoport.console import repository as console_repository
from autoport.console import service as console_service
from autoport.console.schemas import User
from autoport.kit.clock import now_us
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from tests.factories import bearer
from tests.helpers.browsers import axe_violations, chromium_browser
from tests.helpers.ports import free_port
from tests.streaming.conftest import Broker

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "console-data-pages"
ADMIN_TOKEN = "ap_admin_console-data-pages-browser-test"
PASSWORD = "correct horse battery"
CSV = (
    "vin,brand,depot\n"
    "SBX00000000000101,sandbox,north\n"
    "SBX00000000000102,sandbox,south\n"
    "SBX00000000000103,,north\n"
    "NOT-A-VIN,sandbox,east\n"
)


@dataclass
class World:
    base: str
    account_id: str
    app_id: str
    client_id: str
    client_secret: str
    developer: str
    viewer: str


async def _seed(db: Database) -> World:
    now = now_us()
    async with db.transaction() as conn:
        account = await apps_service.create_account(
            conn, environment=Environment.sandbox, name="Gamma Mobility", now_us=now
        )
        application, secret = await apps_service.create_application(
            conn,
            environment=Environment.sandbox,
            account_id=account.id,
            name="Gamma fleet app",
            redirect_uris=["https://app.example.com/callback"],
            properties=["charging.battery_level", "diagnostics.odometer"],
            brands=["sandbox"],
            client_type="confidential",
            now_us=now,
        )
        people = {}
        for role in ("developer", "viewer"):
            email = f"{role}@gamma.example.com"
            user = User(
                str(uuid.uuid4()), Environment.sandbox, account.id, email,
                console_service.hash_password(PASSWORD), role, now, None,
            )  # fmt: skip
            await console_repository.create_user(conn, user)
            people[role] = email
    assert secret is not None
    return World(
        "", account.id, application.id, application.client_id, secret,
        people["developer"], people["viewer"],
    )  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    data_dir = tmp_path_factory.mktemp("console-data-pages-browser")
    database_url = f"sqlite:///{data_dir / 'autoport.db'}"
    with ThreadPoolExecutor(max_workers=1) as pool:  # away from any running event loop
        pool.submit(upgrade_sync, database_url).result()
    port = free_port()
    # MQTT on, with a real Mosquitto configured by autoport: the Streaming page offers
    # MQTT credentials only where the deployment publishes MQTT.
    settings, _ = ensure_secrets(
        Settings(
            data_dir=data_dir,
            port=port,
            access_log=False,
            admin_token=ADMIN_TOKEN,
            sandbox_demo=False,
            sandbox_connector_clearance_delay_seconds=1.0,
            mqtt_url=f"mqtt://127.0.0.1:{free_port()}",
        )
    )
    assert settings.mqtt_url is not None
    broker = Broker(data_dir / "mosquitto", int(settings.mqtt_url.rsplit(":", 1)[1]), settings)

    async def seed() -> World:
        db = create_database(database_url)
        await db.connect()
        try:
            world = await _seed(db)
            await broker.write_config(db)
            await broker.start()
            return world
        finally:
            await db.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        seeded: World = pool.submit(asyncio.run, seed()).result()
    app = create_app(settings)  # the real clock and every background task
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    seeded.base = f"http://127.0.0.1:{port}"
    try:
        yield seeded
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(asyncio.run, broker.stop()).result()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser(ARTIFACTS) as browser:
        yield browser


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(locale="en-GB", viewport={"width": 1100, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    # A CSP violation (uPlot, the charts' scripts, htmx) or any script error fails the test.
    problems: list[str] = []

    def on_console(message: Any) -> None:
        if message.type == "error" and "Failed to load resource" not in message.text:
            problems.append(message.text)

    tab.on("console", on_console)
    tab.on("pageerror", lambda error: problems.append(str(error)))
    try:
        yield tab
        assert problems == []
    finally:
        context.close()


def axe(page: Any, name: str) -> None:
    """axe-core's WCAG 2.1 A/AA rules: no violation (evaluated through the DevTools
    protocol, so the page's CSP stays as strict as ever)."""
    violations = axe_violations(page)
    assert violations == [], f"{name}: {violations}"


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def check(page: Any, name: str) -> None:
    """axe and a screenshot, in English and in German."""
    axe(page, name)
    shot(page, name)
    url = page.url
    page.goto(url + ("&" if "?" in url else "?") + "lang=de-DE")
    assert page.locator("html").get_attribute("lang") == "de-DE"
    axe(page, name + "-de")
    shot(page, name + "-de")
    page.goto(url + ("&" if "?" in url else "?") + "lang=en-GB")


def sign_in(page: Any, world: World, email: str) -> None:
    page.goto(f"{world.base}/sandbox/console/sign-in")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.click("form:has(#email) button[type=submit]")
    page.wait_for_url(f"**/console/a/{world.account_id}/**")


def test_developer_fleet_sandbox_streaming_usage(page: Any, world: World) -> None:
    sign_in(page, world, world.developer)
    # Fleet: pick the application, upload the CSV, one result per line.
    page.click("nav.tabs a:text-is('Fleet')")
    check(page, "fleet-picker")
    page.click(f"a[href$='/fleet/{world.app_id}']")
    page.set_input_files(
        "#add-csv", files=[{"name": "fleet.csv", "mimeType": "text/csv", "buffer": CSV.encode()}]
    )
    page.click("form[enctype] button[type=submit]")
    page.wait_for_selector("#results-title")
    results = page.locator("section.card table tbody tr")
    assert results.count() == 4
    assert "error" in results.nth(3).inner_text() and "vin:" in results.nth(3).inner_text()
    axe(page, "fleet-uploaded")  # a POST's answer: no GET to switch the language on
    shot(page, "fleet-uploaded")
    page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/fleet/{world.app_id}")
    assert page.locator("#fleet-vehicles tbody tr").count() == 3
    page.fill("#f-tag", "depot=north")
    page.click("form.toolbar button[type=submit]")
    page.wait_for_url("**tag=depot%3Dnorth**")
    assert page.locator("#fleet-vehicles tbody tr").count() == 2
    check(page, "fleet-filtered")

    # Sandbox vehicles: create a driving car at 5x, watch its chart and track move.
    page.click("nav.tabs a:text-is('Sandbox vehicles')")
    check(page, "sandbox-list")
    page.fill("#new-name", "Browser car")
    page.select_option("#new-powertrain", "electric")
    page.select_option("#new-scenario", "driving")
    page.fill("#new-time-scale", "5")
    page.click("form:has(#new-name) button[type=submit]")
    page.wait_for_selector("#charts")
    assert page.locator("h1").inner_text() == "Browser car"
    # The charts and the track follow the car over Server-Sent Events, without a reload
    # (the marker would be gone after one).
    page.wait_for_selector("#charts[data-live-state=open]")
    page.evaluate("() => { window.notReloaded = true; }")
    page.wait_for_function(
        "() => Number(document.getElementById('charts')?.getAttribute('data-points') || 0) >= 3"
    )
    before = int(page.locator("#charts").get_attribute("data-points") or 0)
    odometer_before = page.locator("#latest-odometer").inner_text()
    page.wait_for_function(
        "() => Number(document.getElementById('charts')?.getAttribute('data-points')) > "
        + str(before + 2)
    )
    page.wait_for_function(
        f"() => document.getElementById('latest-odometer').textContent !== {odometer_before!r}"
    )
    assert page.locator("#chart-speed canvas").count() == 1
    # The track follows: more positions than when the page loaded.
    page.wait_for_function(
        "() => /The last ([4-9]|[1-9][0-9]+) positions/.test("
        "document.getElementById('track').textContent)"
    )
    assert page.evaluate("() => window.notReloaded === true")
    shot(page, "sandbox-vehicle-live")
    check(page, "sandbox-vehicle")
    # Script it: a scenario switch, a hand-set battery level, a bad value's field error.
    page.select_option("#sc-scenario", "charging")
    page.click("form:has(#sc-scenario) button[type=submit]")
    page.wait_for_load_state()
    page.fill("#prop-key", "charging.battery_level")
    page.fill("#prop-value", "1.7")
    page.click("form:has(#prop-key) button[type=submit]")
    assert page.locator("[role=alert]").first.is_visible()
    axe(page, "sandbox-vehicle-error")
    shot(page, "sandbox-vehicle-error")
    page.fill("#prop-value", "0.25")
    page.click("form:has(#prop-key) button[type=submit]")
    page.wait_for_function("() => document.getElementById('latest-energy').textContent === '25'")
    shot(page, "sandbox-vehicle-scripted")

    # The car joins the application's fleet (the sandbox carmaker approves in a second):
    # from then on its data reaches the application's stream.
    vin = page.locator(".summary dd.vin").inner_text().strip()
    page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/fleet/{world.app_id}")
    page.fill("#add-vins", vin)
    page.click("form[enctype] button[type=submit]")
    page.wait_for_selector("#results-title")
    assert "pending" in page.locator("section.card table tbody tr").first.inner_text()

    # Streaming: credentials once, the car's messages arriving live.
    page.click("nav.tabs a:text-is('Streaming')")
    page.click(f"a[href$='/streaming/{world.app_id}']")
    page.click("form[action$='/credentials'] button[type=submit]")
    assert len(page.locator("#mqtt-password").inner_text()) >= 24
    axe(page, "streaming-password")
    shot(page, "streaming-password")
    page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/streaming/{world.app_id}")
    assert page.locator("#mqtt-password").count() == 0  # shown once
    # The live view is an event stream: new messages replace the list without a reload.
    page.wait_for_selector("#stream-live[data-live-state=open]")
    page.evaluate("() => { window.notReloaded = true; }")
    assert page.locator("[data-live-fallback]").is_hidden()
    page.wait_for_selector("#stream-live pre", timeout=30_000)
    assert vin in page.locator("#stream-live pre").first.inner_text()
    seen = int(page.locator("#stream-live").get_attribute("data-live-seen") or 0)
    first_seq = page.locator("#stream-live .hint").first.inner_text()
    page.wait_for_function(
        "() => Number(document.getElementById('stream-live')?.getAttribute('data-live-seen'))"
        f" > {seen}",
        timeout=30_000,
    )
    assert page.locator("#stream-live .hint").first.inner_text() != first_seq
    assert page.evaluate("() => window.notReloaded === true")
    shot(page, "streaming-live")
    check(page, "streaming")

    # Usage: the application's requests, counted and flushed by the server.
    with httpx.Client(base_url=world.base) as client:
        token = client.post(
            "/sandbox/v1/access_tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": world.client_id,
                "client_secret": world.client_secret,
            },
        ).json()["access_token"]
        for _ in range(7):
            assert (
                client.get("/sandbox/v1/fleets/vehicles", headers=bearer(token)).status_code == 200
            )
    time.sleep(6)  # the flusher writes every 5 s
    page.click("nav.tabs a:text-is('Usage')")
    row = page.locator("#usage-table tbody tr").first.inner_text()
    assert "7" in row, row
    assert page.locator("#chart-requests canvas").count() == 1
    check(page, "usage")


def test_a_viewer_sees_but_cannot_change(page: Any, world: World) -> None:
    sign_in(page, world, world.viewer)
    page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/fleet/{world.app_id}")
    assert page.locator("#add-csv").count() == 0
    shot(page, "fleet-viewer")
    page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/sandbox")
    assert page.locator("#new-name").count() == 0
    axe(page, "sandbox-list-viewer")
    # A viewer watches the live view; signing out (in another tab) ends it within the
    # re-check interval, and the page says so.
    page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/streaming/{world.app_id}")
    page.wait_for_selector("#stream-live[data-live-state=open]")
    other = page.context.new_page()
    other.goto(f"{world.base}/sandbox/console/a/{world.account_id}/usage")
    other.click("form[action$='/sign-out'] button[type=submit]")
    other.wait_for_url("**/sign-in**")
    page.wait_for_selector("#stream-live[data-live-state=ended]", timeout=15_000)
    assert page.locator("[data-live-fallback]").is_visible()
    axe(page, "streaming-ended")
    shot(page, "streaming-ended")


def test_dates_in_the_readers_language_and_time_zone(browser: Any, world: World) -> None:
    """A reader in Tokyo with a German browser: the chart's hover says the point's time
    in German and in Tokyo, with UTC beside it (uPlot's own axis wrote US dates in the
    browser's zone); the pages the server writes use the zone the script stored."""
    context = browser.new_context(
        locale="de-DE", timezone_id="Asia/Tokyo", viewport={"width": 1100, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        sign_in(page, world, world.developer)
        page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/sandbox?lang=de-DE")
        page.fill("#new-name", "Tokyo car")
        page.select_option("#new-scenario", "driving")
        page.click("form:has(#new-name) button[type=submit]")
        page.wait_for_function(
            "() => Number(document.getElementById('charts')?.getAttribute('data-points') || 0) >= 3"
        )
        over = page.locator("#chart-speed .u-over")
        box = over.bounding_box()
        assert box is not None
        over.hover(position={"x": box["width"] - 4, "y": box["height"] / 2})  # the newest
        page.wait_for_function(
            "() => document.querySelector('#chart-speed .u-over')?.getAttribute('title')"
        )
        title = over.get_attribute("title") or ""
        moment = r"(\d{2})\.(\d{2})\.(\d{4}), (\d{2}):(\d{2}):(\d{2})"
        found = re.fullmatch(rf"{moment} \({moment} UTC\) · [\d,.]+", title)
        assert found, title
        assert (int(found.group(4)) - int(found.group(10))) % 24 == 9, title
        shot(page, "sandbox-vehicle-tokyo-de")
        # The server's dates: in Tokyo, UTC in the title.
        page.goto(f"{world.base}/sandbox/console/a/{world.account_id}/users?lang=de-DE")
        written = page.locator("td time").first
        assert written.get_attribute("title", timeout=5_000), "no <time> on the page"
        text, utc = written.inner_text(), written.get_attribute("title") or ""
        assert utc.endswith("UTC") and not text.endswith("UTC"), (text, utc)
        assert int(text.split(":")[0][-2:]) - int(utc.split(":")[0][-2:]) in (9, -15)
        shot(page, "users-tokyo-de")
    finally:
        context.close()
