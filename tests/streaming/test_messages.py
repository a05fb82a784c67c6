"""From outbox events to per-application schema-v2 messages in the stream log."""

from __future__ import annotations

import asyncio
import re

import orjson
import pytest
from fastapi import FastAPI

from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.streaming.schemas import message_id
from autoport.streaming.service import permitted_data
from autoport.streaming.tasks import StreamBuilder
from tests.streaming.conftest import (
    HOUR_US,
    clear_fleet_vehicle,
    create_application,
    grant_consent,
    ingest,
    new_vin,
    point,
    set_consent_status,
    stored_messages,
)

HEX64 = re.compile(r"^[0-9A-F]{64}$")

DATA = {
    "charging": {
        "battery_level": point(0.5),
        "estimated_range": point({"value": 300, "unit": "kilometers"}),
    },
    "diagnostics": {"odometer": point({"value": 12000.5, "unit": "kilometers"})},
    "doors": {
        "positions": [
            {
                "data": {"location": "front_left", "position": "closed"},
                "timestamp": "2026-11-23T10:00:00.000000Z",
            },
            {
                "data": {"location": "front_right", "position": "open"},
                "timestamp": "2026-11-23T10:00:00.000000Z",
            },
        ]
    },
}


def builder(app: FastAPI) -> StreamBuilder:
    state: AppState = app.state.autoport
    return StreamBuilder(state)


def db_of(app: FastAPI) -> Database:
    database: Database = app.state.autoport.database
    return database


async def outbox_count(db: Database) -> int:
    return int(await db.fetch_value("SELECT COUNT(*) FROM outbox WHERE consumer = 'streaming'"))


async def test_each_application_receives_only_its_permitted_properties(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vin = new_vin()
    consent_app = await create_application(db, properties=["charging.battery_level"])
    await grant_consent(
        db,
        application_id=consent_app,
        vin=vin,
        properties=["charging.battery_level", "doors.positions"],
    )
    fleet_app = await create_application(
        db, properties=["diagnostics.odometer", "charging.estimated_range"]
    )
    await clear_fleet_vehicle(db, application_id=fleet_app, vin=vin)
    stranger = await create_application(db, properties=["charging.battery_level"])

    await ingest(db, at_us=clock.now_us(), vin=vin, data=DATA)
    assert await builder(app).run_once() == 1

    [(seq, consent_msg)] = await stored_messages(db, consent_app)
    assert seq == 1
    assert consent_msg["version"] == 2
    assert consent_msg["application_id"] == consent_app
    assert consent_msg["vin"] == vin
    assert consent_msg["data"] == {
        "charging": {"battery_level": DATA["charging"]["battery_level"]},
        "doors": {"positions": DATA["doors"]["positions"]},
    }
    assert HEX64.match(consent_msg["message_id"])

    [(_, fleet_msg)] = await stored_messages(db, fleet_app)
    assert fleet_msg["data"] == {
        "charging": {"estimated_range": DATA["charging"]["estimated_range"]},
        "diagnostics": {"odometer": DATA["diagnostics"]["odometer"]},
    }
    assert await stored_messages(db, stranger) == []
    assert await outbox_count(db) == 0


async def test_message_id_is_stable_for_the_same_content_and_differs_per_application(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vin = new_vin()
    first = await create_application(db)
    second = await create_application(db)
    for app_id in (first, second):
        await grant_consent(
            db, application_id=app_id, vin=vin, properties=["charging.battery_level"]
        )
    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.7)}}
    )
    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.7)}}
    )
    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.8)}}
    )
    assert await builder(app).run_once() == 3

    ids = [m["message_id"] for _, m in await stored_messages(db, first)]
    assert ids[0] == ids[1] != ids[2]
    assert ids[0] == message_id(first, vin, {"charging": {"battery_level": point(0.7)}})
    other = [m["message_id"] for _, m in await stored_messages(db, second)]
    assert other[0] != ids[0]


async def test_single_wrapper_values_become_arrays_and_failures_pass_through(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vin = new_vin()
    app_id = await create_application(db)
    await grant_consent(
        db, application_id=app_id, vin=vin, properties=["charging.battery_level", "charging.status"]
    )
    failure = {
        "failure": {"reason": "oem_error", "description": "no answer"},
        "timestamp": "2026-11-23T10:00:00.000000Z",
    }
    await ingest(
        db,
        at_us=clock.now_us(),
        vin=vin,
        data={
            "charging": {
                "battery_level": {"data": 0.2, "timestamp": "2026-11-23T10:00:00Z"},
                "status": [failure],
            }
        },
    )
    await builder(app).run_once()
    [(_, message)] = await stored_messages(db, app_id)
    assert message["data"]["charging"]["battery_level"] == [
        {"data": 0.2, "timestamp": "2026-11-23T10:00:00Z"}
    ]
    assert message["data"]["charging"]["status"] == [failure]


async def test_no_message_without_an_approved_consent_in_its_validity_window(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vin = new_vin()
    now = clock.now_us()
    revoked = await create_application(db)
    await grant_consent(
        db, application_id=revoked, vin=vin, properties=["charging.battery_level"], status="revoked"
    )
    pending = await create_application(db)
    await grant_consent(
        db, application_id=pending, vin=vin, properties=["charging.battery_level"], status="pending"
    )
    expired = await create_application(db)
    await grant_consent(
        db,
        application_id=expired,
        vin=vin,
        properties=["charging.battery_level"],
        valid_from=now - 2 * HOUR_US,
        valid_until=now - HOUR_US,
    )
    future = await create_application(db)
    await grant_consent(
        db,
        application_id=future,
        vin=vin,
        properties=["charging.battery_level"],
        valid_from=now + HOUR_US,
    )
    fleet_pending = await create_application(db, properties=["charging.battery_level"])
    await clear_fleet_vehicle(db, application_id=fleet_pending, vin=vin, status="pending")
    other_env = await create_application(db, environment=Environment.production)
    await grant_consent(
        db,
        application_id=other_env,
        vin=vin,
        properties=["charging.battery_level"],
        environment=Environment.production,
    )

    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.1)}}
    )
    assert await builder(app).run_once() == 1
    for app_id in (revoked, pending, expired, future, fleet_pending, other_env):
        assert await stored_messages(db, app_id) == [], app_id
    assert await outbox_count(db) == 0


async def test_revoking_consent_stops_the_applications_messages(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vin = new_vin()
    app_id = await create_application(db)
    auth_id = await grant_consent(
        db, application_id=app_id, vin=vin, properties=["charging.battery_level"]
    )
    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.1)}}
    )
    await builder(app).run_once()
    await set_consent_status(db, auth_id, "revoked", at_us=clock.now_us())
    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.2)}}
    )
    # The authorization_changed event is acknowledged without a message.
    assert await builder(app).run_once() == 2
    messages = await stored_messages(db, app_id)
    assert [m["data"]["charging"]["battery_level"][0]["data"] for _, m in messages] == [0.1]
    assert await outbox_count(db) == 0


async def test_clearance_and_authorization_events_are_acknowledged_without_messages(
    app: FastAPI, clock: FrozenClock
) -> None:
    from autoport.kit import outbox

    db = db_of(app)
    app_id = await create_application(db)
    async with db.transaction() as conn:
        await outbox.emit(
            conn,
            environment=Environment.sandbox,
            event_type="fleet_clearance_changed",
            payload={"action": "approved", "detail": None},
            now_us=clock.now_us(),
            vin=new_vin(),
            application_id=app_id,
        )
        await outbox.emit(
            conn,
            environment=Environment.sandbox,
            event_type="authorization_changed",
            payload={"action": "approved", "authorization_id": "x", "detail": None},
            now_us=clock.now_us(),
            vin=new_vin(),
            application_id=app_id,
        )
    assert await builder(app).run_once() == 2
    assert await outbox_count(db) == 0
    assert int(await db.fetch_value("SELECT COUNT(*) FROM stream_messages")) == 0
    # The webhooks consumer's copies are left alone.
    assert int(await db.fetch_value("SELECT COUNT(*) FROM outbox WHERE consumer = 'webhooks'")) == 2


async def test_sequence_numbers_are_contiguous_per_application(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vin_a, vin_b = new_vin(), new_vin()
    first = await create_application(db)
    second = await create_application(db)
    await grant_consent(db, application_id=first, vin=vin_a, properties=["charging.battery_level"])
    await grant_consent(db, application_id=first, vin=vin_b, properties=["charging.battery_level"])
    await grant_consent(db, application_id=second, vin=vin_b, properties=["charging.battery_level"])
    for i in range(5):
        await ingest(
            db,
            at_us=clock.now_us(),
            vin=vin_a if i % 2 else vin_b,
            data={"charging": {"battery_level": point(i / 10)}},
        )
    await builder(app).run_once()
    await ingest(
        db, at_us=clock.now_us(), vin=vin_b, data={"charging": {"battery_level": point(0.9)}}
    )
    await builder(app).run_once()
    assert [seq for seq, _ in await stored_messages(db, first)] == [1, 2, 3, 4, 5, 6]
    assert [seq for seq, _ in await stored_messages(db, second)] == [1, 2, 3, 4]
    # The order within an application is the ingestion order.
    levels = [
        m["data"]["charging"]["battery_level"][0]["data"]
        for _, m in await stored_messages(db, first)
    ]
    assert levels == [0.0, 0.1, 0.2, 0.3, 0.4, 0.9]


async def test_malformed_events_are_acknowledged_and_do_not_block_the_rest(
    app: FastAPI, clock: FrozenClock
) -> None:
    from autoport.kit import outbox

    db = db_of(app)
    vin = new_vin()
    app_id = await create_application(db)
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    async with db.transaction() as conn:
        await outbox.emit(
            conn,
            environment=Environment.sandbox,
            event_type="vehicle_data_changed",
            payload={"vin": vin, "brand": "sandbox", "data": "nonsense"},
            now_us=1,
            vin=vin,
        )
    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.3)}}
    )
    assert await builder(app).run_once() == 2
    assert len(await stored_messages(db, app_id)) == 1
    assert await outbox_count(db) == 0


async def test_pruning_keeps_messages_the_broker_has_not_acknowledged(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vin = new_vin()
    app_id = await create_application(db)
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    for i in range(3):
        await ingest(
            db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(i / 10)}}
        )
    work = builder(app)
    await work.run_once()
    clock.advance(work.state.settings.stream_retention_hours * 3600 + 1)
    state: AppState = app.state.autoport
    # MQTT on, cursor at 1: only the acknowledged message may go.
    state.settings = state.settings.model_copy(update={"mqtt_url": "mqtt://127.0.0.1:1"})
    await db.execute(
        "UPDATE stream_cursors SET mqtt_seq = 1 WHERE application_id = :a", {"a": app_id}
    )
    assert await work.prune() == 1
    assert [seq for seq, _ in await stored_messages(db, app_id)] == [2, 3]
    # MQTT off: retention alone decides.
    state.settings = state.settings.model_copy(update={"mqtt_url": None})
    assert await work.prune() == 2


def test_permitted_data_skips_unknown_shapes() -> None:
    data = {"charging": {"battery_level": point(0.1), "status": "bad"}, "x": "not a group"}
    assert permitted_data(
        data, frozenset({"charging.battery_level", "charging.status", "x.y"})
    ) == {"charging": {"battery_level": point(0.1)}}
    assert orjson.dumps(permitted_data(data, frozenset())) == b"{}"


async def test_concurrent_builders_write_each_message_exactly_once(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = db_of(app)
    vins = [new_vin() for _ in range(4)]
    app_id = await create_application(db)
    for vin in vins:
        await grant_consent(
            db, application_id=app_id, vin=vin, properties=["charging.battery_level"]
        )
    total = 240
    for i in range(total):
        await ingest(
            db,
            at_us=clock.now_us(),
            vin=vins[i % 4],
            data={"charging": {"battery_level": point(i)}},
        )
    state: AppState = app.state.autoport
    workers = [StreamBuilder(state) for _ in range(3)]
    for worker in workers:
        worker.batch = 20

    async def drain(worker: StreamBuilder) -> None:
        while await outbox_count(db):
            await worker.run_once()
            await asyncio.sleep(0)

    await asyncio.gather(*(drain(w) for w in workers))
    messages = await stored_messages(db, app_id)
    # Sequence numbers have no gap and no duplicate; every event became one message.
    assert [seq for seq, _ in messages] == list(range(1, total + 1))
    values = [m["data"]["charging"]["battery_level"][0]["data"] for _, m in messages]
    assert sorted(values) == list(range(total))


async def test_batched_reader_lookup_agrees_with_kit_access(
    app: FastAPI, clock: FrozenClock
) -> None:
    from autoport.vehicles.access import Reader, readers_of, readers_of_many

    db = db_of(app)
    now = clock.now_us()
    vins = [new_vin() for _ in range(4)]
    both = await create_application(db, properties=["diagnostics.odometer"])
    await grant_consent(db, application_id=both, vin=vins[0], properties=["charging.battery_level"])
    await clear_fleet_vehicle(db, application_id=both, vin=vins[0])
    consent = await create_application(db)
    await grant_consent(db, application_id=consent, vin=vins[0], properties=["doors.positions"])
    await grant_consent(db, application_id=consent, vin=vins[1], properties=["doors.positions"])
    expired = await create_application(db)
    await grant_consent(
        db,
        application_id=expired,
        vin=vins[1],
        properties=["charging.battery_level"],
        valid_from=now - 2 * HOUR_US,
        valid_until=now - HOUR_US,
    )
    revoked = await create_application(db)
    await grant_consent(
        db,
        application_id=revoked,
        vin=vins[2],
        properties=["charging.battery_level"],
        status="revoked",
    )
    fleet_pending = await create_application(db, properties=["charging.battery_level"])
    await clear_fleet_vehicle(db, application_id=fleet_pending, vin=vins[2], status="pending")
    disabled = await create_application(db, properties=["charging.battery_level"])
    await clear_fleet_vehicle(db, application_id=disabled, vin=vins[3])
    await db.execute("UPDATE applications SET disabled_at = 1 WHERE id = :id", {"id": disabled})

    # Every sandbox vehicle's data is stored as brand `sandbox`.
    many = await readers_of_many(
        db.reader,
        environment=Environment.sandbox,
        vins=vins,
        now_us=now,
        brands=dict.fromkeys(vins, "sandbox"),
    )
    for vin in vins:
        one = await readers_of(
            db.reader, environment=Environment.sandbox, vin=vin, brand="sandbox", now_us=now
        )
        assert many[vin] == one, vin
    # Consent and fleet clearance merge per application; expired, revoked, pending and
    # disabled give nothing.
    assert many[vins[0]] == sorted(
        [
            Reader(both, frozenset({"charging.battery_level", "diagnostics.odometer"})),
            Reader(consent, frozenset({"doors.positions"})),
        ],
        key=lambda r: r.application_id,
    )
    assert many[vins[1]] == [Reader(consent, frozenset({"doors.positions"}))]
    assert many[vins[2]] == [] and many[vins[3]] == []


async def test_a_failed_batch_leaves_its_events_due_at_once(
    app: FastAPI, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The events are taken out of the outbox in the transaction that logs their
    messages (outbox.take): a batch that fails leaves them as they were, due for the
    next batch at once, without a lease to run out first, and nothing of it is logged."""
    from autoport.streaming import repository

    db = db_of(app)
    vin = new_vin()
    app_id = await create_application(db)
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    await ingest(
        db, at_us=clock.now_us(), vin=vin, data={"charging": {"battery_level": point(0.3)}}
    )
    work = builder(app)
    original = repository.create_messages

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(repository, "create_messages", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        await work.run_once()
    assert await outbox_count(db) == 1
    assert await stored_messages(db, app_id) == []
    leased = await db.fetch_value(
        "SELECT COUNT(*) FROM outbox WHERE consumer = 'streaming' AND claimed_by IS NOT NULL"
    )
    assert leased == 0
    monkeypatch.setattr(repository, "create_messages", original)
    assert await work.run_once() == 1
    assert [seq for seq, _ in await stored_messages(db, app_id)] == [1]
    assert await outbox_count(db) == 0
