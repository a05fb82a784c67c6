"""Attacks on the paged lists (GET /v1/fleets/vehicles, the vehicle data history): a
cursor is signed and bound to the endpoint and the application it was issued to, the
`Link` header is built from the configured base URL, and filters never reach another
application's vehicles. docs/security.md, "Paged lists and cursors"."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import orjson
from fastapi import FastAPI

from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.factories import bearer, client_credentials_token, create_app_credentials
from tests.vehicle_data.conftest import TestCallers

PATH = "/v1/fleets/vehicles"
MINE = ["SBX00000000000001", "SBX00000000000002", "SBX00000000000003"]
THEIRS = ["SBX00000000000004", "SBX00000000000005", "SBX00000000000006"]


async def fleet_app(
    app: FastAPI,
    client: httpx.AsyncClient,
    clock: FrozenClock,
    vins: list[str],
    environment: Environment = Environment.production,
) -> dict[str, str]:
    creds = await create_app_credentials(
        app.state.autoport.database, environment=environment, now_us=clock.now_us()
    )
    headers = bearer(await client_credentials_token(client, creds))
    prefix = "/sandbox" if environment is Environment.sandbox else ""
    # The sandbox brand exists only in the sandbox (the VINs here name no known maker).
    brand = "sandbox" if environment is Environment.sandbox else "bmw"
    added = await client.post(
        prefix + PATH,
        json={"vehicles": [{"vin": v, "brand": brand, "tags": {"k": "v"}} for v in vins]},
        headers=headers,
    )
    assert added.status_code == 200, added.text
    return headers


async def next_cursor(client: httpx.AsyncClient, path: str, headers: dict[str, str]) -> str:
    response = await client.get(path, headers=headers)
    assert response.status_code == 200, response.text
    url = response.headers["link"].removeprefix("<").split(">")[0]
    return parse_qs(urlsplit(url).query)["cursor"][0]


def assert_refused_cursor(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    [error] = response.json()["errors"]
    assert error["source"] == "cursor"


async def test_another_applications_cursor_is_refused(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    mine = await fleet_app(app, client, clock, MINE)
    theirs = await fleet_app(app, client, clock, THEIRS)
    stolen = await next_cursor(client, f"{PATH}?limit=1", theirs)
    response = await client.get(PATH, params={"cursor": stolen}, headers=mine)
    assert_refused_cursor(response)
    # With its own cursor each application pages through its own vehicles only.
    own = await next_cursor(client, f"{PATH}?limit=1", mine)
    page = await client.get(PATH, params={"cursor": own}, headers=mine)
    assert [v["vin"] for v in page.json()] == MINE[1:]


async def test_a_cursor_from_the_other_environment_is_refused(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    production = await fleet_app(app, client, clock, MINE)
    sandbox = await fleet_app(app, client, clock, MINE, Environment.sandbox)
    cursor = await next_cursor(client, f"/sandbox{PATH}?limit=1", sandbox)
    assert_refused_cursor(await client.get(PATH, params={"cursor": cursor}, headers=production))


async def test_a_forged_cursor_is_refused(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    headers = await fleet_app(app, client, clock, MINE)
    genuine = await next_cursor(client, f"{PATH}?limit=1", headers)
    tag = genuine.partition(".")[2]
    for payload in ([MINE[1]], [""], [1], ["' OR 1=1 --"], [MINE[0], MINE[1]]):
        forged = base64.urlsafe_b64encode(orjson.dumps(payload)).decode().rstrip("=")
        for cursor in (forged, f"{forged}.{tag}", f"{forged}."):
            response = await client.get(PATH, params={"cursor": cursor}, headers=headers)
            assert_refused_cursor(response)


async def test_a_history_cursor_is_refused_by_another_application_and_by_the_fleet_list(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    vin = MINE[0]
    state = app.state.autoport
    for minute in range(3):
        await ingest_vehicle_data(
            state.database,
            environment=Environment.production,
            vin=vin,
            brand="bmw",
            data={
                "charging": {
                    "battery_level": {"data": 0.5, "timestamp": f"2024-05-01T10:0{minute}:00Z"}
                }
            },
            now_us=state.clock.now_us(),
        )
    callers = TestCallers(app)
    try:
        properties = ["charging.battery_level"]
        tokens = []
        for _ in range(2):
            app_id = await callers.application(properties=properties)
            tokens.append(await callers.vehicle_token(app_id, vin=vin, properties=properties))
        history = f"/v1/vehicle-data/autoapi-13/{vin}/history"
        params = {"property": "charging.battery_level", "limit": "1"}
        first = await client.get(history, params=params, headers=bearer(tokens[0]))
        cursor = first.json()["next_cursor"]
        assert cursor
        own = await client.get(
            history, params={**params, "cursor": cursor}, headers=bearer(tokens[0])
        )
        assert own.status_code == 200, own.text
        stolen = await client.get(
            history, params={**params, "cursor": cursor}, headers=bearer(tokens[1])
        )
        assert_refused_cursor(stolen)
        fleet_creds = await create_app_credentials(state.database, now_us=state.clock.now_us())
        fleet = bearer(await client_credentials_token(client, fleet_creds))
        assert_refused_cursor(await client.get(PATH, params={"cursor": cursor}, headers=fleet))
    finally:
        await callers.aclose()


async def test_the_link_header_ignores_a_forged_host(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    headers = await fleet_app(app, client, clock, MINE)
    response = await client.get(
        f"{PATH}?limit=1", headers={**headers, "host": "evil.example", "x-forwarded-host": "evil"}
    )
    assert response.status_code == 200, response.text
    base = app.state.autoport.settings.base_url
    assert response.headers["link"].startswith(f"<{base}{PATH}?")
    assert "evil" not in response.headers["link"]


async def test_filters_and_paging_never_reach_another_applications_vehicles(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    mine = await fleet_app(app, client, clock, MINE)
    await fleet_app(app, client, clock, THEIRS)
    probes = [
        {"vin": {"in": THEIRS}},
        {"vin": {"operator": "eq", "value": THEIRS[0]}},
        {"tags": {"contains": {"k": "v"}}},
        {"tags": {"contains": {"k' OR '1'='1": "v"}}},
        {"tags": {"eq": {"k": "v' OR '1'='1"}}},
        {"status": {"operator": "in", "value": ["pending", "approved"]}},
    ]
    for probe in probes:
        seen: list[str] = []
        url: str | None = f"{PATH}?limit=1&filter={quote(orjson.dumps(probe).decode())}"
        while url is not None:
            response = await client.get(url, headers=mine)
            assert response.status_code == 200, (probe, response.text)
            seen += [v["vin"] for v in response.json()]
            link = response.headers.get("link")
            url = None if link is None else link.removeprefix("<").split(">")[0]
        assert set(seen) <= set(MINE), probe


async def test_the_list_needs_a_fleet_token(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    headers = await fleet_app(app, client, clock, MINE)
    cursor = await next_cursor(client, f"{PATH}?limit=1", headers)
    assert (await client.get(PATH, params={"cursor": cursor})).status_code == 401
    callers = TestCallers(app)
    try:
        app_id = await callers.application(properties=["charging.battery_level"])
        token = await callers.vehicle_token(
            app_id, vin=MINE[0], properties=["charging.battery_level"]
        )
        response = await client.get(PATH, params={"cursor": cursor}, headers=bearer(token))
        assert response.status_code == 403, response.text
    finally:
        await callers.aclose()
