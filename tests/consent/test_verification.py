"""Ownership verification methods over HTTP (both backends): vehicle codes with their
attempt limit and lockout, the carmaker login round trip, and pending grants that the
carmaker approves or rejects later (admin API)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import orjson
import pytest

from autoport.apps import service as apps_service
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.proof.service import current_vehicle_code, oem_result, sign

from .conftest import (
    BATTERY_LEVEL,
    VIN,
    ConsentApp,
    consent_settings,
    exchange,
    insert_application,
    query_of,
    read_vehicle_data,
    store_vehicle_data,
)
from .flow import PAGES, csrf_of, post, start, stored_authorizations


async def to_verify(client: httpx.AsyncClient, db: Database, brand: str) -> ConsentApp:
    app = await insert_application(db)
    await start(client, app, brand=brand, vin=VIN)
    await post(client, "brand", brand=brand)
    answer = await post(client, "vehicle", vin=VIN)
    assert answer.status_code == 303
    return app


async def code_on_display(db: Database, clock: FrozenClock) -> str:
    code = await current_vehicle_code(
        db.reader, environment=Environment.sandbox, vin=VIN, now_us=clock.now_us()
    )
    assert code is not None and re.fullmatch(r"\d{6}", code)
    return code


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


# ---------------------------------------------------------------------- vehicle_code


async def test_vehicle_code_shown_in_the_vehicle_verifies_ownership(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    await to_verify(browser_client, db, "bmw")
    page = await browser_client.get(f"{PAGES}/verify")
    assert "six-digit code" in page.text
    code = await code_on_display(db, clock)
    stored = await db.fetch_one("SELECT code_hash, display_code FROM consent_vehicle_codes")
    assert stored is not None and code not in stored["code_hash"]
    answer = await post(browser_client, "verify", action="code", code=f" {code[:3]} {code[3:]} ")
    assert answer.status_code == 303 and answer.headers["location"].endswith("/review")
    # Used up: the display is blank and the same code does not work twice.
    assert (
        await current_vehicle_code(
            db.reader, environment=Environment.sandbox, vin=VIN, now_us=clock.now_us()
        )
        is None
    )
    review = await post(browser_client, "review", decision="approve")
    assert "code" in query_of(review.headers["location"])
    [grant] = await stored_authorizations(db)
    assert grant["status"] == "approved" and grant["brand"] == "bmw"


async def test_wrong_vehicle_code_counts_down_then_locks_the_vin_out(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    await to_verify(browser_client, db, "bmw")
    code = await code_on_display(db, clock)
    for left in (4, 3, 2, 1):
        answer = await post(browser_client, "verify", action="code", code=wrong(code))
        assert answer.status_code == 422
        plural = "attempt." if left == 1 else "attempts."
        assert f"You have {left} more {plural}" in answer.text
    locked = await post(browser_client, "verify", action="code", code=wrong(code))
    assert locked.status_code == 429
    assert "Too many wrong codes" in locked.text
    # Even the right code is refused now, and no new code is shown during the lockout.
    again = await post(browser_client, "verify", action="code", code=code)
    assert again.status_code == 429
    fresh = await post(browser_client, "verify", action="new_code")
    assert fresh.status_code == 429
    assert (
        await current_vehicle_code(
            db.reader, environment=Environment.sandbox, vin=VIN, now_us=clock.now_us()
        )
        is None
    )
    # A new consent session for the same VIN is locked out as well.
    browser_client.cookies.clear()
    await to_verify(browser_client, db, "bmw")
    blocked = await post(browser_client, "verify", action="code", code="000000")
    assert blocked.status_code == 429
    # After the lockout a new code can be asked for and used.
    clock.advance(901)
    browser_client.cookies.clear()
    await to_verify(browser_client, db, "bmw")
    code = await code_on_display(db, clock)
    ok = await post(browser_client, "verify", action="code", code=code)
    assert ok.status_code == 303
    assert await stored_authorizations(db) == []


async def test_new_vehicle_code_replaces_the_old_one_without_resetting_attempts(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    await to_verify(browser_client, db, "bmw")
    first = await code_on_display(db, clock)
    await post(browser_client, "verify", action="code", code=wrong(first))
    renewed = await post(browser_client, "verify", action="new_code")
    assert renewed.status_code == 303
    page = await browser_client.get(renewed.headers["location"])
    assert "Your vehicle shows a new code." in page.text
    second = await code_on_display(db, clock)
    if second != first:
        stale = await post(browser_client, "verify", action="code", code=first)
        assert "You have 3 more attempts." in stale.text


async def test_expired_vehicle_code_asks_for_a_new_one(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    await to_verify(browser_client, db, "bmw")
    code = await code_on_display(db, clock)
    clock.advance(601)
    answer = await post(browser_client, "verify", action="code", code=code)
    assert answer.status_code == 422
    assert "expired or was already used" in answer.text


async def test_review_is_out_of_reach_until_the_code_is_entered(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    await to_verify(browser_client, db, "bmw")
    skipped = await browser_client.get(f"{PAGES}/review")
    assert skipped.status_code == 303 and skipped.headers["location"].endswith("/verify")
    forced = await post(browser_client, "verify", action="code", code="")
    assert forced.status_code == 422
    page = await browser_client.get(f"{PAGES}/verify")
    decided = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": csrf_of(page), "decision": "approve"}
    )
    assert decided.status_code == 400
    assert await stored_authorizations(db) == []


# ------------------------------------------------------------------------- oem_login


async def login_at_carmaker(
    client: httpx.AsyncClient, email: str = "owner@example.com", password: str = "sandbox"
) -> httpx.Response:
    page = await client.get(f"{PAGES}/verify")
    assert "Sign in with Mercedes-Benz" in page.text
    to_oem = await client.post(
        f"{PAGES}/verify", data={"csrf_token": csrf_of(page), "action": "oem_login"}
    )
    assert to_oem.status_code == 303
    login_url = to_oem.headers["location"]
    assert urlsplit(login_url).path == "/sandbox/oauth/oem/mercedes_benz/login"
    login = await client.get(login_url)
    assert login.status_code == 200 and "password" in login.text
    state = query_of(login_url)["state"]
    return await client.post(
        urlsplit(login_url).path, data={"state": state, "email": email, "password": password}
    )


async def test_carmaker_login_verifies_ownership_with_a_stable_subject(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    subjects = []
    for _ in range(2):
        browser_client.cookies.clear()
        await to_verify(browser_client, db, "mercedes_benz")
        back = await login_at_carmaker(browser_client)
        assert back.status_code == 303
        callback = await browser_client.get(back.headers["location"])
        assert callback.status_code == 303 and callback.headers["location"].endswith("/review")
        decided = await post(browser_client, "review", decision="approve")
        assert "code" in query_of(decided.headers["location"])
        subjects.append((await stored_authorizations(db))[-1]["subject"])
    assert subjects[0] == subjects[1]


async def test_wrong_carmaker_password_stays_on_the_carmaker_login(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    await to_verify(browser_client, db, "mercedes_benz")
    failed = await login_at_carmaker(browser_client, password="guess")
    assert failed.status_code == 401
    assert "E-mail address or password is not right." in failed.text
    skipped = await browser_client.get(f"{PAGES}/review")
    assert skipped.headers["location"].endswith("/verify")


async def test_carmaker_answer_is_single_use_and_tamper_proof(
    browser_client: httpx.AsyncClient, db: Database, consent_app: object
) -> None:
    await to_verify(browser_client, db, "mercedes_benz")
    back = await login_at_carmaker(browser_client)
    callback_url = back.headers["location"]
    result = query_of(callback_url)["result"]
    body, _, mac = result.partition(".")
    forged = f"{body}.{'A' * len(mac)}"
    refused = await browser_client.get(f"{PAGES}/oem-callback", params={"result": forged})
    assert refused.status_code == 403
    assert "did not confirm" in refused.text
    assert (await browser_client.get(callback_url)).status_code == 303
    # Replayed within its lifetime: the nonce is gone, nothing is verified twice.
    await db.execute("UPDATE consent_sessions SET verified_at = NULL")
    replay = await browser_client.get(callback_url)
    assert replay.status_code == 403


async def test_carmaker_answer_for_another_session_is_refused(
    browser_client: httpx.AsyncClient, db: Database, consent_app: object, clock: FrozenClock
) -> None:
    await to_verify(browser_client, db, "mercedes_benz")
    secret = consent_app.state.autoport.settings.session_secret.get_secret_value().encode()  # type: ignore[attr-defined]
    state = {"sid": "another-session", "nonce": "n", "vin": VIN}
    result = oem_result(secret, state=state, account="x@example.com", now_us=clock.now_us())
    refused = await browser_client.get(f"{PAGES}/oem-callback", params={"result": result})
    assert refused.status_code == 403


async def test_carmaker_login_refuses_a_forged_state(
    browser_client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    forged = sign(b"not-the-secret", "oem-state", {"brand": "bmw", "exp": clock.now_us() + 10**9})
    page = await browser_client.get("/sandbox/oauth/oem/bmw/login", params={"state": forged})
    assert page.status_code == 400
    assert "sign-in link is not valid" in page.text
    posted = await browser_client.post(
        "/sandbox/oauth/oem/bmw/login",
        data={"state": forged, "email": "a@b.example", "password": "sandbox"},
    )
    assert posted.status_code == 400


# ---------------------------------------------------------------------- owner_portal


async def approve_pending(client: httpx.AsyncClient, db: Database) -> str:
    return (await consent_pending(client, db))[0]


async def consent_pending(client: httpx.AsyncClient, db: Database) -> tuple[str, str, ConsentApp]:
    """The owner consents for a brand verified through the carmaker's owner portal:
    (authorization id, code, application)."""
    app = await to_verify(client, db, "ford")
    review = await client.get(f"{PAGES}/review")
    assert "owner portal" in review.text
    decided = await client.post(
        f"{PAGES}/review", data={"csrf_token": csrf_of(review), "decision": "approve"}
    )
    code = query_of(decided.headers["location"])["code"]
    [grant] = await stored_authorizations(db)
    assert grant["status"] == "pending"
    return str(grant["id"]), code, app


def admin(consent_app: object) -> dict[str, str]:
    from autoport.config import rotate_admin_token

    settings = consent_app.state.autoport.settings  # type: ignore[attr-defined]
    token = rotate_admin_token(settings)
    import hashlib

    settings.admin_token_sha256 = hashlib.sha256(token.encode()).hexdigest()
    return {"Authorization": f"Bearer {token}"}


async def test_owner_portal_grant_is_pending_until_the_carmaker_approves(
    browser_client: httpx.AsyncClient, db: Database, consent_app: object, clock: FrozenClock
) -> None:
    await store_vehicle_data(db, now_us=clock.now_us())
    authorization_id, code, app = await consent_pending(browser_client, db)
    # The application gets its tokens at once; they read nothing while the grant waits.
    tokens = await exchange(browser_client, app, code)
    assert tokens.status_code == 200, tokens.text
    assert tokens.json()["status"] == "pending"
    assert tokens.json()["authorization_id"] == authorization_id
    access = tokens.json()["access_token"]
    waiting = await read_vehicle_data(browser_client, access)
    assert waiting.status_code == 403
    assert "pending" in waiting.json()["errors"][0]["detail"]

    headers = admin(consent_app)
    url = f"/sandbox/admin/v1/consent/authorizations/{authorization_id}/approve"
    answer = await browser_client.post(url, headers=headers)
    assert answer.status_code == 200
    assert answer.json() == {"authorization_id": authorization_id, "status": "approved"}
    [grant] = await stored_authorizations(db)
    assert grant["status"] == "approved"
    events = await db.fetch_all(
        "SELECT consumer, vin, application_id, payload FROM outbox "
        "WHERE event_type = 'authorization_changed' ORDER BY consumer"
    )
    assert [row["consumer"] for row in events] == ["streaming", "webhooks"]
    assert orjson.loads(events[0]["payload"]) == {
        "action": "approved",
        "authorization_id": authorization_id,
        "detail": None,
    }
    assert events[0]["vin"] == VIN and events[0]["application_id"] == app.id
    # The same token reads now.
    approved = await read_vehicle_data(browser_client, access)
    assert approved.status_code == 200, approved.text
    assert approved.json()["charging"]["battery_level"]["data"] == BATTERY_LEVEL
    again = await browser_client.post(url, headers=headers)
    assert again.status_code == 409
    assert "approved, not pending" in again.json()["errors"][0]["detail"]


async def test_carmaker_rejection_carries_its_detail(
    browser_client: httpx.AsyncClient, db: Database, consent_app: object
) -> None:
    authorization_id = await approve_pending(browser_client, db)
    answer = await browser_client.post(
        f"/sandbox/admin/v1/consent/authorizations/{authorization_id}/reject",
        headers={**admin(consent_app), "Content-Type": "application/json"},
        content=b'{"detail": "owner declined in the app"}',
    )
    assert answer.status_code == 200 and answer.json()["status"] == "rejected"
    payload = await db.fetch_value(
        "SELECT payload FROM outbox WHERE event_type = 'authorization_changed' LIMIT 1"
    )
    assert orjson.loads(payload)["detail"] == "owner declined in the app"


async def test_admin_decision_needs_the_admin_token_and_a_known_grant(
    browser_client: httpx.AsyncClient, db: Database, consent_app: object
) -> None:
    authorization_id = await approve_pending(browser_client, db)
    url = f"/sandbox/admin/v1/consent/authorizations/{authorization_id}/approve"
    assert (await browser_client.post(url)).status_code == 401
    wrong_token = {"Authorization": "Bearer ap_admin_nope"}
    assert (await browser_client.post(url, headers=wrong_token)).status_code == 401
    headers = admin(consent_app)
    unknown = await browser_client.post(
        "/sandbox/admin/v1/consent/authorizations/nope/approve", headers=headers
    )
    assert unknown.status_code == 404
    # The production environment does not see a sandbox grant.
    other_env = await browser_client.post(
        f"/admin/v1/consent/authorizations/{authorization_id}/approve", headers=headers
    )
    assert other_env.status_code == 404
    bad_body = await browser_client.post(
        url, headers={**headers, "Content-Type": "application/json"}, content=b'{"detail": 5}'
    )
    assert bad_body.status_code == 422
    assert (await stored_authorizations(db))[0]["status"] == "pending"


async def test_code_the_authorization_server_refuses_redirects_with_server_error(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await to_verify(browser_client, db, "sandbox")
    # The application became a public client while its owner was consenting in a
    # session without a PKCE challenge (opened by an autoport that did not require it of
    # confidential clients): the authorization server refuses to issue the code.
    await db.execute(
        "UPDATE applications SET client_type = 'public' WHERE id = :id", {"id": app.id}
    )
    await db.execute(
        "UPDATE consent_sessions SET code_challenge = NULL, code_challenge_method = NULL"
    )
    decided = await post(browser_client, "review", decision="approve")
    assert decided.status_code == 303
    query = query_of(decided.headers["location"])
    assert query["error"] == "server_error" and query["state"] == "st-42"
    assert query["iss"] == "http://127.0.0.1:8080/sandbox"
    # The grant was rolled back with the refused code, the session left open.
    assert await stored_authorizations(db) == []
    assert await db.fetch_value("SELECT COUNT(*) FROM authorization_codes") == 0
    assert (
        await db.fetch_value("SELECT COUNT(*) FROM consent_sessions WHERE completed_at IS NULL")
        == 1
    )


async def test_verification_method_comes_from_the_brand_registry(
    settings: object, clock: FrozenClock
) -> None:
    """Production: a brand without a connector of its own is push-only, whose owners are
    asked through the carmaker's portal. The sandbox environment: the sandbox connector
    serves every brand, its method follows its setting. (Production never offers the
    sandbox brand: tests/security/test_clearance.py.)"""
    from autoport.app import create_app

    custom = consent_settings(
        settings,  # type: ignore[arg-type]
        sandbox_connector_verification_methods={},
        sandbox_connector_verification_method="vehicle_code",
    )
    app = create_app(custom, clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        database = app.state.autoport.database
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
        ) as client:
            production = await insert_application(database, environment=Environment.production)
            sandbox = await insert_application(database, environment=Environment.sandbox)
            for consent_app, brand, method in (
                (production, "bmw", "owner_portal"),
                (sandbox, "sandbox", "vehicle_code"),
            ):
                prefix = "" if consent_app is production else "/sandbox"
                client.cookies.clear()
                await client.get(
                    f"{prefix}/oauth/new", params=consent_app.entry_params(brand=brand)
                )
                page = await client.get(f"{prefix}/oauth/consent/vehicle")
                answer = await client.post(
                    f"{prefix}/oauth/consent/vehicle",
                    data={"csrf_token": csrf_of(page), "vin": VIN},
                )
                assert answer.status_code == 303
                stored = await database.fetch_value(
                    "SELECT method FROM consent_sessions WHERE environment = :env "
                    "AND brand = :brand",
                    {
                        "brand": brand,
                        "env": "production" if consent_app is production else "sandbox",
                    },
                )
                assert stored == method
            client.cookies.clear()
            await to_verify(client, database, "bmw")
            page = await client.get(f"{PAGES}/verify")
            assert "six-digit code" in page.text


async def test_expired_sessions_are_purged_but_running_lockouts_stay(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    from autoport.consent.tasks import purge_expired_sessions

    await to_verify(browser_client, db, "bmw")
    code = await code_on_display(db, clock)
    for _ in range(5):
        await post(browser_client, "verify", action="code", code=wrong(code))
    browser_client.cookies.clear()
    await to_verify(browser_client, db, "sandbox")
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_sessions") == 2
    # A longer lockout than the sessions' lifetime: it outlives them.
    lockout_us = 10_000 * 1_000_000
    await db.execute("UPDATE consent_throttles SET blocked_until = blocked_until + :more "
                     "WHERE kind = 'vin_tries'", {"more": lockout_us})  # fmt: skip
    clock.advance(900 + 3601)
    async with db.transaction() as conn:
        assert await purge_expired_sessions(conn, now_us=clock.now_us()) == 2
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_vehicle_codes") == 0
    assert await db.fetch_value("SELECT kind FROM consent_throttles") == "vin_tries"
    browser_client.cookies.clear()
    await to_verify(browser_client, db, "bmw")
    page = await browser_client.get(f"{PAGES}/verify")
    assert "Too many wrong codes" in page.text
    clock.advance(10_000)
    async with db.transaction() as conn:
        assert await purge_expired_sessions(conn, now_us=clock.now_us()) == 1
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_sessions") == 0
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_throttles") == 0


async def test_verify_page_says_at_once_when_the_vin_is_locked_out(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    await to_verify(browser_client, db, "bmw")
    code = await code_on_display(db, clock)
    for _ in range(5):
        await post(browser_client, "verify", action="code", code=wrong(code))
    browser_client.cookies.clear()
    await to_verify(browser_client, db, "bmw")
    page = await browser_client.get(f"{PAGES}/verify")
    assert "Too many wrong codes" in page.text
    assert 'name="code"' not in page.text


def test_sandbox_verification_methods_accept_both_brand_spellings_and_refuse_unknown_brands(
    tmp_path: object,
) -> None:
    import pytest
    from pydantic import ValidationError

    from autoport.brands.registry import BrandRegistry
    from autoport.config import Settings

    settings = Settings(
        data_dir=tmp_path,
        sandbox_connector_verification_methods={"mercedes-benz": "oem_login"},
        sandbox_connector_verification_method="vehicle_code",
    )
    registry = BrandRegistry.from_settings(settings)
    assert registry.verification_method(Environment.sandbox, "mercedes_benz") == "oem_login"
    assert registry.verification_method(Environment.sandbox, "bmw") == "vehicle_code"
    # Production: the push-only connector's portal, whatever the sandbox says.
    assert registry.verification_method(Environment.production, "mercedes_benz") == "owner_portal"
    with pytest.raises(ValidationError, match="unknown brand 'trabant'"):
        Settings(sandbox_connector_verification_methods={"trabant": "instant"})
    with pytest.raises(ValidationError, match="sandbox_connector_verification_method"):
        Settings(sandbox_connector_verification_method="carrier_pigeon")


# ------------------------------------------------ what the review page says (#38.10)


def _step_class(page: httpx.Response, number: int) -> str:
    found = re.search(rf'<li([^>]*)><span class="num">{number}</span>', page.text)
    assert found, page.text[:2000]
    named = re.search(r'class="(\w+)"', found.group(1))
    return named.group(1) if named else ""


@pytest.mark.parametrize(("brand", "proven"), [("sandbox", False), ("ford", False), ("bmw", True)])
async def test_the_ownership_step_is_done_only_where_ownership_was_proven(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock, brand: str, proven: bool
) -> None:
    await to_verify(browser_client, db, brand)
    if proven:
        code = await code_on_display(db, clock)
        assert (await post(browser_client, "verify", action="code", code=code)).status_code == 303
    review = await browser_client.get(f"{PAGES}/review")
    assert review.status_code == 200
    assert _step_class(review, 2) == "done"
    assert _step_class(review, 3) == ("done" if proven else "skipped")
    assert _step_class(review, 4) == "current"


async def test_the_review_names_the_operating_company_and_links_the_privacy_policy(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    app = await to_verify(browser_client, db, "sandbox")
    review = await browser_client.get(f"{PAGES}/review")
    # Nothing given: the account's name, and the missing policy said plainly.
    assert re.search(r'class="operator">Fleet Tracker account<', review.text), review.text
    assert "gives no privacy policy" in review.text
    async with db.transaction() as conn:
        await apps_service.update_application(
            conn,
            environment=Environment.sandbox,
            app_id=app.id,
            now_us=clock.now_us(),
            company="Fleet Tracker GmbH",
            privacy_url="https://fleet.example.com/privacy",
        )
    review = await browser_client.get(f"{PAGES}/review")
    assert re.search(r'class="operator">Fleet Tracker GmbH<', review.text)
    assert '<a href="https://fleet.example.com/privacy" rel="noopener noreferrer">' in review.text
    assert "Privacy policy of Fleet Tracker" in review.text
