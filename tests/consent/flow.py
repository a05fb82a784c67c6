"""The consent flow's steps over HTTP, shared by the consent and security tests: the
entry, a step's form posted with its CSRF token, the walk to the review page, and the
grants stored."""

from __future__ import annotations

import re

import httpx

from autoport.kit.db import Database

from .conftest import VIN, ConsentApp

ENTRY = "/sandbox/oauth/new"
PAGES = "/sandbox/oauth/consent"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(page: httpx.Response) -> str:
    match = CSRF.search(page.text)
    assert match, page.text[:500]
    return match.group(1)


async def post(client: httpx.AsyncClient, step: str, **form: str) -> httpx.Response:
    page = await client.get(f"{PAGES}/{step}")
    assert page.status_code == 200, page.text[:300]
    return await client.post(f"{PAGES}/{step}", data={"csrf_token": csrf_of(page), **form})


async def start(client: httpx.AsyncClient, app: ConsentApp, **params: str | None) -> httpx.Response:
    response = await client.get(ENTRY, params=app.entry_params(**params))
    return response


async def walk_to_review(
    client: httpx.AsyncClient, app: ConsentApp, brand: str = "sandbox", **params: str | None
) -> None:
    started = await start(client, app, brand=brand, vin=VIN, **params)
    assert started.status_code == 303 and started.headers["location"].endswith("/brand")
    assert (await post(client, "brand", brand=brand)).status_code == 303
    answer = await post(client, "vehicle", vin=VIN)
    assert answer.status_code == 303


async def stored_authorizations(db: Database) -> list[dict[str, object]]:
    rows = await db.fetch_all("SELECT * FROM authorizations ORDER BY created_at")
    return [{key: row[key] for key in row.keys()} for row in rows]  # noqa: SIM118 - a Row
