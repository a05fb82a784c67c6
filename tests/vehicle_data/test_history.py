"""GET /v1/vehicle-data/autoapi-13/{vin}/history and the retention pruning."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.history import migration, partitions
from autoport.history.retention import prune as prune_history
from autoport.history.tasks import seal_round
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import from_iso
from autoport.kit.environments import Environment
from autoport.kit.paging import encode_cursor
from tests.history import legacy, stored
from tests.vehicle_data.conftest import TestCallers

VIN = "WBA00000000000001"
URL = f"/v1/vehicle-data/autoapi-13/{VIN}/history"


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


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
        ({"property": "charging.battery_level", "limit": "9" * 30}, 400, "limit"),
        ({"property": "charging.battery_level", "limit": "-" + "9" * 30}, 400, "limit"),
        ({"property": "charging.battery_level", "cursor": "!!"}, 400, "cursor"),
    ]
    for params, status, source in cases:
        response = await client.get(URL, params=params, headers=headers)
        assert response.status_code == status, (params, response.text)
        assert response.json()["errors"][0]["source"] == source


# Unsigned cursors (the layout before cursors were signed), out-of-range or malformed
# ones included: none is a cursor this endpoint wrote (tests/security/test_list_paging.py).
@pytest.mark.parametrize(
    "cursor",
    [
        b64("99999999999999999999999:1"),  # beyond BIGINT: the driver's OverflowError
        b64("1:99999999999999999999999"),
        b64("9223372036854775808:1"),  # 2**63
        b64("-9223372036854775809:1"),
        b64("1:9223372036854775808"),
        b64("1:-1"),  # row ids are never negative
        b64("-1:-1"),
        b64("1_000:2"),  # int() would take these
        b64(" 1:2"),
        b64("1:2:3"),
        b64("1"),
        b64("\u0663:4"),
        "gA",  # not UTF-8
    ],
)
async def test_cursors_this_endpoint_never_returns_are_400(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, cursor: str
) -> None:
    await fill(app, [1])
    headers = await token_for(callers, ["charging.battery_level"])
    params = {"property": "charging.battery_level", "cursor": cursor}
    response = await client.get(URL, params=params, headers=headers)
    assert response.status_code == 400, response.text
    [error] = response.json()["errors"]
    assert error["source"] == "cursor"
    assert error["detail"] == "cursor: not a cursor this endpoint returned"


async def test_cursors_at_the_edges_of_the_range_are_accepted(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await fill(app, [1, 2])
    properties = ["charging.battery_level"]
    app_id = await callers.application(properties=properties)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=properties)
    headers = {"Authorization": f"Bearer {token}"}
    scope = ("history", "production", app_id, VIN, "charging.battery_level")
    key = app.state.autoport.token_key
    for cursor, count in [
        (encode_cursor(key, scope, [2**63 - 1, 2**63 - 1]), 2),
        (encode_cursor(key, scope, [-(2**63), 0]), 0),
    ]:
        params = {"property": "charging.battery_level", "cursor": cursor}
        response = await client.get(URL, params=params, headers=headers)
        assert response.status_code == 200, response.text
        assert len(response.json()["values"]) == count


async def test_values_before_1970_page_with_their_negative_cursor(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    state = app.state.autoport
    for year in (1901, 1950, 1969):
        await ingest_vehicle_data(
            state.database,
            environment=Environment.production,
            vin=VIN,
            brand="bmw",
            data={
                "charging": {"battery_level": {"data": 0.5, "timestamp": f"{year}-05-01T10:00:00Z"}}
            },
            now_us=state.clock.now_us(),
        )
    headers = await token_for(callers, ["charging.battery_level"])
    params = {"property": "charging.battery_level", "limit": "2"}
    first = (await client.get(URL, params=params, headers=headers)).json()
    assert first["next_cursor"] is not None
    params["cursor"] = first["next_cursor"]
    second = await client.get(URL, params=params, headers=headers)
    assert second.status_code == 200, second.text
    assert [v["timestamp"] for v in second.json()["values"]] == ["1901-05-01T10:00:00.000000Z"]


@pytest.mark.parametrize(
    ("since", "until"),
    [
        ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z"),
        ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"),
        ("9999-12-31T23:59:59Z", "0001-01-01"),
    ],
)
async def test_instants_at_the_ends_of_the_calendar_are_accepted(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, since: str, until: str
) -> None:
    await fill(app, [1])
    headers = await token_for(callers, ["charging.battery_level"])
    params = {"property": "charging.battery_level", "since": since, "until": until}
    response = await client.get(URL, params=params, headers=headers)
    assert response.status_code == 200, response.text
    assert len(response.json()["values"]) == (1 if since.startswith("0001") else 0)


async def test_pruning_removes_only_rows_past_the_retention(app: FastAPI) -> None:
    state = app.state.autoport
    await fill(app, [1, 2])
    state.clock.advance(10 * 86_400)
    await fill(app, [3])
    assert await seal_round(state) == 2  # 1 and 2 into a chunk, 3 stays hot
    state.settings = state.settings.model_copy(update={"vehicle_data_history_retention_days": 5})
    assert await prune_history(state) == 2
    assert await stored.points(state.database) == 1
    # The latest value is not history: pruning never touches it.
    assert await state.database.fetch_value("SELECT count(*) FROM vehicles") == 1
    state.settings = state.settings.model_copy(update={"vehicle_data_history_retention_days": 0})
    state.clock.advance(1000 * 86_400)
    assert await prune_history(state) == 0


async def test_a_small_chunk_grows_only_within_its_partitions_day(app: FastAPI) -> None:
    """A slow series' small chunk takes the next seal's points; on PostgreSQL only those
    that arrived on the UTC day of its partition (grown with a later day's, it would move
    to that day's partition and leave free space in one that takes no more rows)."""
    state = app.state.autoport
    db = state.database
    await fill(app, [1, 2])
    state.clock.advance(2 * 3600)
    assert await seal_round(state) == 2
    now = state.clock.now_us()
    state.clock.advance(((now // partitions.DAY_US + 1) * partitions.DAY_US - now) / 1e6 + 60)
    await fill(app, [3])
    state.clock.advance(2 * 3600)
    assert await seal_round(state) == 1
    counts = [
        int(row["count"])
        for row in await db.fetch_all("SELECT count FROM history_chunks ORDER BY last_ts")
    ]
    assert counts == ([2, 1] if db.dialect == "postgresql" else [3])


async def test_pruning_chunks_leaves_the_writer_as_it_was(app: FastAPI) -> None:
    """On SQLite, chunks past retention are deleted with secure_delete FAST (a build with
    SECURE_DELETE zeroes every freed page otherwise); the writer's setting is the build's
    again afterwards, for the deletions that are no retention (a vehicle's history)."""
    state = app.state.autoport
    db = state.database
    await fill(app, [1, 2, 3])
    state.clock.advance(10 * 86_400)
    assert await seal_round(state) == 3
    sqlite = db.dialect == "sqlite"
    if sqlite:
        async with db.transaction() as conn:
            setting = await conn.fetch_value("PRAGMA secure_delete")
    state.settings = state.settings.model_copy(update={"vehicle_data_history_retention_days": 5})
    assert await prune_history(state) == 3
    assert await db.fetch_value("SELECT count(*) FROM history_chunks") == 0
    if sqlite:
        async with db.transaction() as conn:
            assert await conn.fetch_value("PRAGMA secure_delete") == setting


async def test_pruning_per_brand_in_bounded_batches(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A brand's own retention wins over the default (0: kept forever), and no batch
    deletes more than `retention_prune_batch_size` rows (counted by the statements)."""
    state = app.state.autoport
    vins = {"bmw": VIN, "mercedes_benz": "WDD12345678901234", "audi": "WAU12345678901234"}
    for brand, vin in vins.items():
        for minute in range(25):
            await ingest_vehicle_data(
                state.database,
                environment=Environment.production,
                vin=vin,
                brand=brand,
                data={
                    "charging": {
                        "battery_level": {"data": minute / 100, "timestamp": stamp(minute)}
                    }
                },
                now_us=state.clock.now_us(),
            )
    state.clock.advance(10 * 86_400)
    state.settings = state.settings.model_copy(
        update={
            "vehicle_data_history_retention_days": 5,
            "vehicle_data_history_retention_days_by_brand": {"audi": 30, "mercedes_benz": 0},
            "retention_prune_batch_size": 10,
            "retention_prune_pause_seconds": 0,
        }
    )
    deleted: list[int] = []
    from autoport.history import repository

    for name in ("prune_hot",):
        real = getattr(repository, name)

        async def counted(*args: Any, _real: Any = real, **kwargs: Any) -> int:
            count = int(await _real(*args, **kwargs))
            deleted.append(count)
            return count

        monkeypatch.setattr(repository, name, counted)
    assert await prune_history(state) == 25
    assert max(deleted) <= 10 and len([d for d in deleted if d]) >= 3
    assert await stored.points_by_vin(state.database) == {
        vins["audi"]: 25,  # 30 days for audi: not yet
        vins["mercedes_benz"]: 25,  # kept forever
    }
    state.clock.advance(30 * 86_400)
    assert await prune_history(state) == 25  # audi's turn; mercedes_benz stays


async def test_a_cursor_from_before_the_upgrade_pages_on_where_it_stopped(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    """A cursor of the row-per-point storage, (timestamp, row id), pages on exactly where
    it stopped while its row is in the old table, three values at its microsecond
    included; once the row is moved, the page goes on below that microsecond (the
    upgrade note in CHANGELOG.md)."""
    state = app.state.autoport
    db = state.database
    await fill(app, [5])  # the vehicle, and a point after the upgrade
    rows = [
        {
            "environment": "production",
            "vin": VIN,
            "capability": "charging",
            "property": "battery_level",
            "timestamp": from_iso(stamp(minute)),
            "digest": hashlib.blake2b(text.encode(), digest_size=8).hexdigest(),
            "value": text,
            "received_at": 1,
        }
        for minute, text in [
            (0, '{"data":0.1,"timestamp":"2024-05-01T10:00:00.000000Z"}'),
            (0, '{"data":0.2,"timestamp":"2024-05-01T10:00:00.000000Z"}'),
            (0, '{"data":0.3,"timestamp":"2024-05-01T10:00:00.000000Z"}'),
            (2, '{"data":0.02,"timestamp":"2024-05-01T10:02:00.000000Z"}'),
        ]
    ]
    await legacy.create_table(db)
    try:
        async with db.transaction() as conn:
            await legacy.insert(conn, rows)
        ids = [
            int(r["id"])
            for r in await db.fetch_all("SELECT id FROM vehicle_data_history ORDER BY id")
        ]
        properties = ["charging.battery_level"]
        app_id = await callers.application(properties=properties)
        token = await callers.vehicle_token(app_id, vin=VIN, properties=properties)
        headers = {"Authorization": f"Bearer {token}"}
        scope = ("history", "production", app_id, VIN, "charging.battery_level")

        async def page_after(row_id: int) -> list[float]:
            # What this endpoint handed out before 0020: (timestamp, row id), signed.
            cursor = encode_cursor(state.token_key, scope, [from_iso(stamp(0)), row_id])
            params = {"property": "charging.battery_level", "cursor": cursor}
            answer = await client.get(URL, params=params, headers=headers)
            assert answer.status_code == 200, answer.text
            return [value["data"] for value in answer.json()["values"]]

        params = {"property": "charging.battery_level"}
        every = (await client.get(URL, params=params, headers=headers)).json()["values"]
        assert [value["data"] for value in every] == [0.05, 0.02, 0.3, 0.2, 0.1]
        # Served down to 0.2 (the second row stored at 10:00): 0.1 is next.
        assert await page_after(ids[1]) == [0.1]
        assert await page_after(ids[2]) == [0.2, 0.1]
        assert await page_after(ids[0]) == []
        mover = migration.Mover(db, target=10, now_us=state.clock.now_us, drop_after_us=0)
        assert await mover.claim()
        while not mover.done:
            await mover.step()
        assert [value["data"] for value in every] == [
            value["data"]
            for value in (await client.get(URL, params=params, headers=headers)).json()["values"]
        ]
        assert await page_after(ids[1]) == []  # moved: below 10:00 only
    finally:
        await legacy.drop_table(db)
