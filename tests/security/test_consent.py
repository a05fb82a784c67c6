"""Attacks on ownership verification by vehicle code (both backends): a code carried to
another VIN, guessing spread over many sessions or many VINs, a victim's display flooded
with codes, parallel guesses, a restart in the middle. Each owner or attacker is its
own browser (cookie jar) at its own client address."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.proof.service import current_vehicle_code
from tests.consent.conftest import ConsentApp, consent_settings, insert_application
from tests.consent.flow import PAGES, post, start, stored_authorizations

VICTIM_VIN = "SBXVEHCLE00000001"
OWN_VIN = "SBXATTACK00000001"
ATTACKER = "203.0.113.66"
CSRF_VALUE = re.compile(r'name="csrf_token" value="[^"]+"')
OWNER = "198.51.100.10"


@contextlib.asynccontextmanager
async def running(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    app = create_app(settings, clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def consent_app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    async with running(consent_settings(settings), clock) as app:
        yield app


@pytest.fixture
def db(consent_app: FastAPI) -> Database:
    database: Database = consent_app.state.autoport.database
    return database


@contextlib.asynccontextmanager
async def browser(app: FastAPI, address: str) -> AsyncIterator[httpx.AsyncClient]:
    """One browser at one client address (a fresh cookie jar: a fresh session)."""
    transport = httpx.ASGITransport(app=app, client=(address, 40_000))
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
    ) as client:
        yield client


async def open_session(client: httpx.AsyncClient, app: ConsentApp, vin: str) -> httpx.Response:
    """Entry, brand `bmw` (vehicle_code), VIN: the vehicle is asked to show a code."""
    started = await start(client, app, brand="bmw")
    assert started.status_code == 303, started.text[:300]
    assert (await post(client, "brand", brand="bmw")).status_code == 303
    return await post(client, "vehicle", vin=vin)


async def display(db: Database, clock: FrozenClock, vin: str) -> str | None:
    return await current_vehicle_code(
        db.reader, environment=Environment.sandbox, vin=vin, now_us=clock.now_us()
    )


async def codes_issued(db: Database, vin: str) -> int:
    count = await db.fetch_value(
        "SELECT COUNT(*) FROM consent_vehicle_codes WHERE vin = :vin", {"vin": vin}
    )
    return int(count)


def wrong(code: str | None) -> str:
    return f"{(int(code or '0') + 1) % 1_000_000:06d}"


async def submit(client: httpx.AsyncClient, code: str) -> httpx.Response:
    return await post(client, "verify", action="code", code=code)


# ------------------------------------------------- a code carried to another VIN (4)


async def test_own_code_does_not_verify_a_victims_locked_vin_after_the_lockout(
    settings: Settings, clock: FrozenClock
) -> None:
    # A lockout shorter than the code's lifetime, so the own code would still be live.
    short = consent_settings(settings, consent_vehicle_code_lockout_seconds=120)
    async with running(short, clock) as consent_app:
        await attack_with_own_code(consent_app, consent_app.state.autoport.database, clock)


async def attack_with_own_code(consent_app: FastAPI, db: Database, clock: FrozenClock) -> None:
    app = await insert_application(db)
    async with browser(consent_app, ATTACKER) as attacker:
        # Lock the victim's VIN with wrong codes.
        await open_session(attacker, app, VICTIM_VIN)
        victim_code = await display(db, clock, VICTIM_VIN)
        for _ in range(5):
            await submit(attacker, wrong(victim_code))
        attacker.cookies.clear()
        # A session for the attacker's own car: its code is read off its display.
        await open_session(attacker, app, OWN_VIN)
        own_code = await display(db, clock, OWN_VIN)
        assert own_code is not None
        # Switch the session to the victim's VIN while it is locked (no new code shown).
        switched = await post(attacker, "vehicle", vin=VICTIM_VIN)
        assert switched.status_code == 303
        assert await display(db, clock, VICTIM_VIN) is None
        clock.advance(121)
        answer = await submit(attacker, own_code)
        review = await attacker.get(f"{PAGES}/review")
    assert answer.status_code == 422, answer.text[:500]
    assert "expired or was already used" in answer.text
    assert review.status_code == 303 and review.headers["location"].endswith("/verify")
    assert await stored_authorizations(db) == []
    # The switch voided the attacker's own code: its display went blank.
    assert await display(db, clock, OWN_VIN) is None


async def test_own_code_does_not_verify_another_vin_it_was_not_shown_for(
    consent_app: FastAPI, db: Database, clock: FrozenClock
) -> None:
    app = await insert_application(db)
    async with browser(consent_app, ATTACKER) as attacker:
        await open_session(attacker, app, OWN_VIN)
        own_code = await display(db, clock, OWN_VIN)
        assert own_code is not None
        await post(attacker, "vehicle", vin=VICTIM_VIN)
        answer = await submit(attacker, own_code)
        review = await attacker.get(f"{PAGES}/review")
    victim_code = await display(db, clock, VICTIM_VIN)
    if victim_code != own_code:  # one chance in a million that the new code is the same
        assert answer.status_code == 422
        assert review.status_code == 303 and review.headers["location"].endswith("/verify")
    assert await stored_authorizations(db) == []


# ----------------------------------------------------- tries counted per VIN (5)


async def test_wrong_codes_over_fresh_sessions_lock_the_vin(
    consent_app: FastAPI, db: Database, clock: FrozenClock
) -> None:
    """The reported attack: 4 wrong codes in each of 10 fresh sessions (and addresses)."""
    app = await insert_application(db)
    answers: list[int] = []
    for attempt in range(10):
        async with browser(consent_app, f"203.0.113.{attempt + 1}") as attacker:
            await open_session(attacker, app, VICTIM_VIN)
            for _ in range(4):
                code = await display(db, clock, VICTIM_VIN)
                answers.append((await submit(attacker, wrong(code))).status_code)
    # Five wrong codes in all, then the VIN is locked for every session and address.
    assert answers[:4] == [422] * 4
    assert answers[4:] == [429] * (len(answers) - 4)
    async with browser(consent_app, OWNER) as owner:
        await open_session(owner, app, VICTIM_VIN)
        page = await owner.get(f"{PAGES}/verify")
        assert "Too many wrong codes" in page.text and 'name="code"' not in page.text
        refused = await submit(owner, "123456")
    assert refused.status_code == 429
    assert 899 <= int(refused.headers["retry-after"]) <= 900
    assert await stored_authorizations(db) == []


async def test_codes_shown_on_a_vehicle_are_limited_per_vin_across_sessions(
    consent_app: FastAPI, db: Database, clock: FrozenClock
) -> None:
    """A fresh session no longer means a fresh code on the victim's display."""
    app = await insert_application(db)
    issued: list[int] = []
    for attempt in range(8):
        async with browser(consent_app, f"203.0.113.{attempt + 1}") as attacker:
            await open_session(attacker, app, VICTIM_VIN)
            issued.append(await codes_issued(db, VICTIM_VIN))
            if attempt == 7:
                page = await attacker.get(f"{PAGES}/verify")
                again = await post(attacker, "verify", action="new_code")
    # Five codes in the window (consent_vehicle_code_issues); the sixth session gets none.
    assert issued == [1, 2, 3, 4, 5, 5, 5, 5]
    assert "as many codes as allowed" in page.text
    assert again.status_code == 429 and int(again.headers["retry-after"]) > 0
    # The window ends: the owner gets a code again.
    clock.advance(3601)
    async with browser(consent_app, OWNER) as owner:
        await open_session(owner, app, VICTIM_VIN)
        assert await display(db, clock, VICTIM_VIN) is not None


async def test_one_address_guessing_across_vins_is_locked_out(
    consent_app: FastAPI, db: Database, clock: FrozenClock
) -> None:
    """Spread over VINs (4 wrong each, under the VIN limit), one address gets 20 tries."""
    app = await insert_application(db)
    answers: list[int] = []
    async with browser(consent_app, ATTACKER) as attacker:
        for n in range(6):
            attacker.cookies.clear()
            await open_session(attacker, app, f"SBXSPREAD0000000{n}")
            for _ in range(4):
                code = await display(db, clock, f"SBXSPREAD0000000{n}")
                answers.append((await submit(attacker, wrong(code))).status_code)
    assert answers[:19] == [422] * 19
    assert answers[19:] == [429] * 5
    # Another address is not affected: the owner of one of those VINs verifies.
    async with browser(consent_app, OWNER) as owner:
        await open_session(owner, app, "SBXSPREAD00000005")
        code = await display(db, clock, "SBXSPREAD00000005")
        assert code is not None
        assert (await submit(owner, code)).status_code == 303


async def test_parallel_wrong_codes_never_exceed_the_vin_limit(
    consent_app: FastAPI, db: Database, clock: FrozenClock, settings: Settings
) -> None:
    app = await insert_application(db)
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(browser(consent_app, f"203.0.113.{n + 1}"))
            for n in range(5)
        ]
        for client in clients:
            await open_session(client, app, VICTIM_VIN)
        code = await display(db, clock, VICTIM_VIN)
        # Each session guesses twice at once: 10 guesses against a limit of 5.
        answers = await asyncio.gather(
            *(submit(client, wrong(code)) for client in clients for _ in range(2))
        )
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses.count(422) == 4 and statuses.count(429) == 6, statuses


async def test_a_lockout_survives_a_restart_and_binds_every_process(
    consent_app: FastAPI, db: Database, clock: FrozenClock, settings: Settings
) -> None:
    app = await insert_application(db)
    async with browser(consent_app, ATTACKER) as attacker:
        await open_session(attacker, app, VICTIM_VIN)
        for _ in range(5):
            await submit(attacker, wrong(await display(db, clock, VICTIM_VIN)))
    # Another app on the same database: a second process, or this one restarted.
    async with (
        running(consent_settings(settings), clock) as other,
        browser(other, OWNER) as owner,
    ):
        await open_session(owner, app, VICTIM_VIN)
        page = await owner.get(f"{PAGES}/verify")
    assert "Too many wrong codes" in page.text


async def test_a_locked_vin_looks_the_same_whether_or_not_the_vin_is_known(
    consent_app: FastAPI, db: Database, clock: FrozenClock
) -> None:
    from tests.consent.conftest import store_vehicle_data

    app = await insert_application(db)
    known, unknown = "SBXKNWN0000000001", "SBXUNKNWN00000001"
    await store_vehicle_data(db, vin=known, now_us=clock.now_us())
    pages: dict[str, Any] = {}
    for vin in (known, unknown):
        async with browser(consent_app, ATTACKER) as attacker:
            await open_session(attacker, app, vin)
            for _ in range(5):
                last = await submit(attacker, wrong(await display(db, clock, vin)))
            text = CSRF_VALUE.sub("csrf", last.text.replace(vin, "VIN"))
            pages[vin] = (last.status_code, last.headers["retry-after"], text)
    assert pages[known][:2] == (429, "900")
    assert pages[known] == pages[unknown]
