"""The consent flow over HTTP, on SQLite and PostgreSQL: the entry point's checks, each
step, the decision, and what ends up stored."""

from __future__ import annotations

import httpx
import orjson
import pytest

from autoport.consent.pages import CSRF as FORM_TOKENS
from autoport.kit.clock import FrozenClock, to_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from tests.factories import pkce_pair

from .conftest import (
    BATTERY_LEVEL,
    VIN,
    exchange,
    insert_application,
    query_of,
    read_vehicle_data,
    store_vehicle_data,
)
from .flow import ENTRY, PAGES, csrf_of, post, start, stored_authorizations, walk_to_review

# ----------------------------------------------------------------- entry point checks


async def test_unknown_client_gets_an_error_page_and_no_redirect(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    app.client_id = "no-such-client"
    response = await start(browser_client, app)
    assert response.status_code == 400
    assert "location" not in response.headers
    assert "Unknown application" in response.text


async def test_missing_client_id_gets_an_error_page(browser_client: httpx.AsyncClient) -> None:
    response = await browser_client.get(ENTRY, params={"redirect_uri": "https://evil.example/"})
    assert response.status_code == 400
    assert "location" not in response.headers


async def test_unregistered_redirect_uri_gets_an_error_page_and_no_redirect(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    for uri in ("https://evil.example/callback", app.redirect_uri + "/", ""):
        response = await start(browser_client, app, redirect_uri=uri)
        assert response.status_code == 400, uri
        assert "location" not in response.headers
        assert "Invalid return address" in response.text or "Unknown" not in response.text


async def test_client_of_the_other_environment_is_unknown(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db, environment=Environment.production)
    response = await start(browser_client, app)  # the sandbox entry point
    assert response.status_code == 400
    assert "location" not in response.headers


@pytest.mark.parametrize(
    ("params", "error", "words"),
    [
        ({"validity_start_date": "yesterday"}, "invalid_request", "validity_start_date"),
        ({"validity_end_date": "2020-01-01T00:00:00Z"}, "invalid_request", "validity_end_date"),
        (
            {"validity_start_date": "2031-01-02T00:00:00Z", "validity_end_date": "2031-01-01"},
            "invalid_request",
            "validity_end_date",
        ),
        ({"app_id": "0" * 24}, "invalid_request", "app_id"),
        ({"app_id": ""}, "invalid_request", "app_id"),
        ({"vin": "SHORT"}, "invalid_request", "vin"),
        ({"brand": "trabant"}, "invalid_request", "brand"),
        ({"brand": "tesla"}, "invalid_request", "not activated"),
        ({"code_challenge_method": "S512"}, "invalid_request", "code_challenge_method"),
        ({"code_challenge": "short"}, "invalid_request", "code_challenge"),
        ({"response_type": "token"}, "invalid_request", "response_type"),
    ],
)
async def test_bad_parameters_redirect_with_an_error_and_the_state(
    browser_client: httpx.AsyncClient,
    db: Database,
    params: dict[str, str],
    error: str,
    words: str,
) -> None:
    app = await insert_application(db)
    response = await start(browser_client, app, **params)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith(app.redirect_uri + "?")
    query = query_of(location)
    assert query["error"] == error
    assert words in query["error_description"]
    assert query["state"] == "st-42"
    assert "code" not in query
    assert await db.fetch_value("SELECT COUNT(*) FROM consent_sessions") == 0


async def test_public_client_without_pkce_is_refused(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db, client_type="public")
    query = query_of((await start(browser_client, app, code_challenge=None)).headers["location"])
    assert query["error"] == "invalid_request"
    assert "PKCE" in query["error_description"]


async def test_disabled_application_is_an_unauthorized_client(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db, disabled=True)
    query = query_of((await start(browser_client, app)).headers["location"])
    assert query["error"] == "unauthorized_client"


async def test_redirect_keeps_the_registered_uris_own_query(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    uri = "https://app.example.com/cb?tenant=7"
    app = await insert_application(db, redirect_uris=(uri,))
    response = await start(browser_client, app, vin="BAD")
    query = query_of(response.headers["location"])
    assert query["tenant"] == "7" and query["error"] == "invalid_request"


# ------------------------------------------------------------------- the whole flow


async def test_instant_flow_ends_with_a_code_that_buys_a_token_that_reads_the_vehicle(
    browser_client: httpx.AsyncClient,
    db: Database,
    clock: FrozenClock,
) -> None:
    app = await insert_application(db)
    await store_vehicle_data(db, now_us=clock.now_us())
    verifier, challenge = pkce_pair()
    end = to_iso(clock.now_us() + 86_400 * 1_000_000 * 30)
    started = await start(
        browser_client, app, brand="sandbox", vin=VIN, code_challenge=challenge,
        validity_end_date=end,
    )  # fmt: skip
    assert started.status_code == 303
    assert "cs_" not in started.headers["location"]  # nothing secret in the URL
    cookie = started.headers["set-cookie"]
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
    assert (
        (await post(browser_client, "brand", brand="sandbox"))
        .headers["location"]
        .endswith("/vehicle")
    )
    # instant: the VIN is enough; straight on to the review.
    after_vin = await post(browser_client, "vehicle", vin=VIN.lower())
    assert after_vin.headers["location"].endswith("/review")
    review = await browser_client.get(f"{PAGES}/review")
    assert "Battery level" in review.text and "Odometer" in review.text
    assert VIN in review.text
    decided = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": csrf_of(review), "decision": "approve"}
    )
    assert decided.status_code == 303
    location = decided.headers["location"]
    assert location.startswith(app.redirect_uri + "?")
    query = query_of(location)
    assert query["state"] == "st-42"
    [grant] = await stored_authorizations(db)
    assert grant["status"] == "approved"
    assert grant["vin"] == VIN and grant["brand"] == "sandbox"
    assert grant["environment"] == "sandbox"
    assert sorted(orjson.loads(str(grant["properties"]))) == sorted(app.properties)
    assert grant["valid_from"] == clock.now_us()
    assert grant["valid_until"] == clock.now_us() + 86_400 * 1_000_000 * 30
    assert grant["subject"]

    # The code is bound to the PKCE challenge: without the verifier it buys nothing.
    unverified = await exchange(browser_client, app, query["code"])
    assert unverified.status_code == 400
    assert unverified.json()["error"] == "invalid_grant"
    tokens = await exchange(browser_client, app, query["code"], verifier)
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert body["status"] == "approved"
    assert body["authorization_id"] == grant["id"]
    assert body["validity_end_date"] == end
    data = await read_vehicle_data(browser_client, body["access_token"])
    assert data.status_code == 200, data.text
    assert data.json()["vin"] == VIN
    assert data.json()["charging"]["battery_level"]["data"] == BATTERY_LEVEL
    # Single use: the code bought its tokens once.
    again = await exchange(browser_client, app, query["code"], verifier)
    assert again.json()["error"] == "invalid_grant"


async def test_subject_is_stable_for_the_same_vehicle(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    for _ in range(2):
        await walk_to_review(browser_client, app)
        review = await browser_client.get(f"{PAGES}/review")
        await browser_client.post(
            f"{PAGES}/review", data={"csrf_token": csrf_of(review), "decision": "approve"}
        )
    first, second = await stored_authorizations(db)
    assert first["subject"] == second["subject"]
    assert first["id"] != second["id"]


async def test_deny_redirects_with_access_denied_and_stores_nothing(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    await walk_to_review(browser_client, app)
    decided = await post(browser_client, "review", decision="deny")
    assert decided.status_code == 303
    query = query_of(decided.headers["location"])
    assert query == {
        "error": "access_denied",
        "error_description": "the vehicle owner denied the request",
        "state": "st-42",
        "iss": "http://127.0.0.1:8080/sandbox",
    }
    assert await stored_authorizations(db) == []
    assert await db.fetch_all("SELECT code_hash FROM authorization_codes") == []


async def test_a_second_approve_of_the_same_session_creates_nothing(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    await walk_to_review(browser_client, app)
    review = await browser_client.get(f"{PAGES}/review")
    token = csrf_of(review)
    cookie = browser_client.cookies.get("autoport_consent")
    first = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": token, "decision": "approve"}
    )
    assert first.status_code == 303
    browser_client.cookies.set("autoport_consent", cookie or "", path="/sandbox/oauth")
    again = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": token, "decision": "approve"}
    )
    assert again.status_code == 400
    assert "already complete" in again.text
    assert len(await stored_authorizations(db)) == 1


async def test_missing_or_wrong_csrf_token_is_refused_and_changes_nothing(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    await walk_to_review(browser_client, app)
    for form in ({"decision": "approve"}, {"decision": "approve", "csrf_token": "forged"}):
        answer = await browser_client.post(f"{PAGES}/review", data=form)
        assert answer.status_code == 403
        assert "could not be verified" in answer.text
    assert await stored_authorizations(db) == []
    refused = await browser_client.post(f"{PAGES}/vehicle", data={"vin": "SBXTEST0000000002"})
    assert refused.status_code == 403
    assert await db.fetch_value("SELECT vin FROM consent_sessions") == VIN


async def test_csrf_token_of_another_session_is_refused(
    browser_client: httpx.AsyncClient, db: Database, consent_app: object
) -> None:
    app = await insert_application(db)
    await walk_to_review(browser_client, app)
    secret = consent_app.state.autoport.settings.session_secret.get_secret_value()  # type: ignore[attr-defined]
    foreign = FORM_TOKENS.token(secret.encode(), "cs_someone_else")
    answer = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": foreign, "decision": "approve"}
    )
    assert answer.status_code == 403


async def test_expired_session_shows_a_clear_page(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    app = await insert_application(db)
    await walk_to_review(browser_client, app)
    review = await browser_client.get(f"{PAGES}/review")
    clock.advance(901)
    page = await browser_client.get(f"{PAGES}/review")
    assert page.status_code == 410
    assert "Your session has expired" in page.text
    decided = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": csrf_of(review), "decision": "approve"}
    )
    assert decided.status_code == 410
    assert await stored_authorizations(db) == []


async def test_pages_without_a_session_say_so(browser_client: httpx.AsyncClient) -> None:
    for step in ("brand", "vehicle", "verify", "review"):
        page = await browser_client.get(f"{PAGES}/{step}")
        assert page.status_code == 400
        assert "No consent in progress" in page.text


async def test_one_handler_renders_the_pages_errors_in_the_request_s_language(
    browser_client: httpx.AsyncClient,
) -> None:
    # Every page's ErrorPage goes through the one handler (consent.routes.
    # install_error_pages): HTML, in the language asked for (query, else the browser's).
    for step in ("brand", "vehicle", "verify", "review"):
        german = await browser_client.get(f"{PAGES}/{step}", params={"lang": "de-DE"})
        assert german.status_code == 400 and german.headers["content-type"].startswith("text/html")
        assert "Keine Einwilligung in Bearbeitung" in german.text
        posted = await browser_client.post(
            f"{PAGES}/{step}", data={"csrf_token": "x"}, headers={"Accept-Language": "de"}
        )
        assert posted.status_code == 400 and "Keine Einwilligung in Bearbeitung" in posted.text
    # The API's errors keep their JSON shapes: the admin call of the same router, and
    # the authorization server's token endpoint.
    admin = await browser_client.post("/sandbox/admin/v1/consent/authorizations/x/approve")
    assert admin.status_code == 401 and "json" in admin.headers["content-type"]
    token = await browser_client.post("/sandbox/v1/access_tokens", data={"grant_type": "nope"})
    assert token.status_code in (400, 401) and "error" in token.json()


async def test_bad_vin_is_shown_again_with_a_clear_message(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    await start(browser_client, app, brand="sandbox")
    await post(browser_client, "brand", brand="sandbox")
    short = await post(browser_client, "vehicle", vin="WBA123")
    assert short.status_code == 422
    assert "A VIN has 17 characters; you entered 6." in short.text
    assert 'aria-invalid="true"' in short.text and 'value="WBA123"' in short.text
    ioq = await post(browser_client, "vehicle", vin="WBAOOOOOOOOOOOOOO")
    assert "never contains the letters I, O or Q" in ioq.text
    chars = await post(browser_client, "vehicle", vin="WBA12345678901#$%")
    assert "cannot be part of a VIN: # $ %" in chars.text
    assert await db.fetch_value("SELECT vin FROM consent_sessions") is None


async def test_brand_not_activated_for_the_application_is_refused_on_the_page(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    await start(browser_client, app)
    answer = await post(browser_client, "brand", brand="tesla")
    assert answer.status_code == 422
    assert "Choose the carmaker" in answer.text


async def test_steps_cannot_be_skipped(browser_client: httpx.AsyncClient, db: Database) -> None:
    app = await insert_application(db)
    await start(browser_client, app)
    skipped = await browser_client.get(f"{PAGES}/review")
    assert skipped.status_code == 303 and skipped.headers["location"].endswith("/brand")
    page = await browser_client.get(f"{PAGES}/brand")
    forced = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": csrf_of(page), "decision": "approve"}
    )
    assert forced.status_code == 400
    assert await stored_authorizations(db) == []


async def test_every_page_carries_the_security_headers(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    responses = [await start(browser_client, app, brand="sandbox", vin=VIN)]
    for step in ("brand", "vehicle"):
        responses.append(await browser_client.get(f"{PAGES}/{step}"))
    await walk_to_review(browser_client, app)
    responses.append(await browser_client.get(f"{PAGES}/review"))
    responses.append(await browser_client.get(ENTRY))  # the error page
    for response in responses:
        headers = response.headers
        assert headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "script-src" not in headers["content-security-policy"]
        assert "default-src 'none'" in headers["content-security-policy"]
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["cache-control"] == "no-store"
    assert "https://app.example.com" in responses[3].headers["content-security-policy"]


async def test_stylesheet_is_served(browser_client: httpx.AsyncClient) -> None:
    css = await browser_client.get(f"{PAGES}/static/consent.css")
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    assert ":focus-visible" in css.text


# ----------------------------------------------------------------------- languages


async def test_accept_language_chooses_german(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(db)
    await browser_client.get(
        ENTRY,
        params=app.entry_params(brand="sandbox"),
        headers={"Accept-Language": "fr-FR;q=0.9, de-AT;q=0.8, en;q=0.1"},
    )
    page = await browser_client.get(f"{PAGES}/brand")
    assert 'lang="de-DE"' in page.text
    assert "Von welchem Hersteller ist Ihr Fahrzeug?" in page.text


async def test_locale_parameter_wins_and_the_switch_changes_language(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    app = await insert_application(db)
    clock.current = 1_800_000_000_000_000  # 15 January 2027, 08:00 UTC
    end = "2027-03-01T12:30:00Z"
    await browser_client.get(
        ENTRY,
        params=app.entry_params(brand="sandbox", vin=VIN, locale="de-DE", validity_end_date=end),
        headers={"Accept-Language": "en-GB"},
    )
    await post(browser_client, "brand", brand="sandbox")
    await post(browser_client, "vehicle", vin=VIN)
    german = await browser_client.get(f"{PAGES}/review")
    assert "Die Anwendung bittet um 4 Datenpunkte:" in german.text
    assert "Ladezustand der Batterie" in german.text or "Batterie" in german.text
    assert "01.03.2027, 12:30:00 UTC" in german.text
    switched = await browser_client.get(f"{PAGES}/review", params={"lang": "en-GB"})
    assert switched.status_code == 303 and switched.headers["location"].endswith("/review")
    english = await browser_client.get(f"{PAGES}/review")
    assert "The application asks for 4 data items:" in english.text
    assert "1 Mar 2027, 12:30:00 UTC" in english.text
    assert 'lang="en-GB"' in english.text


async def test_busy_database_at_the_entry_point_is_temporarily_unavailable(
    browser_client: httpx.AsyncClient, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from autoport.consent import repository

    app = await insert_application(db)

    async def locked(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(repository, "create_session", locked)
    query = query_of((await start(browser_client, app)).headers["location"])
    assert query["error"] == "temporarily_unavailable"
    assert query["state"] == "st-42"


async def test_entry_point_follows_the_auth_url_setting(
    settings: object, clock: FrozenClock
) -> None:
    from autoport.app import create_app

    from .conftest import consent_settings

    custom = consent_settings(settings, auth_url="https://consent.example.com/authorize")  # type: ignore[arg-type]
    app = create_app(custom, clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        application = await insert_application(app.state.autoport.database)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            moved = await c.get("/sandbox/authorize", params=application.entry_params())
            assert moved.status_code == 303
            assert moved.headers["location"] == "/sandbox/oauth/consent/brand"
            old = await c.get("/sandbox/oauth/new", params=application.entry_params())
            assert old.status_code == 404


async def test_a_mobile_app_gets_its_code_at_its_registered_url_scheme(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(
        db,
        client_type="public",
        url_scheme="com.example.fleet",
        redirect_uris=("com.example.fleet:/oauth/callback",),
    )
    verifier, challenge = pkce_pair()
    await walk_to_review(browser_client, app, code_challenge=challenge)
    review = await browser_client.get(f"{PAGES}/review")
    decided = await browser_client.post(
        f"{PAGES}/review", data={"csrf_token": csrf_of(review), "decision": "approve"}
    )
    assert decided.status_code == 303
    location = decided.headers["location"]
    assert location.startswith("com.example.fleet:/oauth/callback?")
    tokens = await exchange(browser_client, app, query_of(location)["code"], verifier)
    assert tokens.status_code == 200, tokens.text


# ------------------------------------------------------ mobile app: a bare URL scheme


async def test_mobile_app_registered_with_its_bare_scheme_gets_the_code_and_exchanges_it(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    """The original's mobile example: redirect_uri is the app's scheme on its own."""
    app = await insert_application(
        db,
        client_type="public",
        url_scheme="com.example.app123",
        redirect_uris=("com.example.app123",),
    )
    verifier, challenge = pkce_pair()
    await walk_to_review(browser_client, app, code_challenge=challenge)
    review = await browser_client.get(f"{PAGES}/review")
    assert "form-action 'self' com.example.app123:;" in review.headers["content-security-policy"]
    decided = await post(browser_client, "review", decision="approve")
    location = decided.headers["location"]
    # An absolute URI the platforms' parsers read the query of (RFC 8252 §7.1 form).
    assert location.startswith("com.example.app123:/?code=")
    received = query_of(location)
    assert received["state"] == "st-42"
    # The exchange names the redirect URI exactly as registered.
    tokens = await exchange(browser_client, app, received["code"], verifier)
    assert tokens.status_code == 200, tokens.text
    assert tokens.json()["status"] == "approved"


async def test_mobile_app_with_a_bare_scheme_learns_of_a_denial(
    browser_client: httpx.AsyncClient, db: Database
) -> None:
    app = await insert_application(
        db,
        client_type="public",
        url_scheme="com.example.app123",
        redirect_uris=("com.example.app123",),
    )
    _, challenge = pkce_pair()
    await walk_to_review(browser_client, app, code_challenge=challenge)
    denied = await post(browser_client, "review", decision="deny")
    assert denied.headers["location"].startswith("com.example.app123:/?error=access_denied")
