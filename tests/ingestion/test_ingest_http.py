"""POST /v1/ingest on both backends."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.ingestion.providers import revoke_provider
from autoport.kit.environments import Environment
from tests.history import stored
from tests.ingestion.conftest import new_provider

VIN = "WBA00000000000001"
VIN2 = "WBA00000000000002"
MERCEDES_VIN = "WDD00000000000001"
TS = "2024-05-01T10:00:00.000000Z"


async def document(app: FastAPI, vin: str = VIN) -> dict[str, Any] | None:
    row = await app.state.autoport.database.fetch_one(
        "SELECT document FROM vehicles WHERE vin = :v", {"v": vin}
    )
    return None if row is None else orjson.loads(row["document"])


async def test_pull_layout_of_one_vehicle_is_stored(
    client: httpx.AsyncClient, app: FastAPI, provider_headers: dict[str, str]
) -> None:
    body = {
        "vin": VIN,
        "brand": "bmw",
        "charging": {"battery_level": {"data": 0.8, "timestamp": TS}},
        "doors": {"locks_state": {"data": "locked", "timestamp": TS}},
    }
    response = await client.post("/v1/ingest", json=body, headers=provider_headers)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["accepted_count"] == 2 and answer["rejected_count"] == 0
    assert answer["request_id"] == response.headers["x-request-id"]
    assert answer["vehicles"][0]["accepted"] == [
        {"property": "charging.battery_level", "changed": True},
        {"property": "doors.locks_state", "changed": True},
    ]
    assert await document(app) == {
        "charging": {"battery_level": {"data": 0.8, "timestamp": TS}},
        "doors": {"locks_state": {"data": "locked", "timestamp": TS}},
    }


async def test_streaming_layout_of_many_vehicles_with_one_bad_point(
    client: httpx.AsyncClient, app: FastAPI, provider_headers: dict[str, str]
) -> None:
    body = {
        "vehicles": [
            {
                "version": 2,
                "vin": MERCEDES_VIN,
                "brand": "mercedes-benz",
                "data": {
                    "charging": {
                        "battery_level": [{"data": 1.7, "timestamp": TS}],
                        "status": [{"data": "charging", "timestamp": TS}],
                    }
                },
            },
            {"vin": "SHORT", "charging": {"status": {"data": "charging", "timestamp": TS}}},
            {
                "version": 2,
                "vin": VIN2,
                "data": {
                    "usage": {
                        "odometer_after_last_trip": [
                            {"data": {"unit": "kilometers", "value": 1200.5}, "timestamp": TS}
                        ]
                    }
                },
            },
        ]
    }
    response = await client.post("/v1/ingest", json=body, headers=provider_headers)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["accepted_count"] == 2 and answer["rejected_count"] == 2
    first, second, third = answer["vehicles"]
    assert first["brand"] == "mercedes_benz"
    assert first["rejected"] == [
        {"source": "vehicles[0].data.charging.battery_level[0].data", "reason": "1.7 is above 1.0"}
    ]
    assert second["rejected"][0]["source"] == "vehicles[1].vin"
    assert "17 characters" in second["rejected"][0]["reason"]
    assert third["accepted"] == [{"property": "usage.odometer_after_last_trip", "changed": True}]
    assert await document(app, MERCEDES_VIN) == {
        "charging": {"status": {"data": "charging", "timestamp": TS}}
    }
    assert (await document(app, VIN2)) is not None


async def test_nothing_acceptable_is_a_422_listing_every_reason(
    client: httpx.AsyncClient, app: FastAPI, provider_headers: dict[str, str]
) -> None:
    body = [{"vin": VIN, "charging": {"battery_level": {"data": "full"}, "warp": {}}}]
    response = await client.post("/v1/ingest", json=body, headers=provider_headers)
    assert response.status_code == 422
    answer = response.json()
    sources = [e["source"] for e in answer["errors"]]
    assert sources == ["vehicles[0].charging.battery_level.data", "vehicles[0].charging.warp"]
    assert "expected a number" in answer["errors"][0]["detail"]
    assert await document(app) is None


async def test_a_redelivered_body_changes_nothing(
    client: httpx.AsyncClient, app: FastAPI, provider_headers: dict[str, str]
) -> None:
    body = {"vin": VIN, "charging": {"battery_level": {"data": 0.8, "timestamp": TS}}}
    await client.post("/v1/ingest", json=body, headers=provider_headers)
    again = await client.post("/v1/ingest", json=body, headers=provider_headers)
    assert again.json()["vehicles"][0]["accepted"][0]["changed"] is False
    db = app.state.autoport.database
    assert await stored.points(db) == 1
    assert await db.fetch_value("SELECT count(*) FROM outbox") == 1


async def test_malformed_json_is_a_400_and_wrong_type_a_415(
    client: httpx.AsyncClient, provider_headers: dict[str, str]
) -> None:
    headers = {**provider_headers, "Content-Type": "application/json"}
    response = await client.post("/v1/ingest", content=b'{"vin": ', headers=headers)
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["errors"][0]["detail"]
    response = await client.post(
        "/v1/ingest", content=b"vin=x", headers={**provider_headers, "Content-Type": "text/plain"}
    )
    assert response.status_code == 415


async def test_a_body_over_the_limit_is_a_413(
    client: httpx.AsyncClient, app: FastAPI, provider_headers: dict[str, str]
) -> None:
    limit = app.state.autoport.settings.max_body_bytes
    big = {"vin": VIN, "charging": {"battery_level": {"data": 0.5}}, "pad": "x" * limit}
    response = await client.post("/v1/ingest", json=big, headers=provider_headers)
    assert response.status_code == 413
    assert await document(app) is None


async def test_unknown_revoked_or_other_environment_secrets_are_401(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    body = {"vin": VIN, "charging": {"battery_level": {"data": 0.5}}}
    response = await client.post("/v1/ingest", json=body)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    response = await client.post(
        "/v1/ingest", json=body, headers={"Authorization": "Bearer ap_ingest_nope"}
    )
    assert response.status_code == 401
    sandbox_secret = await new_provider(app, Environment.sandbox)
    headers = {"Authorization": f"Bearer {sandbox_secret}"}
    assert (await client.post("/v1/ingest", json=body, headers=headers)).status_code == 401
    assert (await client.post("/sandbox/v1/ingest", json=body, headers=headers)).status_code == 200
    db = app.state.autoport.database
    provider_id = await db.fetch_value("SELECT id FROM ingest_providers")
    async with db.transaction() as conn:
        assert await revoke_provider(conn, provider_id=provider_id, now_us=2) is not None
    assert (await client.post("/sandbox/v1/ingest", json=body, headers=headers)).status_code == 401
    stored = await db.fetch_value("SELECT secret_hash FROM ingest_providers")
    assert sandbox_secret not in stored


async def test_a_provider_with_brands_pushes_only_for_them(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """Its only brand when the body names none; with several, the body must name one
    of them; another brand or `sandbox` is rejected naming `brand`, nothing stored."""
    point = {"charging": {"battery_level": {"data": 0.5, "timestamp": TS}}}
    one = {"Authorization": f"Bearer {await new_provider(app, brands=['bmw'])}"}
    two = {"Authorization": f"Bearer {await new_provider(app, brands=['bmw', 'mini'])}"}
    stored = await client.post("/v1/ingest", json={"vin": VIN, **point}, headers=one)
    assert stored.status_code == 200, stored.text
    assert stored.json()["vehicles"][0]["brand"] == "bmw"
    for headers, body in (
        (two, {"vin": VIN2, **point}),
        (two, {"vin": VIN2, "brand": "ford", **point}),
        (one, {"vin": VIN2, "brand": "mini", **point}),
        (one, {"vin": VIN2, "brand": "sandbox", **point}),
    ):
        refused = await client.post("/v1/ingest", json=body, headers=headers)
        assert refused.status_code == 422, (body, refused.text)
        assert refused.json()["errors"][0]["source"] == "brand"
    named = await client.post(
        "/v1/ingest", json={"vin": VIN2, "brand": "MINI", **point}, headers=two
    )
    assert named.json()["vehicles"][0]["brand"] == "mini"


async def test_one_request_of_many_vehicles_is_each_delivery_in_turn(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """The vehicles of one body are stored with a few statements for all of them
    (ingest_many), with the outcome of one delivery after another: a VIN named twice
    sees its first delivery (the older point of the third keeps the newer value), a new
    vehicle is created, and a vehicle refused as a whole (its stored brand is not this
    provider's: 409 in its answer) leaves nothing behind while the others are stored."""
    mini = {"Authorization": f"Bearer {await new_provider(app, brands=['mini'])}"}
    bmw = {"Authorization": f"Bearer {await new_provider(app, brands=['bmw'])}"}
    first = {"charging": {"battery_level": {"data": 0.1, "timestamp": TS}}}
    seeded = await client.post("/v1/ingest", json={"vin": VIN2, **first}, headers=mini)
    assert seeded.status_code == 200, seeded.text
    later = "2024-05-01T10:00:05.000000Z"
    earlier = "2024-05-01T09:59:00.000000Z"
    body = [
        {"vin": VIN, **first},
        {"vin": VIN2, "charging": {"battery_level": {"data": 0.9, "timestamp": later}}},
        {"vin": VIN, "charging": {"battery_level": {"data": 0.7, "timestamp": later}}},
        {"vin": VIN, "charging": {"battery_level": {"data": 0.3, "timestamp": earlier}}},
    ]
    response = await client.post("/v1/ingest", json=body, headers=bmw)
    assert response.status_code == 200, response.text
    answer = response.json()["vehicles"]
    assert [v["vin"] for v in answer] == [VIN, VIN2, VIN, VIN]
    assert [[p["changed"] for p in v["accepted"]] for v in answer] == [[True], [], [True], [False]]
    assert answer[1]["rejected"][0]["source"] == "vehicles[1].brand"
    assert "stored for the brand mini" in answer[1]["rejected"][0]["reason"]
    assert await document(app) == {"charging": {"battery_level": {"data": 0.7, "timestamp": later}}}
    assert await document(app, VIN2) == first
    database = app.state.autoport.database
    brands = await database.fetch_all("SELECT vin, brand FROM vehicles ORDER BY vin")
    assert [(r["vin"], r["brand"]) for r in brands] == [(VIN, "bmw"), (VIN2, "mini")]
    events = await database.fetch_all(
        "SELECT vin, payload FROM outbox WHERE event_type = 'vehicle_data_changed' ORDER BY id"
    )
    data = [(r["vin"], orjson.loads(r["payload"])["data"]) for r in events]
    assert data == [
        (VIN2, {"charging": {"battery_level": [{"data": 0.1, "timestamp": TS}]}}),
        (VIN, {"charging": {"battery_level": [{"data": 0.1, "timestamp": TS}]}}),
        (VIN, {"charging": {"battery_level": [{"data": 0.7, "timestamp": later}]}}),
    ]
    # Every accepted point is history, the older one too; nothing of the refused one.
    assert await stored.points(database) == 4


async def test_a_request_of_twenty_vehicles_costs_a_few_statements(
    app: FastAPI,
    client: httpx.AsyncClient,
    provider_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The statements of one request do not grow with its vehicles (ingest_many): one
    lookup, one history write, one update, one outbox write, whatever the count; a
    statement per vehicle was most of a request's time on PostgreSQL."""
    from autoport.kit import db as kit_db

    def body(second: int) -> list[dict[str, Any]]:
        stamp = f"2024-05-01T10:00:{second:02d}.000000Z"
        return [
            {
                "vin": f"WBA000000000000{n:02d}",
                "brand": "bmw",
                "charging": {"battery_level": {"data": 0.5, "timestamp": stamp}},
                "doors": {"locks_state": {"data": "locked", "timestamp": stamp}},
            }
            for n in range(20)
        ]

    first = await client.post("/v1/ingest", json=body(1), headers=provider_headers)
    assert first.status_code == 200, first.text
    statements: list[str] = []
    for cls in (kit_db.SqliteConnection, kit_db.PostgresConnection):
        for name in ("fetch_all", "fetch_one", "execute", "execute_many"):
            method = getattr(cls, name)

            def counted(self: Any, sql: Any, *args: Any, _method: Any = method) -> Any:
                statements.append(str(sql))
                return _method(self, sql, *args)

            monkeypatch.setattr(cls, name, counted)
    second = await client.post("/v1/ingest", json=body(2), headers=provider_headers)
    assert second.status_code == 200, second.text
    assert second.json()["accepted_count"] == 40
    writes = [s for s in statements if "provider" not in s]
    assert len(writes) <= 6, writes
