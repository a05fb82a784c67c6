"""GET /v1/fleets/vehicles on both backends: the original's bare JSON array, a page at a
time with `limit`/`cursor` and an RFC 8288 `Link: <...>; rel="next"` header."""

from __future__ import annotations

import base64
import random
import re
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.catalog.brands import WMI_BRANDS
from autoport.fleet.service import LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT
from autoport.vehicles.vin import generate_vin
from tests.fleet.conftest import Callers

COUNT = 1002
PATH = "/v1/fleets/vehicles"
LINK = re.compile(r'<(?P<url>[^>]+)>; rel="next"')


async def add_fleet(
    client: httpx.AsyncClient, headers: dict[str, str], count: int, prefix: str = ""
) -> list[str]:
    rng = random.Random(13)
    vins: set[str] = set()
    # The sandbox brand exists only in the sandbox; production VINs get a brand their
    # manufacturer code does not contradict (an unlisted code contradicts none).
    brand = "sandbox" if prefix == "/sandbox" else "bmw"
    while len(vins) < count:
        vin = generate_vin(rng)
        if brand == "sandbox" or vin[:3] not in WMI_BRANDS:
            vins.add(vin)
    ordered = sorted(vins)
    for start in range(0, count, 501):
        batch = [
            {"vin": vin, "brand": brand, "tags": {"half": "a" if i % 2 else "b"}}
            for i, vin in enumerate(ordered[start : start + 501], start)
        ]
        response = await client.post(prefix + PATH, json={"vehicles": batch}, headers=headers)
        assert response.status_code == 200, response.text
    return ordered


def next_url(response: httpx.Response) -> str | None:
    link = response.headers.get("link")
    if link is None:
        return None
    match = LINK.fullmatch(link)
    assert match is not None, link
    return match["url"]


async def follow(
    client: httpx.AsyncClient, headers: dict[str, str], url: str
) -> list[list[dict[str, Any]]]:
    """Every page, following the Link header from `url` until there is none."""
    pages: list[list[dict[str, Any]]] = []
    next_page: str | None = url
    while next_page is not None:
        response = await client.get(next_page, headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert isinstance(body, list)
        pages.append(body)
        next_page = next_url(response)
        assert len(pages) <= COUNT, "the Link header never ends"
    return pages


@pytest.fixture
async def fleet(client: httpx.AsyncClient, callers: Callers) -> list[str]:
    return await add_fleet(client, callers.fleet.headers, COUNT)


async def test_the_list_is_a_bare_array_paged_by_link_headers(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, fleet: list[str]
) -> None:
    first = await client.get(PATH, headers=callers.fleet.headers)
    assert first.status_code == 200
    assert isinstance(first.json(), list)
    assert len(first.json()) == LIST_DEFAULT_LIMIT
    assert set(first.json()[0]) == {"vin", "brand", "status", "tags", "changelog"}
    # The Link is absolute, on the configured base URL, and carries only an opaque cursor.
    url = next_url(first)
    assert url is not None
    base = app.state.autoport.settings.base_url
    assert url.startswith(f"{base}{PATH}?cursor=")
    pages = await follow(client, callers.fleet.headers, PATH)
    assert [len(p) for p in pages] == [LIST_DEFAULT_LIMIT] * 10 + [2]
    # Every vehicle once, in VIN order, and the last page has no Link.
    assert [v["vin"] for p in pages for v in p] == fleet


async def test_limit_sets_the_page_size_and_the_link_keeps_it(
    client: httpx.AsyncClient, callers: Callers, fleet: list[str]
) -> None:
    pages = await follow(client, callers.fleet.headers, f"{PATH}?limit={LIST_MAX_LIMIT}")
    assert [len(p) for p in pages] == [LIST_MAX_LIMIT, 2]
    pages = await follow(client, callers.fleet.headers, f"{PATH}?limit=1")
    assert len(pages) == COUNT
    assert [p[0]["vin"] for p in pages] == fleet


@pytest.mark.parametrize(
    "query",
    [
        {"tags": {"eq": {"half": "a"}}, "status": {"in": ["pending", "approved"]}},
        {
            "tags": {"operator": "contains", "value": {"half": "a"}},
            "status": {"operator": "eq", "value": "pending"},
        },
    ],
)
async def test_a_filtered_list_pages_with_its_filter(
    app: FastAPI,
    client: httpx.AsyncClient,
    callers: Callers,
    fleet: list[str],
    query: dict[str, Any],
) -> None:
    text = orjson.dumps(query).decode()
    response = await client.get(
        f"{PATH}?filter={quote(text)}&limit=100", headers=callers.fleet.headers
    )
    url = next_url(response)
    assert url is not None
    params = parse_qs(urlsplit(url).query)
    assert params["filter"] == [text]
    assert params["limit"] == ["100"]
    pages = await follow(client, callers.fleet.headers, f"{PATH}?filter={quote(text)}&limit=100")
    odd = [vin for i, vin in enumerate(fleet) if i % 2]
    assert [len(p) for p in pages] == [100] * 5 + [1]
    assert [v["vin"] for p in pages for v in p] == odd
    assert {v["tags"]["half"] for p in pages for v in p} == {"a"}


async def test_the_sandbox_link_names_the_sandbox(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    vins = await add_fleet(client, callers.sandbox.headers, 3, prefix="/sandbox")
    response = await client.get(f"/sandbox{PATH}?limit=2", headers=callers.sandbox.headers)
    url = next_url(response)
    assert url is not None
    assert url.startswith(f"{app.state.autoport.settings.sandbox_base_url}{PATH}?")
    pages = await follow(client, callers.sandbox.headers, url)
    assert [v["vin"] for p in pages for v in p] == vins[2:]


@pytest.mark.parametrize(
    ("limit", "status"),
    [("0", 400), ("-1", 400), (str(LIST_MAX_LIMIT + 1), 400), ("9" * 30, 400), ("many", 422)],
)
async def test_a_limit_out_of_range_names_limit(
    client: httpx.AsyncClient, callers: Callers, limit: str, status: int
) -> None:
    response = await client.get(PATH, params={"limit": limit}, headers=callers.fleet.headers)
    assert response.status_code == status, response.text
    [error] = response.json()["errors"]
    assert error["source"] == "limit"
    if status == 400:
        assert f"between 1 and {LIST_MAX_LIMIT}" in error["detail"]


async def test_a_bad_cursor_is_400_naming_cursor(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    vins = await add_fleet(client, callers.fleet.headers, 3)
    response = await client.get(f"{PATH}?limit=1", headers=callers.fleet.headers)
    url = next_url(response)
    assert url is not None
    cursor = parse_qs(urlsplit(url).query)["cursor"][0]
    payload, _, tag = cursor.partition(".")
    # A payload pointing at another VIN, under the genuine cursor's signature.
    other = base64.urlsafe_b64encode(orjson.dumps([vins[2]])).decode().rstrip("=")
    for bad in [
        "!!",
        "x" * 5000,
        payload,  # the signature cut off
        f"{payload}.{tag[:-2]}",
        f"{payload[:-1]}{'A' if payload[-1] != 'A' else 'B'}.{tag}",
        f"{other}.{tag}",
        f"{payload}.{tag}{tag}",
    ]:
        answer = await client.get(PATH, params={"cursor": bad}, headers=callers.fleet.headers)
        assert answer.status_code == 400, (bad, answer.text)
        [error] = answer.json()["errors"]
        assert error["source"] == "cursor"
    assert (
        await client.get(PATH, params={"cursor": cursor}, headers=callers.fleet.headers)
    ).json()[0]["vin"] == vins[1]
