"""`/docs` in a real browser with every other host blocked: Debian's Chromium driven by
Playwright against a real uvicorn server on a loopback port. The page must render every
operation from the package's own Swagger UI, without a CSP violation or any console
error, and its Authorize button must work: the admin token entered there is sent by
"Try it out". Screenshots go to test-artifacts/api/ (gitignored)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.migrate import upgrade_sync
from tests.consent import test_browser as consent_browser
from tests.helpers.browsers import axe_violations
from tests.helpers.ports import bound_socket, port_of
from tests.helpers.servers import uvicorn_in_thread

pytestmark = pytest.mark.browser

ADMIN_TOKEN = "ap_admin_docs-browser-test"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "api"

# The project's Chromium, launched as the consent pages' browser tests launch it.
browser = consent_browser.browser


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("docs-browser")
    upgrade_sync(f"sqlite:///{data_dir / 'autoport.db'}")
    sock = bound_socket()
    port = port_of(sock)
    settings = Settings(
        data_dir=data_dir, port=port, access_log=False, admin_token=ADMIN_TOKEN, sandbox_demo=False
    )
    app = create_app(settings, run_background=False)
    with uvicorn_in_thread(app, sock, lifespan="on") as served:
        yield served.base_url


class Offline:
    """A browser tab that can reach the server under test and nothing else."""

    def __init__(self, browser: Any, base_url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.origin = urlsplit(base_url).netloc
        self.blocked: list[str] = []
        self.problems: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))

    def _route(self, route: Any) -> None:
        url = route.request.url
        if urlsplit(url).netloc == self.origin or url.startswith("data:"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"{message.text} ({message.location.get('url', '')})")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(base_url: str, browser: Any) -> Iterator[Offline]:
    # The server first: its migration runs an event loop, which Playwright's would block.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    offline = Offline(browser, base_url)
    try:
        yield offline
    finally:
        offline.close()


@pytest.mark.parametrize("prefix", ["", "/sandbox"])
def test_docs_render_every_operation_offline(tab: Offline, base_url: str, prefix: str) -> None:
    page = tab.page
    page.goto(f"{base_url}{prefix}/docs")
    page.wait_for_selector(".opblock")
    page.wait_for_load_state("networkidle")
    operations = page.locator(".opblock").count()
    assert operations >= 46
    assert page.locator(".info .title").inner_text().startswith("autoport")
    page.screenshot(path=str(ARTIFACTS / f"docs{prefix.replace('/', '-')}.png"), full_page=False)
    assert tab.blocked == []
    assert tab.problems == []


def test_the_authorize_button_sends_the_admin_token(tab: Offline, base_url: str) -> None:
    page = tab.page
    page.goto(f"{base_url}/docs")
    page.wait_for_selector(".opblock")
    page.locator("button.authorize").first.click()
    dialog = page.locator(".modal-ux")
    for scheme in ("oauth2", "bearerToken", "adminToken", "providerSecret"):
        assert dialog.get_by_text(scheme, exact=False).count() >= 1, scheme
    page.screenshot(path=str(ARTIFACTS / "docs-authorize.png"))
    admin = dialog.locator(".auth-container").filter(has_text="adminToken")
    admin.locator("input").fill(ADMIN_TOKEN)
    admin.locator("button.authorize").click()  # "Apply credentials"
    admin.get_by_text("Logout").wait_for()
    dialog.locator("button.close-modal").click()

    operation = page.locator("#operations-admin-list_accounts_admin_v1_accounts_get")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_role("button", name="Execute").click()
    status = operation.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for()
    page.screenshot(path=str(ARTIFACTS / "docs-try-it-out.png"), full_page=False)
    assert status.inner_text().strip() == "200"
    assert '"accounts"' in operation.locator(".live-responses-table").inner_text()
    assert tab.blocked == []
    assert tab.problems == []


@pytest.mark.parametrize("state", ["list", "executed", "authorize"])
def test_the_docs_page_passes_axe(tab: Offline, base_url: str, state: str) -> None:
    """The vendored Swagger UI failed axe-core (issue #38: contrast, nested-interactive,
    select-name, heading levels, content outside landmarks); autoport's own stylesheet
    and script (apidocs/static/a11y.css, a11y.js) fix it, and init.js turns off deep
    links (a link inside each operation's button). Checked on the operation list, with
    an operation tried out (its response and content-type selects shown), and with the
    Authorize dialog open."""
    page = tab.page
    page.goto(f"{base_url}/docs")
    page.wait_for_selector(".opblock")
    page.wait_for_load_state("networkidle")
    if state == "executed":
        operation = page.locator("#operations-admin-list_accounts_admin_v1_accounts_get")
        operation.locator(".opblock-summary").click()
        operation.get_by_role("button", name="Try it out").click()
        operation.get_by_role("button", name="Execute").click()
        operation.locator(".live-responses-table").wait_for()
    elif state == "authorize":
        page.locator("button.authorize").first.click()
        page.locator(".modal-ux").wait_for()
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / f"docs-axe-{state}.png"), full_page=False)
    found = axe_violations(page)
    assert found == [], "\n".join(found)
    # Tried out without the admin token, the call's 401 is the browser's one message.
    assert [p for p in tab.problems if "status of 401" not in p] == []
