"""GET /v1/vehicle-data/autoapi-13/{vin}/history and the retention pruning."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.environments import Environment
from autoport.vehicle_data.tasks import prune_history
from tests.vehicle_data.conftest import TestCallers

VIN = "WBA00000000000001"
URL = f"/v1/vehicle-data/autoapi-13/{VIN}/history"


def stamp(minute: int) -> str:
    return f"2024-05-01T10:{minute:02d}:00.000000Z"


async def fill(app: FastAPI, minutes: list[int]) -> None:
    state = app.state.autoport
    for minute in minutes:
        await ingest_vehicle_data(
            state.database,
            environment=Environment.production,
            vin=VIN,
            brand="bmw",
            data={
                "charging": {"battery_level": {"data": minute / 100, "timestamp": stamp(minute)}}
            },
            now_us=state.clock.now_us(),
        )


async def token_for(callers: TestCallers, properties: list[str]) -> dict[str, str]:
    app_id = await callers.application(properties=properties)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=properties)
    return {"Authorization": f"Bearer {token}"}


async def test_pages_newest_first_follow_the_cursor_to_the_end(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await fill(app, [5, 1, 9, 3, 7, 2, 8])  # out of order: history keeps every point
    headers = await token_for(callers, ["charging.battery_level"])
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"property": "charging.battery_level", "limit": "3"}
        if cursor:
            params["cursor"] = cursor
        response = await client.get(URL, params=params, headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["vin"] == VIN and body["property"] == "charging.battery_level"
        seen += [value["timestamp"] for value in body["values"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == [stamp(m) for m in (9, 8, 7, 5, 3, 2, 1)]


async def test_since_and_until_bound_the_values(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await fill(app, list(range(10)))
    headers = await token_for(callers, ["charging.battery_level"])
    response = await client.get(
        URL,
        params={"property": "charging.battery_level", "since": stamp(3), "until": stamp(6)},
        headers=headers,
    )
    assert [v["data"] for v in response.json()["values"]] == [0.05, 0.04, 0.03]


async def test_history_follows_the_access_rules(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await fill(app, [1])
    headers = await token_for(callers, ["charging.status"])
    response = await client.get(URL, params={"property": "charging.battery_level"}, headers=headers)
    assert response.status_code == 403
    other = "/v1/vehicle-data/autoapi-13/WBA00000000000009/history"
    response = await client.get(other, params={"property": "charging.status"}, headers=headers)
    assert response.status_code == 403
    assert (await client.get(URL, params={"property": "charging.status"})).status_code == 401


async def test_bad_parameters_are_4xx_naming_them(
    client: httpx.AsyncClient, callers: TestCallers
) -> None:
    headers = await token_for(callers, ["charging.battery_level"])
    cases = [
        ({}, 400, "property"),
        ({"property": "charging.warp"}, 422, "property"),
        ({"property": "charging.battery_level", "since": "monday"}, 400, "since"),
        ({"property": "charging.battery_level", "limit": "0"}, 400, "limit"),
        ({"property": "charging.battery_level", "limit": "many"}, 422, "limit"),
        ({"property": "charging.battery_level", "cursor": "!!"}, 400, "cursor"),
    ]
    for params, status, source in cases:
        response = await client.get(URL, params=params, headers=headers)
        assert response.status_code == status, (params, response.text)
        assert response.json()["errors"][0]["source"] == source


async def test_pruning_removes_only_rows_past_the_retention(app: FastAPI) -> None:
    state = app.state.autoport
    await fill(app, [1, 2])
    state.clock.advance(10 * 86_400)
    await fill(app, [3])
    state.settings = state.settings.model_copy(update={"vehicle_data_history_retention_days": 5})
    assert await prune_history(state) == 2
    assert await state.database.fetch_value("SELECT count(*) FROM vehicle_data_history") == 1
    # The latest value is not history: pruning never touches it.
    assert await state.database.fetch_value("SELECT count(*) FROM vehicles") == 1
    state.settings = state.settings.model_copy(update={"vehicle_data_history_retention_days": 0})
    state.clock.advance(1000 * 86_400)
    assert await prune_history(state) == 0
