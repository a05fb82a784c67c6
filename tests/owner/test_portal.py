"""The owner portal over HTTP, on SQLite and PostgreSQL: sign-in, what the owner sees,
withdrawing, the admin API's revocation, and the attacks the portal must refuse."""

from __future__ import annotations

import httpx

from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from tests.consent.conftest import store_vehicle_data
from tests.factories import bearer

from .conftest import OWNER, VIN, csrf_of, grant_through_consent, insert_application, sign_in


async def test_sign_in_see_read_and_withdraw(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    app = await insert_application(db)
    await store_vehicle_data(db, now_us=clock.now_us())
    granted = await grant_through_consent(browser_client, app)
    read = await browser_client.get(
        f"/sandbox/v1/vehicle-data/autoapi-13/{VIN}", headers=bearer(granted.access_token)
    )
    assert read.status_code == 200
    signed = await sign_in(browser_client)
    assert signed.status_code == 303, signed.text
    assert signed.headers["location"] == f"{OWNER}/vehicles"
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert page.status_code == 200, page.text
    assert "Fleet Tracker" in page.text
    assert "Battery level" in page.text
    confirm = await browser_client.get(
        f"{OWNER}/vehicles/{VIN}/withdraw", params={"grant": granted.authorization_id}
    )
    assert confirm.status_code == 200, confirm.text
    done = await browser_client.post(
        f"{OWNER}/vehicles/{VIN}/withdraw",
        data={"csrf_token": csrf_of(confirm), "grant": granted.authorization_id},
    )
    assert done.status_code == 303, done.text
    assert done.headers["location"].endswith("?done=withdrawn")
    after = await browser_client.get(
        f"/sandbox/v1/vehicle-data/autoapi-13/{VIN}", headers=bearer(granted.access_token)
    )
    assert after.status_code == 401
