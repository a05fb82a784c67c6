"""MQTT transport end to end: a real Mosquitto on a free port, configured by autoport
(password file, ACL), autoport's publisher, and application subscribers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import aiomqtt
import orjson
import pytest

from autoport.config import Settings
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.streaming import tasks
from autoport.streaming.mosquitto import broker_address, topic_of
from autoport.streaming.tasks import MqttPublisher
from tests.streaming.conftest import (
    Broker,
    clear_fleet_vehicle,
    create_application,
    grant_consent,
    ingest,
    issue_credentials,
    live_server,
    new_vin,
    point,
    set_consent_status,
)
from tests.streaming.mqtt import receive

pytestmark = pytest.mark.mqtt

TOPIC = Environment.sandbox
LEVEL = "charging.battery_level"


@contextlib.asynccontextmanager
async def subscriber(
    broker: Broker,
    username: str,
    password: str,
    topic: str,
    *,
    identifier: str | None = None,
    clean_session: bool = True,
) -> AsyncIterator[aiomqtt.Client]:
    async with aiomqtt.Client(
        "127.0.0.1",
        broker.port,
        username=username,
        password=password,
        identifier=identifier,
        clean_session=clean_session,
        timeout=5,
    ) as client:
        await client.subscribe(topic, qos=1)
        yield client


async def test_subscriber_receives_exactly_its_permitted_properties_and_nothing_else(
    database: Database, broker: Broker, mqtt_settings: Settings
) -> None:
    vin_a, vin_b = new_vin(), new_vin()
    app_a = await create_application(database)
    auth_a = await grant_consent(
        database, application_id=app_a, vin=vin_a, properties=["charging.battery_level"]
    )
    app_b = await create_application(database, properties=["diagnostics.odometer"])
    await clear_fleet_vehicle(database, application_id=app_b, vin=vin_b)
    password_a = await issue_credentials(database, app_a)
    password_b = await issue_credentials(database, app_b)
    await broker.write_config(database)
    await broker.start()
    topic_a, topic_b = topic_of(TOPIC, app_a), topic_of(TOPIC, app_b)
    assert topic_a == f"sandbox/level13/{app_a}"

    # Wrong credentials are refused by the broker.
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client(
            "127.0.0.1", broker.port, username=app_a, password=password_b, timeout=5
        ):
            pass

    async with (
        live_server(mqtt_settings),
        subscriber(broker, app_a, password_a, topic_a) as sub_a,
        subscriber(broker, app_b, password_b, topic_b) as sub_b,
    ):
        # B also on A's topic, and on everything (one connection per application: the
        # broker makes a client's id its username).
        await sub_b.subscribe(topic_a, qos=1)
        await sub_b.subscribe("#", qos=1)
        data = {
            "charging": {"battery_level": point(0.42), "estimated_range": point({"value": 1})},
            "diagnostics": {"odometer": point({"value": 100.0, "unit": "kilometers"})},
        }
        await ingest(database, vin=vin_a, data=data)
        [message] = await receive(sub_a, 1, timeout=10)
        assert message["version"] == 2
        assert message["application_id"] == app_a
        assert message["vin"] == vin_a
        assert message["data"] == {"charging": {"battery_level": point(0.42)}}
        assert len(message["message_id"]) == 64

        await ingest(database, vin=vin_b, data=data)
        # B saw nothing of A's (and, subscribed to '#', only its own message, once: its
        # subscriptions overlap, and Mosquitto delivers a message once per client).
        seen = await receive(sub_b, 5, timeout=1.5)
        assert [m["application_id"] for m in seen] == [app_b]
        [message_b] = seen
        assert message_b["data"] == {"diagnostics": {"odometer": data["diagnostics"]["odometer"]}}

        # Revoking A's consent stops A's messages; B's marker proves the pipeline ran.
        await set_consent_status(database, auth_a, "revoked")
        await ingest(database, vin=vin_a, data=data)
        await ingest(database, vin=vin_b, data={"diagnostics": {"odometer": point({"value": 2})}})
        [marker] = await receive(sub_b, 1, timeout=10)
        assert marker["data"]["diagnostics"]["odometer"] == point({"value": 2})
        assert await receive(sub_a, 1, timeout=1.0) == []


async def test_broker_down_during_ingestion_then_up_all_messages_arrive(
    database: Database, broker: Broker, mqtt_settings: Settings
) -> None:
    vin = new_vin()
    app_id = await create_application(database)
    await grant_consent(
        database, application_id=app_id, vin=vin, properties=["charging.battery_level"]
    )
    password = await issue_credentials(database, app_id)
    await broker.write_config(database)
    await broker.start()
    topic = topic_of(TOPIC, app_id)
    # A persistent session: the broker keeps the subscription and queues QoS 1 messages.
    async with subscriber(broker, app_id, password, topic, identifier="a-1", clean_session=False):
        pass

    async with live_server(mqtt_settings):
        await broker.stop()
        levels = [round(i / 100, 2) for i in range(20)]
        for level in levels:
            await ingest(database, vin=vin, data={"charging": {"battery_level": point(level)}})
        for _ in range(500):
            if await database.fetch_value("SELECT COUNT(*) FROM stream_messages") == 20:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(1.0)  # the publisher is failing meanwhile
        assert await database.fetch_value("SELECT mqtt_seq FROM stream_cursors") == 0

        await broker.start()
        async with aiomqtt.Client(
            "127.0.0.1",
            broker.port,
            username=app_id,
            password=password,
            identifier="a-1",
            clean_session=False,
            timeout=5,
        ) as client:
            received = await receive(client, 20, timeout=40)
        seen = {m["message_id"]: m for m in received}
        assert (
            sorted(m["data"]["charging"]["battery_level"][0]["data"] for m in seen.values())
            == levels
        )
        for _ in range(200):
            if await database.fetch_value("SELECT mqtt_seq FROM stream_cursors") == 20:
                break
            await asyncio.sleep(0.05)
        assert await database.fetch_value("SELECT mqtt_seq FROM stream_cursors") == 20


async def connects(broker: Broker, username: str, password: str) -> bool:
    try:
        async with aiomqtt.Client(
            "127.0.0.1", broker.port, username=username, password=password, timeout=5
        ):
            return True
    except aiomqtt.MqttError:
        return False


async def test_credentials_reload_the_running_broker_by_its_pid_file(
    database: Database, broker: Broker, mqtt_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from autoport.streaming.cli import app as streaming_cli

    app_id = await create_application(database)
    await broker.write_config(database)
    await broker.start()
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(mqtt_settings.data_dir))
    monkeypatch.setenv("AUTOPORT_DATABASE_URL", mqtt_settings.resolved_database_url)
    if mqtt_settings.database_schema:
        monkeypatch.setenv("AUTOPORT_DATABASE_SCHEMA", mqtt_settings.database_schema)
    monkeypatch.setenv("AUTOPORT_MQTT_URL", broker.url)
    monkeypatch.setenv("AUTOPORT_MQTT_CONFIG_DIR", str(broker.directory))
    # (The command runs its own event loop: off this one.)
    result = await asyncio.to_thread(
        CliRunner().invoke, streaming_cli, ["credentials", app_id, "--json"]
    )
    assert result.exit_code == 0, result.output
    issued = orjson.loads(result.stdout)
    assert issued["broker_reloaded"] is True
    # No manual reload: the new password works.
    for _ in range(100):
        if await connects(broker, app_id, issued["password"]):
            break
        await asyncio.sleep(0.05)
    assert await connects(broker, app_id, issued["password"])


async def test_one_replica_at_a_time_holds_the_broker_connection(
    database: Database,
    broker: Broker,
    mqtt_settings: Settings,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The broker makes a client's id its username: two publishers connected at once
    would disconnect each other over and over. A lease lets one connect; the other
    takes over when it stops."""
    monkeypatch.setattr(tasks, "CONNECTION_LEASE_SECONDS", 1.0)
    monkeypatch.setattr(tasks, "CONNECTION_RENEW_SECONDS", 0.2)
    vin = new_vin()
    app_id = await create_application(database)
    await grant_consent(database, application_id=app_id, vin=vin, properties=[LEVEL])
    password = await issue_credentials(database, app_id)
    await broker.write_config(database)
    await broker.start()
    address = broker_address(mqtt_settings)
    assert address is not None
    levels = iter(range(100))

    async def feed_and_receive(client: aiomqtt.Client, count: int) -> list[dict[str, Any]]:
        for _ in range(count):
            level = next(levels) / 100
            await ingest(database, vin=vin, data={"charging": {"battery_level": point(level)}})
        return await receive(client, count, timeout=10)

    # The server's own publisher is off (no mqtt_url): two "replicas" publish instead.
    async with (
        live_server(settings) as server,
        subscriber(broker, app_id, password, topic_of(TOPIC, app_id)) as sub,
    ):
        state = server.app.state.autoport
        replicas = [MqttPublisher(state, address) for _ in range(2)]
        runs = [asyncio.create_task(replica.run()) for replica in replicas]
        try:
            for _ in range(10):
                await asyncio.sleep(0.2)
                assert [r.connected.is_set() for r in replicas].count(True) <= 1
            [holder] = [i for i, r in enumerate(replicas) if r.connected.is_set()]
            assert len(await feed_and_receive(sub, 3)) == 3
            # The holder's replica stops: the other one takes over and publishes.
            runs[holder].cancel()
            other = replicas[1 - holder]
            await asyncio.wait_for(other.connected.wait(), 5)
            assert len(await feed_and_receive(sub, 3)) == 3
        finally:
            for run in runs:
                run.cancel()
            await asyncio.gather(*runs, return_exceptions=True)


async def test_new_credentials_work_once_the_broker_reloads_and_old_ones_stop(
    database: Database, broker: Broker
) -> None:
    app_id = await create_application(database)
    await broker.write_config(database)
    await broker.start()
    password = await issue_credentials(database, app_id)
    assert not await connects(broker, app_id, password)

    await broker.write_config(database)
    broker.reload()
    for _ in range(100):
        if await connects(broker, app_id, password):
            break
        await asyncio.sleep(0.05)
    assert await connects(broker, app_id, password)

    replaced = await issue_credentials(database, app_id)
    await broker.write_config(database)
    broker.reload()
    for _ in range(100):
        if not await connects(broker, app_id, password):
            break
        await asyncio.sleep(0.05)
    assert not await connects(broker, app_id, password)
    assert await connects(broker, app_id, replaced)


async def test_published_messages_and_lag_are_measured(
    database: Database, broker: Broker, mqtt_settings: Settings
) -> None:
    from prometheus_client import REGISTRY

    def sample(name: str) -> float:
        return REGISTRY.get_sample_value(name, {"transport": "mqtt"}) or 0.0

    vin = new_vin()
    app_id = await create_application(database)
    await grant_consent(
        database, application_id=app_id, vin=vin, properties=["charging.battery_level"]
    )
    password = await issue_credentials(database, app_id)
    await broker.write_config(database)
    await broker.start()
    before = sample("autoport_stream_messages_published_total")
    lag_before = sample("autoport_stream_publish_lag_seconds_count")
    async with (
        live_server(mqtt_settings),
        subscriber(broker, app_id, password, topic_of(TOPIC, app_id)) as sub,
    ):
        for level in (0.1, 0.2, 0.3):
            await ingest(database, vin=vin, data={"charging": {"battery_level": point(level)}})
        assert len(await receive(sub, 3, timeout=10)) == 3
        for _ in range(100):
            if sample("autoport_stream_messages_published_total") - before >= 3:
                break
            await asyncio.sleep(0.05)
    assert sample("autoport_stream_messages_published_total") - before == 3
    assert sample("autoport_stream_publish_lag_seconds_count") - lag_before == 3
