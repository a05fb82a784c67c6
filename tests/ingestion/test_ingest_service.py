"""ingest_vehicle_data on both backends: newest value wins whatever the delivery order,
duplicates change nothing, concurrent ingestions converge, bad points never land."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson
import pytest

from autoport.ingestion.service import IngestError, ingest_vehicle_data
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from tests.history import stored as history_stored

VIN = "WBA00000000000001"
MERCEDES_VIN = "WDD00000000000001"
PROD = Environment.production


def level(value: float, second: int) -> dict[str, Any]:
    return {"charging": {"battery_level": {"data": value, "timestamp": stamp(second)}}}


def stamp(second: int) -> str:
    minutes, seconds = divmod(second, 60)
    return f"2024-05-01T10:{minutes:02d}:{seconds:02d}.000000Z"


async def stored(database: Database, vin: str = VIN, env: str = "production") -> dict[str, Any]:
    row = await database.fetch_one(
        "SELECT document FROM vehicles WHERE environment = :e AND vin = :v", {"e": env, "v": vin}
    )
    assert row is not None
    document: dict[str, Any] = orjson.loads(row["document"])
    return document


async def outbox_payloads(database: Database) -> list[dict[str, Any]]:
    rows = await database.fetch_all(
        "SELECT payload FROM outbox WHERE event_type = 'vehicle_data_changed' ORDER BY id"
    )
    return [orjson.loads(row["payload"]) for row in rows]


async def test_a_newer_point_replaces_and_an_older_one_does_not(database: Database) -> None:
    await ingest_vehicle_data(
        database, environment=PROD, vin=VIN, brand="bmw", data=level(0.5, 10), now_us=1
    )
    older = await ingest_vehicle_data(
        database, environment=PROD, vin=VIN, brand="bmw", data=level(0.1, 5), now_us=2
    )
    assert [p.changed for p in older.accepted] == [False]
    assert (await stored(database))["charging"]["battery_level"]["data"] == 0.5
    newer = await ingest_vehicle_data(
        database, environment=PROD, vin=VIN, brand="bmw", data=level(0.9, 20), now_us=3
    )
    assert [p.changed for p in newer.accepted] == [True]
    assert (await stored(database))["charging"]["battery_level"] == {
        "data": 0.9,
        "timestamp": stamp(20),
    }
    # The older point is still history.
    assert await history_stored.points(database) == 3


async def test_any_delivery_order_ends_on_the_newest_value(database: Database) -> None:
    seconds = list(range(40))
    random.Random(7).shuffle(seconds)
    for second in seconds:
        await ingest_vehicle_data(
            database,
            environment=PROD,
            vin=VIN,
            brand="bmw",
            data=level(second / 100, second),
            now_us=second,
        )
    assert (await stored(database))["charging"]["battery_level"] == {
        "data": 0.39,
        "timestamp": stamp(39),
    }


async def test_a_duplicate_changes_nothing_and_emits_nothing(database: Database) -> None:
    for now in (1, 2, 3):
        report = await ingest_vehicle_data(
            database, environment=PROD, vin=VIN, brand="bmw", data=level(0.5, 10), now_us=now
        )
    assert [p.changed for p in report.accepted] == [False]
    assert await history_stored.points(database) == 1
    assert len(await outbox_payloads(database)) == 1


async def test_same_timestamp_conflicts_converge_in_any_order(database: Database) -> None:
    vins = ("WBA00000000000002", "WBA00000000000003")
    for vin, order in zip(vins, ((0.2, 0.8), (0.8, 0.2)), strict=True):
        for value in order:
            await ingest_vehicle_data(
                database, environment=PROD, vin=vin, brand="bmw", data=level(value, 1), now_us=1
            )
    first, second = [await stored(database, vin) for vin in vins]
    assert first == second


async def test_concurrent_ingestion_keeps_the_newest_value(database: Database) -> None:
    seconds = list(range(60))
    random.Random(3).shuffle(seconds)

    async def one(second: int) -> None:
        await ingest_vehicle_data(
            database,
            environment=PROD,
            vin=VIN,
            brand="bmw",
            data=level(second / 100, second),
            now_us=second,
        )

    await asyncio.gather(*(one(s) for s in seconds))
    assert (await stored(database))["charging"]["battery_level"]["data"] == 0.59
    assert await history_stored.points(database) == 60


async def test_a_bad_point_is_rejected_and_the_good_ones_stored(database: Database) -> None:
    report = await ingest_vehicle_data(
        database,
        environment=PROD,
        vin=VIN,
        brand="bmw",
        data={
            "charging": {
                "battery_level": {"data": 1.7, "timestamp": stamp(1)},
                "status": {"data": "charging", "timestamp": stamp(1)},
            },
            "doors": {"locks_state": {"data": "locked", "timestamp": stamp(1)}},
            "no_such_group": {},
        },
        now_us=1,
    )
    assert [(p.capability, p.property) for p in report.accepted] == [
        ("charging", "status"),
        ("doors", "locks_state"),
    ]
    reasons = {r.source: r.reason for r in report.rejected}
    assert reasons["charging.battery_level.data"] == "1.7 is above 1.0"
    assert "unknown capability" in reasons["no_such_group"]
    document = await stored(database)
    assert "battery_level" not in document["charging"]
    assert document["doors"]["locks_state"]["data"] == "locked"


async def test_the_outbox_event_carries_only_changed_points_as_lists(database: Database) -> None:
    await ingest_vehicle_data(
        database,
        environment=PROD,
        vin=MERCEDES_VIN,
        brand="mercedes-benz",
        data=level(0.5, 10),
        now_us=1,
    )
    await ingest_vehicle_data(
        database,
        environment=PROD,
        vin=MERCEDES_VIN,
        brand="mercedes-benz",
        data={
            "charging": {"battery_level": {"data": 0.1, "timestamp": stamp(5)}},
            "doors": {
                "locks": [
                    {
                        "data": {"location": "front_left", "lock_state": "locked"},
                        "timestamp": stamp(6),
                    }
                ]
            },
        },
        now_us=2,
    )
    first, second = await outbox_payloads(database)
    assert first == {
        "vin": MERCEDES_VIN,
        "brand": "mercedes_benz",
        "data": {"charging": {"battery_level": [{"data": 0.5, "timestamp": stamp(10)}]}},
    }
    assert second["data"] == {
        "doors": {
            "locks": [
                {"data": {"location": "front_left", "lock_state": "locked"}, "timestamp": stamp(6)}
            ]
        }
    }
    row = await database.fetch_one("SELECT vin, application_id FROM outbox LIMIT 1")
    assert row is not None and row["vin"] == MERCEDES_VIN and row["application_id"] is None


async def test_environments_are_kept_apart(database: Database) -> None:
    await ingest_vehicle_data(
        database, environment=PROD, vin=VIN, brand="bmw", data=level(0.5, 10), now_us=1
    )
    await ingest_vehicle_data(
        database,
        environment=Environment.sandbox,
        vin=VIN,
        brand="bmw",
        data=level(0.2, 20),
        now_us=1,
    )
    assert (await stored(database))["charging"]["battery_level"]["data"] == 0.5
    assert (await stored(database, env="sandbox"))["charging"]["battery_level"]["data"] == 0.2
    brand = await database.fetch_value(
        "SELECT brand FROM vehicles WHERE environment = 'sandbox' AND vin = :v", {"v": VIN}
    )
    assert brand == "sandbox"


async def test_a_streaming_v2_list_for_a_single_property_keeps_its_newest(
    database: Database,
) -> None:
    data = {
        "charging": {
            "battery_level": [
                {"data": 0.3, "timestamp": stamp(3)},
                {"data": 0.9, "timestamp": stamp(9)},
                {"data": 0.6, "timestamp": stamp(6)},
            ]
        }
    }
    report = await ingest_vehicle_data(
        database, environment=PROD, vin=VIN, brand="bmw", data=data, now_us=1
    )
    assert [p.changed for p in report.accepted] == [True, True, False]
    assert (await stored(database))["charging"]["battery_level"]["data"] == 0.9


@pytest.mark.parametrize(
    ("vin", "brand", "source"),
    [
        ("WBA0000000000001", "bmw", "vin"),
        ("WBA0000000000000I", "bmw", "vin"),
        (VIN, "trabant", "brand"),
    ],
)
async def test_a_bad_vin_or_brand_is_refused_whole(
    database: Database, vin: str, brand: str, source: str
) -> None:
    with pytest.raises(IngestError) as error:
        await ingest_vehicle_data(
            database, environment=PROD, vin=vin, brand=brand, data=level(0.5, 1), now_us=1
        )
    assert error.value.source == source
    assert await database.fetch_value("SELECT count(*) FROM vehicles") == 0


async def test_concurrent_first_deliveries_of_a_new_vehicle_keep_every_property(
    database: Database,
) -> None:
    # Several transactions race to create the same vehicle row; the losers must merge
    # their points into the winner's row, not drop them.
    props = ["battery_level", "charge_limit", "status", "plugged_in", "charge_mode"]
    values: dict[str, Any] = {
        "battery_level": 0.5,
        "charge_limit": 0.9,
        "status": "charging",
        "plugged_in": "plugged_in",
        "charge_mode": "immediate",
    }

    async def one(name: str) -> None:
        await ingest_vehicle_data(
            database,
            environment=PROD,
            vin=VIN,
            brand="bmw",
            data={"charging": {name: {"data": values[name], "timestamp": stamp(1)}}},
            now_us=1,
        )

    await asyncio.gather(*(one(name) for name in props))
    document = await stored(database)
    assert sorted(document["charging"]) == sorted(props)
    assert len(await outbox_payloads(database)) == len(props)


async def test_the_brand_is_kept_when_not_given_and_never_forgotten(database: Database) -> None:
    await ingest_vehicle_data(
        database, environment=PROD, vin=VIN, brand=None, data=level(0.1, 1), now_us=1
    )
    brand_sql = "SELECT brand FROM vehicles WHERE vin = :v"
    assert await database.fetch_value(brand_sql, {"v": VIN}) == "unknown"
    await ingest_vehicle_data(
        database, environment=PROD, vin=VIN, brand="BMW", data=level(0.2, 2), now_us=2
    )
    for brand in (None, "unknown"):
        report = await ingest_vehicle_data(
            database, environment=PROD, vin=VIN, brand=brand, data=level(0.3, 3), now_us=3
        )
        assert report.brand == "bmw"
    assert await database.fetch_value(brand_sql, {"v": VIN}) == "bmw"
    # A sender of `mini` alone cannot take a vehicle stored for `bmw` (409)...
    with pytest.raises(IngestError) as refused:
        await ingest_vehicle_data(
            database, environment=PROD, vin=VIN, brand="mini", data=level(0.3, 3), now_us=4
        )
    assert (refused.value.source, refused.value.status) == ("brand", 409)
    assert await database.fetch_value(brand_sql, {"v": VIN}) == "bmw"
    # ... one that speaks for both (a provider of bmw and mini) can.
    await ingest_vehicle_data(
        database,
        environment=PROD,
        vin=VIN,
        brand="mini",
        data=level(0.3, 3),
        now_us=4,
        speaks_for=("bmw", "mini"),
    )
    assert await database.fetch_value(brand_sql, {"v": VIN}) == "mini"
