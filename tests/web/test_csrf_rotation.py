"""Attack: the form tokens of every page surface (consent pages, owner portal, console)
follow the live session key ring (`autoport keys rotate --which session_secret`).

- A form rendered before a rotation still works within the old key's window.
- After a rotation that ends the old key's window at once (the "after a leak" rotation),
  a token made with the old key is refused: whoever learnt the old secret can no longer
  mint form tokens.
- Pages rendered after a rotation carry a token of the new key.
- A token of one browser's session is refused with another browser's cookie (a session
  switched in the middle of a flow).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.app import create_app
from autoport.apps import service as apps_service
from autoport.config import Settings
from autoport.kit import keyring
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.consent.conftest import VIN, consent_settings, insert_application

ADMIN_TOKEN = "ap_admin_csrf-rotation-test"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
CONSENT = "/sandbox/oauth/consent"
OWNER = "/sandbox/owner"
CONSOLE = "/sandbox/console"


def csrf_of(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    assert found, page.text[:400]
    return found.group(1)


@pytest.fixture
async def app(sqlite_settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    settings = consent_settings(sqlite_settings).model_copy(
        update={"admin_token": SecretStr(ADMIN_TOKEN)}
    )
    application = create_app(settings, clock=clock, run_background=False)
    async with application.router.lifespan_context(application):
        yield application


def browser(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://127.0.0.1:8080",
        follow_redirects=False,
    )


def rotate(app: FastAPI, *, window_seconds: float) -> None:
    keyring.rotate(app.state.autoport.settings, "session_secret", window_seconds=window_seconds)


# ------------------------------------------------------------------------ consent


async def _consent_at_vehicle(app: FastAPI, client: httpx.AsyncClient) -> None:
    consent_app = await insert_application(app.state.autoport.database)
    started = await client.get(
        "/sandbox/oauth/new", params=consent_app.entry_params(brand="sandbox")
    )
    assert started.status_code == 303, started.text
    brand = await client.get(f"{CONSENT}/brand")
    chosen = await client.post(
        f"{CONSENT}/brand", data={"csrf_token": csrf_of(brand), "brand": "sandbox"}
    )
    assert chosen.status_code == 303


async def test_consent_forms_follow_the_session_key_ring(app: FastAPI) -> None:
    async with browser(app) as owner, browser(app) as other:
        await _consent_at_vehicle(app, owner)
        before = csrf_of(await owner.get(f"{CONSENT}/vehicle"))
        rotate(app, window_seconds=600)
        # Made before the rotation, sent within the old key's window: taken.
        taken = await owner.post(f"{CONSENT}/vehicle", data={"csrf_token": before, "vin": VIN})
        assert taken.status_code == 303, taken.text[:300]
        after = csrf_of(await owner.get(f"{CONSENT}/review"))
        assert after != before  # the new key makes the new pages' tokens
        # Another browser's session: its own token only.
        await _consent_at_vehicle(app, other)
        switched = await other.post(f"{CONSENT}/vehicle", data={"csrf_token": after, "vin": VIN})
        assert switched.status_code == 403
        # The old key is cut (a leak): what it made is refused from now on.
        stale = csrf_of(await owner.get(f"{CONSENT}/review"))
        rotate(app, window_seconds=0)
        refused = await owner.post(
            f"{CONSENT}/review", data={"csrf_token": stale, "decision": "deny"}
        )
        assert refused.status_code == 403
        forged = await owner.post(
            f"{CONSENT}/review", data={"csrf_token": "0" * 64, "decision": "deny"}
        )
        assert forged.status_code == 403
        fresh = csrf_of(await owner.get(f"{CONSENT}/review"))
        denied = await owner.post(
            f"{CONSENT}/review", data={"csrf_token": fresh, "decision": "deny"}
        )
        assert denied.status_code == 303


# -------------------------------------------------------------------------- owner


async def test_owner_portal_forms_follow_the_session_key_ring(app: FastAPI) -> None:
    async with browser(app) as owner, browser(app) as other:
        # The sign-in form (anchored on the form cookie): made before, sent after.
        page = await owner.get(OWNER)
        rotate(app, window_seconds=600)
        signed = await owner.post(
            f"{OWNER}/sign-in", data={"csrf_token": csrf_of(page), "brand": "sandbox", "vin": VIN}
        )
        assert signed.status_code == 303, signed.text[:300]
        vehicle = await owner.get(f"{OWNER}/vehicles/{VIN}")
        assert vehicle.status_code == 200
        token = csrf_of(vehicle)
        # The same form token with another browser's session cookie: refused.
        other_page = await other.get(OWNER)
        await other.post(
            f"{OWNER}/sign-in",
            data={"csrf_token": csrf_of(other_page), "brand": "sandbox", "vin": VIN},
        )
        switched = await other.post(f"{OWNER}/sign-out", data={"csrf_token": token})
        assert switched.status_code == 403
        # The key of that token is cut: refused, and the session stays.
        rotate(app, window_seconds=0)
        refused = await owner.post(f"{OWNER}/sign-out", data={"csrf_token": token})
        assert refused.status_code == 403
        assert (await owner.get(f"{OWNER}/vehicles/{VIN}")).status_code == 200
        fresh = csrf_of(await owner.get(f"{OWNER}/vehicles/{VIN}"))
        assert fresh != token
        out = await owner.post(f"{OWNER}/sign-out", data={"csrf_token": fresh})
        assert out.status_code == 303


# ------------------------------------------------------------------------ console


async def test_console_forms_follow_the_session_key_ring(app: FastAPI, clock: FrozenClock) -> None:
    database = app.state.autoport.database
    async with database.transaction() as conn:
        account = await apps_service.create_account(
            conn, environment=Environment.sandbox, name="Rotation", now_us=clock.now_us()
        )
    accounts = f"{CONSOLE}/accounts"
    async with browser(app) as operator, browser(app) as other:
        sign_in = await operator.get(f"{CONSOLE}/sign-in?operator=1")
        rotate(app, window_seconds=600)
        signed = await operator.post(
            f"{CONSOLE}/sign-in",
            data={"csrf_token": csrf_of(sign_in), "admin_token": ADMIN_TOKEN},
        )
        assert signed.status_code == 303, signed.text[:300]
        home = await operator.get(f"{CONSOLE}/")
        token = csrf_of(home)
        # Another operator's session with this one's token: refused.
        other_sign_in = await other.get(f"{CONSOLE}/sign-in?operator=1")
        await other.post(
            f"{CONSOLE}/sign-in",
            data={"csrf_token": csrf_of(other_sign_in), "admin_token": ADMIN_TOKEN},
        )
        switched = await other.post(accounts, data={"csrf_token": token, "name": "Switched"})
        assert switched.status_code == 403
        rotate(app, window_seconds=0)
        refused = await operator.post(accounts, data={"csrf_token": token, "name": "Stale"})
        assert refused.status_code == 403
        fresh = csrf_of(await operator.get(f"{CONSOLE}/"))
        assert fresh != token
        made = await operator.post(accounts, data={"csrf_token": fresh, "name": "Fresh"})
        assert made.status_code == 303, made.text[:300]
        names = await database.fetch_all("SELECT name FROM accounts ORDER BY name")
        assert [row["name"] for row in names] == ["Fresh", account.name]
