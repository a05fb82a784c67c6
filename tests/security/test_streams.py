"""Attacks on the long-lived connections: SSE streams that outlive their token, too many
streams, a resume that loses messages; MQTT for a disabled application, and one
application taking over another's MQTT client id. Real uvicorn, real Mosquitto."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import aiomqtt
import httpx
import orjson
import pytest
from pydantic import SecretStr

from autoport.config import Settings
from autoport.kit.clock import FrozenClock, now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.streaming.mosquitto import broker_address, topic_of
from tests.streaming.conftest import (
    CREDENTIALS,
    Broker,
    broker,
    create_application,
    grant_consent,
    ingest,
    issue_credentials,
    live_server,
    mqtt_settings,
    new_vin,
    point,
    set_consent_status,
)

# The streaming package's broker fixtures, used here too.
__all__ = ["broker", "mqtt_settings"]

LEVEL = "charging.battery_level"
ADMIN_TOKEN = "streams-admin-token"


class Events:
    """Every SSE block of a response (also data-less ones, which set the client's last
    event id), comments left out."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines = response.aiter_lines()

    async def next(self, timeout: float = 10.0) -> dict[str, str]:
        async def read() -> dict[str, str]:
            block: dict[str, str] = {}
            async for line in self.lines:
                if line == "":
                    if set(block) - {"retry"}:
                        return block
                    block = {}
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                block[name] = value.removeprefix(" ")
            raise EOFError("stream ended")

        return await asyncio.wait_for(read(), timeout)

    async def next_data(self, timeout: float = 10.0) -> dict[str, str]:
        while True:
            block = await self.next(timeout)
            if "data" in block and block.get("event") != "start":
                return block

    async def rest(self, timeout: float = 10.0) -> list[dict[str, str]]:
        """The blocks until the server closes the stream."""
        blocks: list[dict[str, str]] = []
        with contextlib.suppress(EOFError):
            while True:
                blocks.append(await self.next(timeout))
        return blocks


@contextlib.asynccontextmanager
async def sse(
    client: httpx.AsyncClient, token: str, last_event_id: str | None = None
) -> AsyncIterator[Events]:
    headers = {"Authorization": f"Bearer {token}"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    async with client.stream("GET", "/sandbox/v1/stream", headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        yield Events(response)


async def feed(db: Database, vin: str, levels: list[float], at_us: int | None = None) -> None:
    for level in levels:
        await ingest(db, vin=vin, data={"charging": {"battery_level": point(level)}}, at_us=at_us)


async def logged(db: Database, application_id: str, count: int) -> None:
    for _ in range(500):
        found = await db.fetch_value(
            "SELECT COUNT(*) FROM stream_messages WHERE application_id = :app",
            {"app": application_id},
        )
        if found == count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the worker did not write {count} messages")


def message(block: dict[str, str]) -> dict[str, Any]:
    decoded: dict[str, Any] = orjson.loads(block["data"])
    return decoded


async def reader_app(db: Database, vin: str) -> str:
    app_id = await create_application(db)
    await grant_consent(db, application_id=app_id, vin=vin, properties=[LEVEL])
    return app_id


# ------------------------------------------------------------------ SSE: token lifetime


@pytest.mark.parametrize("action", ["revoke the token", "disable the application"])
async def test_a_revocation_or_disable_through_the_api_ends_the_open_stream_at_once(
    settings: Settings, action: str
) -> None:
    # The periodic check is far away: only the in-process event can end it in time.
    slow = settings.model_copy(
        update={"stream_auth_recheck_seconds": 60.0, "admin_token": SecretStr(ADMIN_TOKEN)}
    )
    async with live_server(slow) as server:
        db, vin = server.database, new_vin()
        app_id = await reader_app(db, vin)
        token = await server.tokens.application(app_id)
        creds = CREDENTIALS[app_id]
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
            async with sse(client, token) as events:
                await feed(db, vin, [0.1])
                assert message(await events.next_data())["vin"] == vin
                if action == "revoke the token":
                    done = await client.post(
                        "/sandbox/v1/revoke", data={"token": token, **creds.auth()}
                    )
                else:
                    done = await client.patch(
                        f"/sandbox/admin/v1/applications/{app_id}",
                        json={"disabled": True},
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                    )
                assert done.status_code == 200, done.text
                rest = await events.rest(timeout=3)
            assert [block.get("event") for block in rest] == ["end"]
            reason = orjson.loads(rest[-1]["data"])["reason"]
            assert ("revoked" if action == "revoke the token" else "disabled") in reason
            # The client's reconnect with the dead token is refused.
            again = await client.get(
                "/sandbox/v1/stream", headers={"Authorization": f"Bearer {token}"}
            )
            assert again.status_code == 401


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("UPDATE oauth_tokens SET revoked_at = :now WHERE application_id = :app", "revoked"),
        ("UPDATE applications SET disabled_at = :now WHERE id = :app", "disabled"),
    ],
)
async def test_a_revocation_or_disable_by_another_process_ends_the_stream_within_the_recheck(
    settings: Settings, change: str, reason: str
) -> None:
    quick = settings.model_copy(update={"stream_auth_recheck_seconds": 0.5})
    async with live_server(quick) as server:
        db, vin = server.database, new_vin()
        app_id = await reader_app(db, vin)
        token = await server.tokens.application(app_id)
        async with (
            httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
            sse(client, token) as events,
        ):
            await feed(db, vin, [0.1])
            await events.next_data()
            # Straight in the database, as another replica (or the CLI) writes it:
            # this process hears of it only through its periodic check.
            async with db.transaction() as conn:
                await conn.execute(change, {"now": now_us(), "app": app_id})
            started = asyncio.get_running_loop().time()
            rest = await events.rest(timeout=3)
            took = asyncio.get_running_loop().time() - started
            await feed(db, vin, [0.2])
    assert [block.get("event") for block in rest] == ["end"]
    assert reason in orjson.loads(rest[0]["data"])["reason"]
    assert took < 2.0


async def test_an_expired_token_ends_the_stream_before_a_later_message(settings: Settings) -> None:
    clock = FrozenClock()
    lifetime = settings.model_copy(update={"oauth_access_token_seconds": 300})
    async with live_server(lifetime, clock) as server:
        db, vin = server.database, new_vin()
        app_id = await reader_app(db, vin)
        token = await server.tokens.application(app_id)
        async with (
            httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
            sse(client, token) as events,
        ):
            await feed(db, vin, [0.1], at_us=clock.now_us())
            assert message(await events.next_data())["vin"] == vin
            clock.advance(312)
            # A message at 312 s on a 300 s token.
            await feed(db, vin, [0.2], at_us=clock.now_us())
            await logged(db, app_id, 2)
            rest = await events.rest(timeout=3)
    assert [block.get("event") for block in rest] == ["end"]
    assert "expired" in orjson.loads(rest[0]["data"])["reason"]


# ------------------------------------------------------------------ SSE: limits, resume


async def test_streams_per_application_are_capped_with_429_and_retry_after(
    settings: Settings,
) -> None:
    capped = settings.model_copy(update={"stream_max_per_application": 2})
    async with live_server(capped) as server:
        db = server.database
        app_id, other_id = await create_application(db), await create_application(db)
        token = await server.tokens.application(app_id)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
            async with sse(client, token) as first, sse(client, token):
                third = await client.get("/sandbox/v1/stream", headers=headers)
                assert third.status_code == 429
                assert int(third.headers["Retry-After"]) > 0
                assert "2 open streams" in third.json()["errors"][0]["detail"]
                # Another application is not affected.
                async with sse(client, await server.tokens.application(other_id)) as other:
                    assert "id" in await other.next()
                assert "id" in await first.next()
            # Closed streams free their slots.
            for _ in range(100):
                async with client.stream("GET", "/sandbox/v1/stream", headers=headers) as again:
                    if again.status_code == 200:
                        break
                await asyncio.sleep(0.05)
            assert again.status_code == 200


async def test_the_stream_limit_counts_the_streams_of_every_process(settings: Settings) -> None:
    capped = settings.model_copy(update={"stream_max_per_application": 2})
    async with live_server(capped) as one, live_server(capped) as two:
        db = one.database
        app_id = await create_application(db)
        token = await one.tokens.application(app_id)
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(base_url=one.base_url, timeout=10) as first,
            httpx.AsyncClient(base_url=two.base_url, timeout=10) as second,
        ):
            async with sse(first, token), sse(second, token):
                # One stream in each process: the limit is reached in both.
                for client in (first, second):
                    response = await client.get("/sandbox/v1/stream", headers=headers)
                    assert response.status_code == 429
            # The streams of a process that died count until their lease runs out.
            now = now_us()
            async with db.transaction() as conn:
                for connection_id, until in (("dead", now - 1), ("alive", now + 60_000_000)):
                    await conn.execute(
                        "INSERT INTO stream_connections (id, environment, application_id, "
                        "opened_at, lease_until) VALUES (:id, 'sandbox', :app, :now, :until)",
                        {"id": connection_id, "app": app_id, "now": now, "until": until},
                    )
            async with sse(first, token):
                response = await second.get("/sandbox/v1/stream", headers=headers)
                assert response.status_code == 429
        assert (
            await db.fetch_value("SELECT COUNT(*) FROM stream_connections WHERE id = 'dead'") == 0
        )


async def test_a_client_that_drops_before_its_first_message_resumes_without_a_loss(
    settings: Settings,
) -> None:
    async with live_server(settings) as server:
        db, vin = server.database, new_vin()
        app_id = await reader_app(db, vin)
        token = await server.tokens.application(app_id)
        await feed(db, vin, [0.1, 0.2])
        await logged(db, app_id, 2)
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
            async with sse(client, token) as events:
                start = await events.next()
            # The starting position: a named event (browsers' onmessage passes over it)
            # that sets the client's last event id.
            assert start == {
                "retry": "2000",
                "event": "start",
                "id": "2",
                "data": '{"after":2}',
            }
            # Dropped; messages arrive meanwhile.
            await feed(db, vin, [0.3, 0.4, 0.5])
            await logged(db, app_id, 5)
            async with sse(client, token, last_event_id=start["id"]) as events:
                assert (await events.next())["id"] == "2"
                resumed = [await events.next_data() for _ in range(3)]
    assert [block["id"] for block in resumed] == ["3", "4", "5"]
    levels = [message(b)["data"]["charging"]["battery_level"][0]["data"] for b in resumed]
    assert levels == [0.3, 0.4, 0.5]


async def test_a_stream_stops_carrying_a_vehicle_whose_owner_revoked_the_grant(
    settings: Settings,
) -> None:
    async with live_server(settings) as server:
        db, revoked_vin, kept_vin = server.database, new_vin(), new_vin()
        app_id = await create_application(db)
        grant = await grant_consent(db, application_id=app_id, vin=revoked_vin, properties=[LEVEL])
        await grant_consent(db, application_id=app_id, vin=kept_vin, properties=[LEVEL])
        token = await server.tokens.application(app_id)
        async with (
            httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
            sse(client, token) as events,
        ):
            await feed(db, revoked_vin, [0.1])
            assert message(await events.next_data())["vin"] == revoked_vin
            await set_consent_status(db, grant, "revoked")
            await feed(db, revoked_vin, [0.2])
            await feed(db, kept_vin, [0.3])
            # The next message is the kept vehicle's: nothing more of the revoked one.
            assert message(await events.next_data())["vin"] == kept_vin


# ------------------------------------------------------------------ MQTT


@contextlib.asynccontextmanager
async def mqtt_client(
    broker: Broker, username: str, password: str, **options: Any
) -> AsyncIterator[aiomqtt.Client]:
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, username=username, password=password, timeout=5, **options
    ) as client:
        yield client


async def receive(client: aiomqtt.Client, count: int, timeout: float) -> list[bytes]:
    received: list[bytes] = []

    async def collect() -> None:
        async for incoming in client.messages:
            assert isinstance(incoming.payload, bytes)
            received.append(incoming.payload)
            if len(received) >= count:
                return

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(collect(), timeout)
    return received


async def test_a_disabled_application_gets_nothing_more_over_mqtt_and_loses_its_broker_access(
    database: Database, broker: Broker, mqtt_settings: Settings
) -> None:
    vin = new_vin()
    disabled_app, control_app = await reader_app(database, vin), await reader_app(database, vin)
    disabled_password = await issue_credentials(database, disabled_app)
    control_password = await issue_credentials(database, control_app)
    await broker.write_config(database)
    await broker.start()
    configured = mqtt_settings.model_copy(update={"mqtt_config_dir": broker.directory})
    topic = topic_of(Environment.sandbox, disabled_app)
    control_topic = topic_of(Environment.sandbox, control_app)
    async with (
        live_server(configured),
        mqtt_client(broker, control_app, control_password) as control,
    ):
        await control.subscribe(control_topic, qos=1)
        with pytest.raises(aiomqtt.MqttError):
            async with mqtt_client(broker, disabled_app, disabled_password) as victim:
                await victim.subscribe(topic, qos=1)
                await feed(database, vin, [0.1])
                assert len(await receive(victim, 1, timeout=10)) == 1
                assert len(await receive(control, 1, timeout=10)) == 1
                async with database.transaction() as conn:
                    await conn.execute(
                        "UPDATE applications SET disabled_at = :now WHERE id = :app",
                        {"now": now_us(), "app": disabled_app},
                    )
                await feed(database, vin, [0.2])
                assert len(await receive(control, 1, timeout=10)) == 1
                # The publisher removes its credentials and reloads the broker, which
                # disconnects it (MqttError) having delivered nothing more.
                assert await receive(victim, 1, timeout=15) == []
        # No message was built for it after it was disabled, and it cannot come back.
        await logged(database, disabled_app, 1)
        with pytest.raises(aiomqtt.MqttError):
            async with mqtt_client(broker, disabled_app, disabled_password):
                pass
    assert disabled_app not in (broker.directory / "passwd").read_text()
    assert disabled_app not in (broker.directory / "acl").read_text()


async def test_an_application_cannot_take_over_another_applications_client_id(
    database: Database, broker: Broker, mqtt_settings: Settings
) -> None:
    victim_app, attacker_app = (
        await create_application(database),
        await create_application(database),
    )
    victim_password = await issue_credentials(database, victim_app)
    attacker_password = await issue_credentials(database, attacker_app)
    await broker.write_config(database)
    await broker.start()
    topic = topic_of(Environment.sandbox, victim_app)
    publisher = broker_address(mqtt_settings)
    assert publisher is not None
    session = {"identifier": "victim-session", "clean_session": False}

    async def publish(count: int) -> None:
        async with mqtt_client(broker, publisher.username, publisher.password) as client:
            for i in range(count):
                await client.publish(topic, b"%d" % i, qos=1)

    # 1. While the victim is connected, the attacker connects with its client id.
    async with mqtt_client(broker, victim_app, victim_password, **session) as victim:
        await victim.subscribe(topic, qos=1)
        async with mqtt_client(broker, attacker_app, attacker_password, **session):
            await publish(1)
            # The victim is still connected and receives.
            assert await receive(victim, 1, timeout=5) == [b"0"]

    # 2. While the victim is away, messages queue in its persistent session; the attacker
    # connects with the victim's id and a clean session (which would discard it).
    await publish(10)
    async with mqtt_client(
        broker, attacker_app, attacker_password, identifier="victim-session", clean_session=True
    ):
        pass
    async with mqtt_client(broker, victim_app, victim_password, **session) as victim:
        queued = await receive(victim, 10, timeout=10)
    assert queued == [b"%d" % i for i in range(10)]
