"""The owner portal over HTTP, on SQLite and PostgreSQL: sign-in by ownership with each
method, what the owner sees, withdrawing (and its effects on tokens and webhooks), the
admin API's revocation, and the attacks the portal must refuse."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.proof.service import current_vehicle_code
from tests.consent.conftest import (
    VIN,
    consent_settings,
    insert_application,
    query_of,
    store_vehicle_data,
)
from tests.factories import bearer

from .conftest import CONSENT, OWNER, csrf_of, grant_through_consent, sign_in

ADMIN = "ap_admin_owner-portal-test"
CSRF = re.compile(r'name="csrf_token" value="[^"]+"')
OTHER_VIN = "SBXTEST0000000002"
PULL = "/sandbox/v1/vehicle-data/autoapi-13/{vin}"


@pytest.fixture
async def consent_app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    """The consent tests' app, with an admin token for the admin API."""
    app = create_app(
        consent_settings(settings, admin_token=SecretStr(ADMIN)), clock=clock, run_background=False
    )
    async with app.router.lifespan_context(app):
        yield app


async def pull(client: httpx.AsyncClient, token: str, vin: str = VIN) -> httpx.Response:
    return await client.get(PULL.format(vin=vin), headers=bearer(token))


async def events(db: Database, authorization_id: str) -> list[dict[str, object]]:
    rows = await db.fetch_all(
        "SELECT payload FROM outbox WHERE event_type = 'authorization_changed' "
        "AND consumer = 'webhooks' ORDER BY id"
    )
    payloads = [orjson.loads(row["payload"]) for row in rows]
    return [p for p in payloads if p["authorization_id"] == authorization_id]


def owner_cookie(value: str) -> dict[str, str]:
    """A request that carries exactly this owner-session cookie, whatever the client's jar
    holds (a Cookie header of the request's own replaces the jar's)."""
    return {"Cookie": f"autoport_owner={value}"}


async def status_of(db: Database, authorization_id: str) -> str:
    return str(
        await db.fetch_value(
            "SELECT status FROM authorizations WHERE id = :id", {"id": authorization_id}
        )
    )


async def withdraw(
    client: httpx.AsyncClient, grant: str, vin: str = VIN, csrf: str | None = None
) -> httpx.Response:
    confirm = await client.get(f"{OWNER}/vehicles/{vin}/withdraw", params={"grant": grant})
    token = csrf if csrf is not None else csrf_of(confirm)
    return await client.post(
        f"{OWNER}/vehicles/{vin}/withdraw", data={"csrf_token": token, "grant": grant}
    )


# ---------------------------------------------------------------- the owner's path


async def test_owner_sees_the_application_its_reads_and_withdraws_it(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    app = await insert_application(db)
    await store_vehicle_data(db, now_us=clock.now_us())
    granted = await grant_through_consent(browser_client, app)
    for _ in range(3):
        assert (await pull(browser_client, granted.access_token)).status_code == 200

    signed = await sign_in(browser_client)
    assert signed.status_code == 303 and signed.headers["location"] == f"{OWNER}/vehicles"
    cookie = signed.headers["set-cookie"]
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
    assert "Path=/sandbox/owner" in cookie
    listing = await browser_client.get(f"{OWNER}/vehicles")
    assert listing.headers["location"] == f"{OWNER}/vehicles/{VIN}"  # one vehicle: straight on
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert page.status_code == 200, page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "Fleet Tracker" in page.text and "Has access" in page.text
    assert "Battery level" in page.text and "Odometer" in page.text
    assert re.search(r'class="read-count">3<', page.text), page.text
    assert "never" not in page.text.split('class="last-read">')[1][:20]

    confirm = await browser_client.get(
        f"{OWNER}/vehicles/{VIN}/withdraw", params={"grant": granted.authorization_id}
    )
    assert confirm.status_code == 200
    assert await status_of(db, granted.authorization_id) == "approved"  # a GET changes nothing
    done = await withdraw(browser_client, granted.authorization_id)
    assert done.status_code == 303
    assert done.headers["location"] == f"{OWNER}/vehicles/{VIN}?done=withdrawn"
    said = await browser_client.get(done.headers["location"])
    assert "its access tokens no longer work" in said.text
    assert "Withdrawn on" in said.text

    assert await status_of(db, granted.authorization_id) == "revoked"
    refused = await pull(browser_client, granted.access_token)
    assert refused.status_code == 401
    assert "revoked" in refused.json()["errors"][0]["detail"]
    refreshed = await browser_client.post(
        "/sandbox/v1/access_tokens",
        data={"grant_type": "refresh_token", "refresh_token": granted.refresh_token,
              "client_id": app.client_id, "client_secret": app.client_secret or ""},
    )  # fmt: skip
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    [event] = await events(db, granted.authorization_id)
    assert event["action"] == "revoked"

    # Only once: the second says so, and nothing more is emitted.
    again = await browser_client.post(
        f"{OWNER}/vehicles/{VIN}/withdraw",
        data={"csrf_token": csrf_of(said), "grant": granted.authorization_id},
    )
    assert again.headers["location"].endswith("?done=already")
    assert "already withdrawn" in (await browser_client.get(again.headers["location"])).text
    assert len(await events(db, granted.authorization_id)) == 1


async def test_withdraw_all_ends_every_live_grant_of_the_vehicle(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    first = await grant_through_consent(browser_client, await insert_application(db))
    second = await grant_through_consent(browser_client, await insert_application(db))
    await sign_in(browser_client)
    confirm = await browser_client.get(f"{OWNER}/vehicles/{VIN}/withdraw", params={"grant": "all"})
    assert confirm.status_code == 200 and "Withdraw all access?" in confirm.text
    done = await browser_client.post(
        f"{OWNER}/vehicles/{VIN}/withdraw", data={"csrf_token": csrf_of(confirm), "grant": "all"}
    )
    assert done.headers["location"].endswith("?done=withdrawn")
    for granted in (first, second):
        assert await status_of(db, granted.authorization_id) == "revoked"
        assert (await pull(browser_client, granted.access_token)).status_code == 401


async def test_vehicle_code_sign_in_rotates_the_session(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    started = await sign_in(browser_client, brand="bmw")
    assert started.headers["location"] == f"{OWNER}/verify"
    before = browser_client.cookies.get("autoport_owner")
    # Not signed in yet: the vehicle's pages are out of reach.
    assert (await browser_client.get(f"{OWNER}/vehicles/{VIN}")).status_code == 401
    page = await browser_client.get(f"{OWNER}/verify")
    assert "Code shown in your vehicle" in page.text
    code = await current_vehicle_code(
        db.reader, environment=Environment.sandbox, vin=VIN, now_us=clock.now_us()
    )
    assert code is not None
    other = "000000" if code != "000000" else "111111"
    wrong = await browser_client.post(
        f"{OWNER}/verify", data={"csrf_token": csrf_of(page), "action": "code", "code": other}
    )
    assert wrong.status_code == 422 and "You have 4 more attempts" in wrong.text
    right = await browser_client.post(
        f"{OWNER}/verify", data={"csrf_token": csrf_of(page), "action": "code", "code": code}
    )
    assert right.status_code == 303 and right.headers["location"] == f"{OWNER}/vehicles"
    after = browser_client.cookies.get("autoport_owner")
    assert after and after != before
    assert (await browser_client.get(f"{OWNER}/vehicles/{VIN}")).status_code == 200
    # The token of before the proof is worth nothing now (session fixation).
    planted = await browser_client.get(
        f"{OWNER}/vehicles/{VIN}", headers=owner_cookie(before or "")
    )
    assert planted.status_code == 401


async def _consent_with_carmaker_login(
    client: httpx.AsyncClient, db: Database, vin: str, account: str
) -> str:
    """A real consent with the simulated carmaker login (mercedes_benz: oem_login)."""
    app = await insert_application(db)
    started = await client.get(
        "/sandbox/oauth/new", params=app.entry_params(brand="mercedes_benz", vin=vin)
    )
    assert started.status_code == 303
    for step, form in (("brand", {"brand": "mercedes_benz"}), ("vehicle", {"vin": vin})):
        page = await client.get(f"{CONSENT}/{step}")
        await client.post(f"{CONSENT}/{step}", data={"csrf_token": csrf_of(page), **form})
    page = await client.get(f"{CONSENT}/verify")
    login = await client.post(
        f"{CONSENT}/verify", data={"csrf_token": csrf_of(page), "action": "oem_login"}
    )
    state = query_of(login.headers["location"])["state"]
    back = await client.post(
        login.headers["location"].split("?")[0],
        data={"state": state, "email": account, "password": "sandbox"},
    )
    assert "/oauth/consent/oem-callback" in back.headers["location"]
    await client.get(back.headers["location"])
    review = await client.get(f"{CONSENT}/review")
    await client.post(
        f"{CONSENT}/review", data={"csrf_token": csrf_of(review), "decision": "approve"}
    )
    return str(await db.fetch_value("SELECT id FROM authorizations WHERE vin = :v", {"v": vin}))


async def test_carmaker_login_covers_every_vehicle_of_the_account(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    await _consent_with_carmaker_login(browser_client, db, VIN, "owner@example.com")
    await _consent_with_carmaker_login(browser_client, db, OTHER_VIN, "owner@example.com")
    stranger = "SBXTEST0000000003"
    await _consent_with_carmaker_login(browser_client, db, stranger, "someone@example.com")

    started = await sign_in(browser_client, brand="mercedes_benz")
    assert started.headers["location"] == f"{OWNER}/verify"
    page = await browser_client.get(f"{OWNER}/verify")
    assert "Sign in with Mercedes-Benz" in page.text
    login = await browser_client.post(
        f"{OWNER}/verify", data={"csrf_token": csrf_of(page), "action": "oem_login"}
    )
    assert "/sandbox/oauth/oem/mercedes_benz/login?state=" in login.headers["location"]
    state = query_of(login.headers["location"])["state"]
    failed = await browser_client.post(
        login.headers["location"].split("?")[0],
        data={"state": state, "email": "owner@example.com", "password": "wrong"},
    )
    assert failed.status_code == 401
    back = await browser_client.post(
        login.headers["location"].split("?")[0],
        data={"state": state, "email": "owner@example.com", "password": "sandbox"},
    )
    assert back.headers["location"].startswith(f"{OWNER}/oem-callback?result=")
    signed = await browser_client.get(back.headers["location"])
    assert signed.headers["location"] == f"{OWNER}/vehicles"
    listing = await browser_client.get(f"{OWNER}/vehicles")
    assert listing.status_code == 200
    assert VIN in listing.text and OTHER_VIN in listing.text and stranger not in listing.text
    assert (await browser_client.get(f"{OWNER}/vehicles/{OTHER_VIN}")).status_code == 200
    # Another account's vehicle: the same answer as a VIN nobody knows.
    assert (await browser_client.get(f"{OWNER}/vehicles/{stranger}")).status_code == 404
    # The carmaker's answer is single use.
    browser_client.cookies.clear()
    await sign_in(browser_client, brand="mercedes_benz")
    replay = await browser_client.get(back.headers["location"])
    assert replay.status_code == 403


async def test_owner_portal_brand_says_where_to_manage_access(
    browser_client: httpx.AsyncClient,
) -> None:
    answer = await sign_in(browser_client, brand="ford")
    assert answer.status_code == 200
    assert "Manage access at Ford" in answer.text
    assert "autoport_owner=" not in answer.headers.get("set-cookie", "")


async def test_german_pages(browser_client: httpx.AsyncClient, db: Database) -> None:
    await grant_through_consent(browser_client, await insert_application(db))
    page = await browser_client.get(OWNER, headers={"accept-language": "de-DE"})
    assert 'lang="de-DE"' in page.text and "Hersteller" in page.text
    await browser_client.post(
        f"{OWNER}/sign-in",
        data={"csrf_token": csrf_of(page), "brand": "sandbox", "vin": VIN, "locale": "de-DE"},
    )
    vehicle = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert "Zugriff von Fleet Tracker widerrufen" in vehicle.text
    assert "Batterie" in vehicle.text


async def test_consent_pages_link_to_the_portal(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    await browser_client.get(
        "/sandbox/oauth/new", params=app.entry_params(brand="sandbox", vin=VIN)
    )
    for step, form in (("brand", {"brand": "sandbox"}), ("vehicle", {"vin": VIN})):
        page = await browser_client.get(f"{CONSENT}/{step}")
        assert '/sandbox/owner">You can withdraw your consent at any time.</a>' in page.text
        await browser_client.post(f"{CONSENT}/{step}", data={"csrf_token": csrf_of(page), **form})
    review = await browser_client.get(f"{CONSENT}/review")
    assert "To withdraw your consent later, sign in to the owner portal" in review.text
    assert "/sandbox/owner</a>" in review.text


# ------------------------------------------------------------------------ admin API


async def test_admin_api_revokes_an_approved_grant_once(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    granted = await grant_through_consent(browser_client, await insert_application(db))
    url = f"/sandbox/admin/v1/consent/authorizations/{granted.authorization_id}/revoke"
    assert (await browser_client.post(url)).status_code == 401
    done = await browser_client.post(url, headers=bearer(ADMIN))
    assert done.status_code == 200, done.text
    assert done.json() == {"authorization_id": granted.authorization_id, "status": "revoked"}
    assert (await pull(browser_client, granted.access_token)).status_code == 401
    [event] = await events(db, granted.authorization_id)
    assert event["action"] == "revoked"
    again = await browser_client.post(url, headers=bearer(ADMIN))
    assert again.status_code == 409
    assert "already" in again.json()["errors"][0]["detail"]
    unknown = await browser_client.post(
        "/sandbox/admin/v1/consent/authorizations/nope/revoke", headers=bearer(ADMIN)
    )
    assert unknown.status_code == 404
    # Another environment's grant is unknown here.
    production = await browser_client.post(
        f"/admin/v1/consent/authorizations/{granted.authorization_id}/revoke",
        headers=bearer(ADMIN),
    )
    assert production.status_code == 404


# --------------------------------------------------------------------- attacks


async def test_another_vehicle_is_out_of_reach(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    """VIN swap in the URL: an owner signed in for one vehicle reaches nothing of another,
    and the answer does not say whether that VIN is known."""
    theirs = await grant_through_consent(
        browser_client, await insert_application(db), vin=OTHER_VIN
    )
    mine = await grant_through_consent(browser_client, await insert_application(db))
    await sign_in(browser_client)
    known = await browser_client.get(f"{OWNER}/vehicles/{OTHER_VIN}")
    unknown = await browser_client.get(f"{OWNER}/vehicles/SBXTEST0000000009")
    assert known.status_code == unknown.status_code == 404
    assert known.text == unknown.text
    for path in ("withdraw", "data.json", "data.csv", "access.json"):
        assert (await browser_client.get(f"{OWNER}/vehicles/{OTHER_VIN}/{path}")).status_code == 404
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    swapped = await browser_client.post(
        f"{OWNER}/vehicles/{OTHER_VIN}/withdraw",
        data={"csrf_token": csrf_of(page), "grant": theirs.authorization_id},
    )
    assert swapped.status_code == 404
    # Their grant id through my vehicle's URL: not mine either.
    smuggled = await browser_client.post(
        f"{OWNER}/vehicles/{VIN}/withdraw",
        data={"csrf_token": csrf_of(page), "grant": theirs.authorization_id},
    )
    assert smuggled.status_code == 404
    assert await status_of(db, theirs.authorization_id) == "approved"
    assert await status_of(db, mine.authorization_id) == "approved"


async def test_forged_missing_and_other_environment_sessions_are_refused(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    await grant_through_consent(browser_client, await insert_application(db))
    forged = await browser_client.get(
        f"{OWNER}/vehicles/{VIN}", headers=owner_cookie("forged-token")
    )
    assert forged.status_code == 401 and "Please sign in" in forged.text
    assert (await browser_client.get(f"{OWNER}/vehicles/{VIN}")).status_code == 401
    await sign_in(browser_client)
    token = browser_client.cookies.get("autoport_owner")
    assert token
    assert (await browser_client.get(f"{OWNER}/vehicles/{VIN}")).status_code == 200
    # The sandbox session's cookie sent to production's portal finds no session there.
    production = await browser_client.get(f"/owner/vehicles/{VIN}", headers=owner_cookie(token))
    assert production.status_code == 401
    # A consent session's cookie value is not an owner session either.
    consent_cookie = await browser_client.get(
        f"{OWNER}/vehicles/{VIN}", headers=owner_cookie("cs_" + token)
    )
    assert consent_cookie.status_code == 401


async def test_forms_without_a_valid_csrf_token_are_refused(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    granted = await grant_through_consent(browser_client, await insert_application(db))
    page = await browser_client.get(OWNER)
    no_token = await browser_client.post(f"{OWNER}/sign-in", data={"brand": "sandbox", "vin": VIN})
    assert no_token.status_code == 403 and "This form has expired" in no_token.text
    assert "autoport_owner=" not in no_token.headers.get("set-cookie", "")
    await browser_client.post(
        f"{OWNER}/sign-in", data={"csrf_token": csrf_of(page), "brand": "sandbox", "vin": VIN}
    )
    for csrf in ("", "0" * 64, csrf_of(page)):  # missing, wrong, the sign-in form's
        refused = await withdraw(browser_client, granted.authorization_id, csrf=csrf)
        assert refused.status_code == 403
    assert await status_of(db, granted.authorization_id) == "approved"
    out = await browser_client.post(f"{OWNER}/sign-out", data={})
    assert out.status_code == 403


async def test_sign_in_never_says_whether_a_vin_is_known(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    await grant_through_consent(browser_client, await insert_application(db))

    async def wrong_code(vin: str) -> httpx.Response:
        browser_client.cookies.clear()
        started = await sign_in(browser_client, brand="bmw", vin=vin)
        assert started.headers["location"] == f"{OWNER}/verify"
        page = await browser_client.get(f"{OWNER}/verify")
        code = await current_vehicle_code(
            db.reader, environment=Environment.sandbox, vin=vin, now_us=clock.now_us()
        )
        wrong = "000000" if code != "000000" else "111111"
        return await browser_client.post(
            f"{OWNER}/verify", data={"csrf_token": csrf_of(page), "action": "code", "code": wrong}
        )

    known = await wrong_code(VIN)
    unknown = await wrong_code("SBXTEST0000000008")
    assert known.status_code == unknown.status_code == 422

    def said(page: httpx.Response, vin: str) -> str:
        # The same page but for the VIN and the session's own form token.
        return CSRF.sub("", page.text.replace(vin, "V"))

    assert said(known, VIN) == said(unknown, "SBXTEST0000000008")


async def test_sign_in_attempts_are_throttled_per_vin_and_per_address(
    settings: Settings, clock: FrozenClock
) -> None:
    app = create_app(
        consent_settings(
            settings,
            owner_sign_in_vin_rate_limit="3/minute",
            owner_sign_in_ip_rate_limit="5/minute",
        ),
        clock=clock,
        run_background=False,
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8080"
        ) as client:

            async def attempt(vin: str = VIN) -> httpx.Response:
                client.cookies.clear()
                return await sign_in(client, vin=vin)

            answers = [(await attempt()).status_code for _ in range(4)]
            assert answers == [303, 303, 303, 429]
            busy = await attempt()
            assert "Too many attempts" in busy.text and int(busy.headers["retry-after"]) > 0
            # Another VIN from the same address: the address's limit (5) runs out too.
            assert (await attempt(OTHER_VIN)).status_code == 429


async def test_wrong_codes_lock_the_vin_across_consent_and_portal(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    """The consent flow's counters (consent_throttles): five wrong codes lock the VIN."""
    statuses = []
    for _ in range(6):
        browser_client.cookies.clear()
        await sign_in(browser_client, brand="bmw")
        page = await browser_client.get(f"{OWNER}/verify")
        answer = await browser_client.post(
            f"{OWNER}/verify", data={"csrf_token": csrf_of(page), "action": "code", "code": "x"}
        )
        statuses.append(answer.status_code)
    assert statuses[:4] == [422] * 4 and statuses[4:] == [429, 429]


async def test_production_portal_offers_no_sandbox_brand_and_keeps_its_own_sessions(
    browser_client: httpx.AsyncClient,
) -> None:
    page = await browser_client.get("/owner")
    assert page.status_code == 200
    assert 'value="sandbox"' not in page.text and 'value="bmw"' in page.text
    refused = await browser_client.post(
        "/owner/sign-in", data={"csrf_token": csrf_of(page), "brand": "sandbox", "vin": VIN}
    )
    assert refused.status_code == 422 and "Choose the carmaker" in refused.text
    # Production brands without a team's connector are push-fed: the carmaker's portal.
    elsewhere = await browser_client.post(
        "/owner/sign-in", data={"csrf_token": csrf_of(page), "brand": "bmw", "vin": VIN}
    )
    assert elsewhere.status_code == 200 and "Manage access at BMW" in elsewhere.text


async def test_ended_grants_show_for_30_days_and_sign_out_ends_the_session(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    granted = await grant_through_consent(browser_client, await insert_application(db))
    await sign_in(browser_client)
    assert (await withdraw(browser_client, granted.authorization_id)).status_code == 303
    clock.advance(29 * 86_400)
    browser_client.cookies.clear()
    await sign_in(browser_client)
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert "Withdrawn on" in page.text and "Withdraw access of" not in page.text
    clock.advance(2 * 86_400)
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert page.status_code == 401  # the session itself expired meanwhile
    browser_client.cookies.clear()
    await sign_in(browser_client)
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert "Fleet Tracker" not in page.text and "none had in the last 30 days" in page.text

    out = await browser_client.post(f"{OWNER}/sign-out", data={"csrf_token": csrf_of(page)})
    assert out.status_code == 303 and out.headers["location"] == OWNER
    assert (
        await db.fetch_value(
            "SELECT COUNT(*) FROM owner_sessions "
            "WHERE verified_at IS NOT NULL AND expires_at > :now",
            {"now": clock.now_us()},
        )
        == 0
    )
    assert (await browser_client.get(f"{OWNER}/vehicles/{VIN}")).status_code == 401


async def test_language_switch_of_a_page_answering_a_post_leads_to_a_get(
    browser_client: httpx.AsyncClient,
) -> None:
    page = await browser_client.get(OWNER)
    answer = await browser_client.post(
        f"{OWNER}/sign-in", data={"csrf_token": csrf_of(page), "brand": "ford", "vin": VIN}
    )
    assert f'href="{OWNER}?lang=de-DE"' in answer.text
    german = await browser_client.get(f"{OWNER}?lang=de-DE")
    assert german.status_code == 200 and 'lang="de-DE"' in german.text


# ------------------------------------------------------- a newcomer's words (#38.10)


async def test_a_first_visit_is_asked_to_sign_in_not_told_a_session_ended(
    browser_client: httpx.AsyncClient,
) -> None:
    first = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert first.status_code == 401
    assert "Please sign in" in first.text and "Your session has ended" not in first.text
    # A cookie that names no session any more: that one has ended.
    ended = await browser_client.get(
        f"{OWNER}/vehicles/{VIN}", headers=owner_cookie("no-such-session")
    )
    assert ended.status_code == 401 and "Your session has ended" in ended.text


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("SBXTEST000000001", "A VIN has 17 characters; you entered 16."),
        ("SBXTEST00000000O1", "never contains the letters I, O or Q"),
        ("SBXTEST0000000#01", "These characters cannot be part of a VIN: #"),
        ("WBA00000000000001", "belongs to a vehicle of another carmaker (bmw, mini)"),
    ],
)
async def test_a_wrong_vin_is_told_what_is_wrong_with_it(
    browser_client: httpx.AsyncClient, typed: str, said: str
) -> None:
    page = await browser_client.get(OWNER)
    brand = "ford" if typed.startswith("WBA") else "sandbox"
    answer = await browser_client.post(
        f"{OWNER}/sign-in", data={"csrf_token": csrf_of(page), "brand": brand, "vin": typed}
    )
    assert answer.status_code == 422
    assert said in answer.text, answer.text
    assert 'id="form-error"' in answer.text


async def test_the_language_link_stays_in_the_environment(
    browser_client: httpx.AsyncClient,
) -> None:
    """Issue #36: the "Deutsch" link of /sandbox/owner led to the production portal."""
    page = await browser_client.get(OWNER)
    assert re.findall(r'href="([^"]+)" lang="de-DE"', page.text) == [f"{OWNER}?lang=de-DE"]
    german = await browser_client.get(f"{OWNER}?lang=de-DE")
    assert german.status_code == 200 and 'lang="de-DE"' in german.text
