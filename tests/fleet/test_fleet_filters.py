"""GET /v1/fleets/vehicles?filter=... on both backends."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.brands.registry import registry_of
from autoport.fleet import decisions
from autoport.kit.clock import FrozenClock, to_iso
from autoport.kit.environments import Environment
from tests.fleet.conftest import Callers

V1, V2, V3 = "SBX00000000000001", "SBX00000000000002", "WDD00000000000003"


@pytest.fixture
async def fleet(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> dict[str, int]:
    """V1 approved (depot north, team a), V2 pending (depot south), V3 mercedes pending."""
    times: dict[str, int] = {}
    times["t0"] = clock.now_us()
    await client.post(
        "/v1/fleets/vehicles",
        json={"vehicles": [{"vin": V1, "brand": "bmw", "tags": {"depot": "north", "team": "a"}}]},
        headers=callers.fleet.headers,
    )
    clock.advance(5)
    state = app.state.autoport
    # A push-fed brand: the operator decides (as the brand's data provider could).
    async with state.database.transaction() as conn:
        await decisions.decide(
            conn,
            registry_of(state),
            environment=Environment.production,
            application_id=callers.fleet.id,
            vin=V1,
            approve=True,
            reason=None,
            brands=None,
            now_us=clock.now_us(),
        )
    times["approved"] = clock.now_us()
    clock.advance(1)
    times["t1"] = clock.now_us()
    await client.post(
        "/v1/fleets/vehicles",
        json={
            "vehicles": [
                {"vin": V2, "brand": "bmw", "tags": {"depot": "south"}},
                {"vin": V3, "brand": "mercedes-benz"},
            ]
        },
        headers=callers.fleet.headers,
    )
    return times


async def listed(client: httpx.AsyncClient, callers: Callers, query: Any) -> list[str]:
    text = query if isinstance(query, str) else orjson.dumps(query).decode()
    response = await client.get(
        f"/v1/fleets/vehicles?filter={quote(text)}", headers=callers.fleet.headers
    )
    assert response.status_code == 200, response.text
    return [v["vin"] for v in response.json()]


async def test_no_filter_lists_every_vehicle_of_the_application(
    client: httpx.AsyncClient, callers: Callers, fleet: dict[str, int]
) -> None:
    response = await client.get("/v1/fleets/vehicles", headers=callers.fleet.headers)
    vehicles = response.json()
    assert [v["vin"] for v in vehicles] == [V1, V2, V3]
    assert vehicles[0]["status"] == "approved"
    assert set(vehicles[0]) == {"vin", "brand", "status", "tags", "changelog"}
    other = await client.get("/v1/fleets/vehicles", headers=callers.other.headers)
    assert other.json() == []


def documented(query: dict[str, Any]) -> dict[str, Any]:
    """The short form {"field": {op: value}} in the original's documented layout."""
    out: dict[str, Any] = {}
    for name, ops in query.items():
        [(op, value)] = ops.items()
        out[name] = {"operator": op, "value": value}
    return out


async def test_filters_by_each_field_and_operator_in_the_documented_layout(
    client: httpx.AsyncClient, callers: Callers, fleet: dict[str, int]
) -> None:
    approved, t1 = to_iso(fleet["approved"]), to_iso(fleet["t1"])
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"vin": {"eq": V2}}, [V2]),
        ({"vin": {"in": [V1, V3]}}, [V1, V3]),
        ({"status": {"eq": "approved"}}, [V1]),
        ({"status": {"in": ["pending", "revoked"]}}, [V2, V3]),
        ({"brand": {"eq": "mercedes-benz"}}, [V3]),
        ({"brand": {"in": ["mercedes_benz", "bmw"]}}, [V1, V2, V3]),
        ({"tags": {"eq": {"depot": "south"}}}, [V2]),
        ({"tags": {"eq": {"depot": "north"}}}, []),
        ({"tags": {"contains": {"depot": "north"}}}, [V1]),
        ({"tags": {"contains": {"depot": "north", "team": "a"}}}, [V1]),
        ({"tags": {"contains": {"depot": "north", "team": "b"}}}, []),
        ({"approved_at": {"eq": approved}}, [V1]),
        ({"approved_at": {"lt": approved}}, []),
        ({"approved_at": {"gt": to_iso(fleet["t0"])}}, [V1]),
        ({"approved_at": {"lte": approved}}, [V1]),
        ({"approved_at": {"gte": approved}}, [V1]),
        ({"inserted_at": {"eq": t1}}, [V2, V3]),
        ({"inserted_at": {"lt": t1}}, [V1]),
        ({"inserted_at": {"gt": to_iso(fleet["t0"])}}, [V2, V3]),
        ({"inserted_at": {"lte": t1}}, [V1, V2, V3]),
        ({"inserted_at": {"gte": t1}}, [V2, V3]),
        ({"status": {"eq": "pending"}, "brand": {"eq": "bmw"}}, [V2]),
    ]
    for query, expected in cases:
        assert await listed(client, callers, query) == expected, query
        assert await listed(client, callers, documented(query)) == expected, documented(query)


async def test_filters_by_each_field_and_operator(
    client: httpx.AsyncClient, callers: Callers, fleet: dict[str, int]
) -> None:
    assert await listed(client, callers, {"status": {"eq": "approved"}}) == [V1]
    assert await listed(client, callers, {"status": {"in": ["pending", "revoked"]}}) == [V2, V3]
    assert await listed(client, callers, {"status": "pending"}) == [V2, V3]
    assert await listed(client, callers, {"vin": {"eq": V2}}) == [V2]
    assert await listed(client, callers, {"vin": {"in": [V1, V3]}}) == [V1, V3]
    assert await listed(client, callers, {"brand": {"eq": "mercedes_benz"}}) == [V3]
    assert await listed(client, callers, {"brand": {"in": ["Mercedes-Benz", "bmw"]}}) == [
        V1,
        V2,
        V3,
    ]
    assert await listed(client, callers, {"tags": {"contains": {"depot": "north"}}}) == [V1]
    assert await listed(client, callers, {"tags": {"eq": {"depot": "north"}}}) == []
    assert await listed(client, callers, {"tags": {"eq": {"depot": "south"}}}) == [V2]
    approved = to_iso(fleet["approved"])
    assert await listed(client, callers, {"approved_at": {"eq": approved}}) == [V1]
    assert await listed(client, callers, {"approved_at": {"gte": approved}}) == [V1]
    assert await listed(client, callers, {"approved_at": {"gt": approved}}) == []
    t1 = to_iso(fleet["t1"])
    assert await listed(client, callers, {"inserted_at": {"lt": t1}}) == [V1]
    assert await listed(client, callers, {"inserted_at": {"lte": t1}}) == [V1, V2, V3]
    assert await listed(client, callers, {"inserted_at": {"gte": t1, "lte": t1}}) == [V2, V3]
    assert await listed(
        client, callers, {"status": {"eq": "pending"}, "tags": {"contains": {"depot": "south"}}}
    ) == [V2]


@pytest.mark.parametrize(
    ("query", "status", "source", "words"),
    [
        ("{not json", 400, "filter", "not valid JSON"),
        ("[1]", 422, "filter", "object of fields"),
        ('{"colour": {"eq": "red"}}', 422, "filter.colour", "unknown field"),
        ('{"status": {"gt": "approved"}}', 422, "filter.status.gt", "unknown operator"),
        ('{"status": {"eq": "gone"}}', 422, "filter.status.eq", "unknown status"),
        ('{"status": {"in": ["approved", 3]}}', 422, "filter.status.in[1]", "unknown status"),
        ('{"status": {"in": []}}', 422, "filter.status.in", "non-empty list"),
        ('{"brand": {"eq": "trabant"}}', 422, "filter.brand.eq", "unknown brand"),
        ('{"vin": {"eq": "short"}}', 422, "filter.vin.eq", "17 characters"),
        ('{"tags": {"contains": {"a": 1}}}', 422, "filter.tags.contains", "object of strings"),
        ('{"tags": {"in": {}}}', 422, "filter.tags.in", "unknown operator"),
        ('{"approved_at": {"gte": "yesterday"}}', 422, "filter.approved_at.gte", "ISO 8601"),
        ('{"inserted_at": {"lt": 5}}', 422, "filter.inserted_at.lt", "ISO 8601"),
        ('{"status": {}}', 422, "filter.status", "operators"),
        (
            orjson.dumps({"vin": {"in": ["SBX00000000000001"] * 1001}}).decode(),
            422,
            "filter.vin.in",
            "at most 1000",
        ),
        # The documented layout names its members.
        ('{"status": {"operator": "gt", "value": "x"}}', 422, "filter.status.operator", "gt"),
        ('{"status": {"operator": 1, "value": "x"}}', 422, "filter.status.operator", "unknown"),
        ('{"status": {"operator": "eq"}}', 422, "filter.status.value", "missing"),
        (
            '{"status": {"operator": "eq", "value": "approved", "eq": "x"}}',
            422,
            "filter.status.eq",
            "unexpected member",
        ),
        ('{"status": {"operator": "in", "value": ["x"]}}', 422, "filter.status.value[0]", "x"),
        ('{"status": {"operator": "in", "value": "x"}}', 422, "filter.status.value", "list"),
        ('{"tags": {"operator": "in", "value": {}}}', 422, "filter.tags.operator", "in"),
        ('{"tags": {"operator": "eq", "value": {"a": 1}}}', 422, "filter.tags.value", "strings"),
        (
            '{"approved_at": {"operator": "lte", "value": "soon"}}',
            422,
            "filter.approved_at.value",
            "ISO 8601",
        ),
        (
            orjson.dumps({"tags": {"contains": {str(i): "x" for i in range(101)}}}).decode(),
            422,
            "filter.tags.contains",
            "at most 100",
        ),
    ],
)
async def test_bad_filters_name_the_problem(
    client: httpx.AsyncClient,
    callers: Callers,
    query: str,
    status: int,
    source: str,
    words: str,
) -> None:
    response = await client.get(
        f"/v1/fleets/vehicles?filter={quote(query)}", headers=callers.fleet.headers
    )
    assert response.status_code == status, response.text
    error = response.json()["errors"][0]
    assert error["source"] == source
    assert words in error["detail"]


async def test_routes_are_documented_in_the_openapi_schema(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert {"/v1/eligibility", "/v1/fleets/vehicles", "/v1/fleets/vehicles/{vin}"} <= set(paths)
    params = [p["name"] for p in paths["/v1/fleets/vehicles"]["get"]["parameters"]]
    assert "filter" in params
