"""The owner thinks in applications (issue #32 item 4), on SQLite and PostgreSQL: two
people of one household consent in the same application for the same car, so the
application holds two grants for it; the portal shows it once with both consents inside,
and withdrawing it ends both: every token of both grants stops reading at once, and the
application's own token reads nothing of the car. Another owner's entry of the same
application (another car) is out of reach: not shown, not withdrawable, not touched."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from autoport.kit.db import Database
from tests.consent.conftest import VIN, ConsentApp, insert_application, store_vehicle_data
from tests.factories import bearer

from .conftest import OWNER, csrf_of, grant_through_consent, sign_in

OTHER_VIN = "SBXTEST0000000002"
PULL = "/sandbox/v1/vehicle-data/autoapi-13/{vin}"


@pytest.fixture
async def household(consent_app: FastAPI) -> AsyncIterator[tuple[httpx.AsyncClient, ...]]:
    """Three browsers: two people of one household, and the owner of another car."""
    clients = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=consent_app),
            base_url="http://127.0.0.1:8080",
            follow_redirects=False,
        )
        for _ in range(3)
    ]
    try:
        yield tuple(clients)
    finally:
        for client in clients:
            await client.aclose()


async def status_of(db: Database, authorization_id: str) -> str:
    return str(
        await db.fetch_value(
            "SELECT status FROM authorizations WHERE id = :id", {"id": authorization_id}
        )
    )


async def application_token(client: httpx.AsyncClient, app: ConsentApp) -> str:
    answer = await client.post(
        "/sandbox/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": app.client_id,
            "client_secret": app.client_secret or "",
        },
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


async def test_an_application_is_one_entry_and_withdrawing_it_ends_all_its_grants(
    household: tuple[httpx.AsyncClient, ...], db: Database, clock: object
) -> None:
    alice, bob, stranger = household
    app = await insert_application(db)
    await store_vehicle_data(db, vin=VIN, now_us=clock.now_us())  # type: ignore[attr-defined]
    await store_vehicle_data(db, vin=OTHER_VIN, now_us=clock.now_us())  # type: ignore[attr-defined]
    first = await grant_through_consent(alice, app)
    second = await grant_through_consent(bob, app)
    theirs = await grant_through_consent(stranger, app, vin=OTHER_VIN)
    for granted in (first, second):
        assert (
            await alice.get(PULL.format(vin=VIN), headers=bearer(granted.access_token))
        ).status_code == 200

    # One entry for the application, both consents inside; nothing of the other car.
    await sign_in(alice)
    page = await alice.get(f"{OWNER}/vehicles/{VIN}")
    assert page.status_code == 200
    assert page.text.count('class="grant card"') == 1
    assert page.text.count('class="consent"') == 2
    assert theirs.authorization_id not in page.text

    # The other owner's grant of the same application, through this car's URL or theirs.
    for vin in (VIN, OTHER_VIN):
        shown = await alice.get(
            f"{OWNER}/vehicles/{vin}/withdraw", params={"grant": theirs.authorization_id}
        )
        assert shown.status_code == 404
        taken = await alice.post(
            f"{OWNER}/vehicles/{vin}/withdraw",
            data={"csrf_token": csrf_of(page), "grant": theirs.authorization_id},
        )
        assert taken.status_code == 404
    assert await status_of(db, theirs.authorization_id) == "approved"

    # Withdrawing the application (named by either of its grants) ends both.
    confirm = await alice.get(
        f"{OWNER}/vehicles/{VIN}/withdraw", params={"grant": first.authorization_id}
    )
    assert confirm.status_code == 200 and "every consent given in Fleet Tracker" in confirm.text
    done = await alice.post(
        f"{OWNER}/vehicles/{VIN}/withdraw",
        data={"csrf_token": csrf_of(confirm), "grant": first.authorization_id},
    )
    assert done.headers["location"] == f"{OWNER}/vehicles/{VIN}?done=withdrawn"
    for granted in (first, second):
        assert await status_of(db, granted.authorization_id) == "revoked"
        refused = await alice.get(PULL.format(vin=VIN), headers=bearer(granted.access_token))
        assert refused.status_code == 401 and "revoked" in refused.text
        refreshed = await alice.post(
            "/sandbox/v1/access_tokens",
            data={
                "grant_type": "refresh_token",
                "refresh_token": granted.refresh_token,
                "client_id": app.client_id,
                "client_secret": app.client_secret or "",
            },
        )
        assert refreshed.status_code == 400
    # The application's own token reads nothing of this car either.
    own = await application_token(alice, app)
    assert (await alice.get(PULL.format(vin=VIN), headers=bearer(own))).status_code == 403
    # The other owner's grant still reads their car.
    assert await status_of(db, theirs.authorization_id) == "approved"
    still = await stranger.get(PULL.format(vin=OTHER_VIN), headers=bearer(theirs.access_token))
    assert still.status_code == 200

    # Ended: the entry says so, and no longer "until you withdraw it".
    after = await alice.get(done.headers["location"])
    assert "Withdrawn on" in after.text and "until you withdraw it" not in after.text
    assert after.text.count('class="grant card"') == 1
    assert "Withdraw access of Fleet Tracker" not in after.text
