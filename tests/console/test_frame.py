"""The console's frame: operator sign-in, the session cookie, CSRF, security headers,
languages, static files, both environments."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from autoport.console.access import COOKIE

from .conftest import ADMIN_TOKEN, Console, World


async def test_pages_need_a_session(console: Console) -> None:
    browser = console.browser()
    for path in ("/console/", "/console"):
        page = await browser.get(path)
        assert page.status_code == 303
        assert page.headers["location"].startswith("/sandbox/console/sign-in?next=")


@pytest.mark.parametrize("prefix", ["", "/sandbox"])
async def test_operator_signs_in_with_the_admin_token(console: Console, prefix: str) -> None:
    browser = console.browser(prefix)
    page = await browser.get("/console/sign-in?operator=1")
    assert page.status_code == 200
    anonymous = browser.client.cookies[COOKIE]
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")
    assert f"Path={prefix}/console" in cookie
    assert "Secure" not in cookie  # http://127.0.0.1 (see the https test)
    done = await browser.post("/console/sign-in", {"admin_token": ADMIN_TOKEN})
    assert done.status_code == 303
    session = browser.client.cookies[COOKIE]
    assert session != anonymous  # rotated at sign-in
    home = await browser.get("/console/")
    assert home.status_code == 200
    assert "Operator" in home.text


async def test_a_wrong_admin_token_is_refused(console: Console) -> None:
    browser = console.browser()
    await browser.get("/console/sign-in?operator=1")
    refused = await browser.post("/console/sign-in", {"admin_token": "not-the-token"})
    assert refused.status_code == 401
    assert "admin token is not valid" in refused.text
    assert (await browser.get("/console/")).status_code == 303
    empty = await browser.post("/console/sign-in", {"admin_token": ""})
    assert empty.status_code == 401


async def test_sign_in_without_csrf_is_refused(console: Console) -> None:
    browser = console.browser()
    await browser.get("/console/sign-in?operator=1")
    no_token = await browser.post("/console/sign-in", {"admin_token": ADMIN_TOKEN}, csrf=False)
    assert no_token.status_code == 403
    forged = await browser.post(
        "/console/sign-in", {"admin_token": ADMIN_TOKEN, "csrf_token": "0" * 64}
    )
    assert forged.status_code == 403
    # No cookie at all (a cross-site form whose browser never loaded the page).
    stranger = console.browser()
    refused = await stranger.post(
        "/console/sign-in", {"admin_token": ADMIN_TOKEN, "csrf_token": browser.csrf}
    )
    assert refused.status_code == 403


async def test_post_after_sign_in_needs_the_session_csrf(console: Console) -> None:
    browser = await console.operator()
    await browser.get("/console/")
    refused = await browser.post("/console/accounts", {"name": "X"}, csrf=False)
    assert refused.status_code == 403
    # The anonymous token's CSRF value (from before sign-in) no longer works either.
    other = console.browser()
    await other.get("/console/sign-in")
    refused = await browser.post("/console/accounts", {"name": "X", "csrf_token": other.csrf})
    assert refused.status_code == 403
    made = await browser.post("/console/accounts", {"name": "X"})
    assert made.status_code == 303


async def test_sign_out_ends_the_session(console: Console) -> None:
    browser = await console.operator()
    await browser.get("/console/")
    stolen = browser.client.cookies[COOKIE]
    assert (await browser.post("/console/sign-out", {})).status_code == 303
    thief = console.browser()
    thief.client.cookies.set(COOKIE, stolen, path="/sandbox/console")
    assert (await thief.get("/console/")).status_code == 303


async def test_security_headers_on_every_page(console: Console) -> None:
    browser = console.browser()
    page = await browser.get("/console/sign-in")
    csp = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["referrer-policy"] == "no-referrer"


async def test_static_files_are_served_locally(console: Console) -> None:
    browser = console.browser()
    htmx = await browser.get("/console/static/htmx/htmx.min.js")
    assert htmx.status_code == 200 and htmx.headers["content-type"].startswith("text/javascript")
    assert (await browser.get("/console/static/console.css")).status_code == 200
    assert (await browser.get("/console/static/../pages.py")).status_code == 404
    page = await browser.get("/console/sign-in")
    assert "https://" not in page.text.split("<body>")[0]  # nothing from another host


async def test_languages(console: Console) -> None:
    browser = console.browser()
    german = await browser.get("/console/sign-in?lang=de-DE")
    assert german.headers["content-language"] == "de-DE"
    assert "Anmelden" in german.text
    again = await browser.get("/console/sign-in")  # remembered
    assert again.headers["content-language"] == "de-DE"
    english = await browser.get("/console/sign-in", headers={"accept-language": "de"})
    assert english.headers["content-language"] == "de-DE"
    fresh = console.browser()
    page = await fresh.get("/console/sign-in", headers={"accept-language": "de-DE,de;q=0.9"})
    assert page.headers["content-language"] == "de-DE"


async def test_next_only_leads_into_the_console(console: Console) -> None:
    browser = console.browser()
    await browser.get("/console/sign-in")
    done = await browser.post(
        "/console/sign-in", {"admin_token": ADMIN_TOKEN, "next": "//evil.example.com/x"}
    )
    assert done.headers["location"] == "/sandbox/console/"


async def test_the_environments_keep_their_sessions_apart(console: Console, world: World) -> None:
    sandbox = await console.signed_in(world.a.owner, "/sandbox")
    # The production console knows no sandbox user (accounts belong to one environment).
    production = console.browser("")
    production.client.cookies = sandbox.client.cookies
    page = await production.get("/console/")
    assert page.status_code == 303 and "sign-in" in page.headers["location"]


async def test_secure_cookie_on_https(console: Console) -> None:
    state = console.app.state.autoport
    state.settings = state.settings.model_copy(
        update={
            "sandbox_base_url": "https://sandbox.example.com",
            "admin_token": SecretStr(ADMIN_TOKEN),
        }
    )
    browser = console.browser()
    page = await browser.get("/console/sign-in")
    assert "Secure" in page.headers["set-cookie"]


async def test_finished_sessions_are_purged(console: Console) -> None:
    from autoport.console.tasks import KEEP_SECONDS, purge_sessions

    browser = await console.operator()
    await browser.get("/console/")
    await browser.post("/console/sign-out", {})
    await console.operator()  # a running one stays
    now = console.clock.now_us()
    assert await purge_sessions(console.database, now_us=now) == 0
    removed = await purge_sessions(console.database, now_us=now + (KEEP_SECONDS + 1) * 1_000_000)
    assert removed == 1
