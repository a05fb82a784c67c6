"""Fixtures of the owner-portal tests: the consent tests' real app, applications and
helpers (tests/consent/conftest.py), and a grant made through the real consent pages."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from tests.consent.conftest import (  # noqa: F401 - fixtures re-exported
    VIN,
    ConsentApp,
    browser_client,
    consent_app,
    db,
    exchange,
    insert_application,
    query_of,
)
from tests.factories import pkce_pair

CONSENT = "/sandbox/oauth/consent"
OWNER = "/sandbox/owner"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(page: httpx.Response) -> str:
    match = CSRF.search(page.text)
    assert match, page.text[:500]
    return match.group(1)


@dataclass
class Granted:
    app: ConsentApp
    authorization_id: str
    access_token: str
    refresh_token: str


async def grant_through_consent(
    client: httpx.AsyncClient, app: ConsentApp, *, vin: str = VIN
) -> Granted:
    """The owner approves `app` for `vin` on the real consent pages (sandbox brand:
    instant), and the application exchanges the code for tokens."""
    verifier, challenge = pkce_pair()
    started = await client.get(
        "/sandbox/oauth/new",
        params=app.entry_params(brand="sandbox", vin=vin, code_challenge=challenge),
    )
    assert started.status_code == 303, started.text
    for step, form in (("brand", {"brand": "sandbox"}), ("vehicle", {"vin": vin})):
        page = await client.get(f"{CONSENT}/{step}")
        answer = await client.post(f"{CONSENT}/{step}", data={"csrf_token": csrf_of(page), **form})
        assert answer.status_code == 303, answer.text
    review = await client.get(f"{CONSENT}/review")
    decided = await client.post(
        f"{CONSENT}/review", data={"csrf_token": csrf_of(review), "decision": "approve"}
    )
    code = query_of(decided.headers["location"])["code"]
    tokens = await exchange(client, app, code, verifier)
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    return Granted(app, body["authorization_id"], body["access_token"], body["refresh_token"])


async def sign_in(
    client: httpx.AsyncClient, *, brand: str = "sandbox", vin: str = VIN, prefix: str = OWNER
) -> httpx.Response:
    """The sign-in form (instant in the sandbox brand: signed in at once)."""
    page = await client.get(prefix)
    assert page.status_code == 200, page.text[:300]
    return await client.post(
        f"{prefix}/sign-in", data={"csrf_token": csrf_of(page), "brand": brand, "vin": vin}
    )
