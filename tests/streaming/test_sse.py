"""`GET /v1/stream`: Server-Sent Events against a real uvicorn server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.config import Settings
from autoport.kit.db import Database
from tests.streaming.conftest import (
    CREDENTIALS,
    LiveServer,
    StreamTokens,
    create_application,
    grant_consent,
    live_server,
    new_vin,
)
from tests.streaming.sse import feed, open_sse


async def logged(db: Database, count: int) -> None:
    """Wait until the worker has written `count` messages."""
    for _ in range(500):
        if await db.fetch_value("SELECT COUNT(*) FROM stream_messages") == count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the worker did not write {count} messages")


def level_of(event: dict[str, str]) -> float:
    message: dict[str, Any] = orjson.loads(event["data"])
    value: float = message["data"]["charging"]["battery_level"][0]["data"]
    return value


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[LiveServer]:
    async with live_server(settings) as live:
        yield live


async def test_sse_resume_with_last_event_id_gets_every_missed_message_once(
    server: LiveServer,
) -> None:
    db = server.database
    vin = new_vin()
    app_id = await create_application(db)
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    token = await server.tokens.application(app_id)

    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
        received: list[dict[str, str]] = []
        async with open_sse(client, token) as sse:
            await feed(db, vin, [0.01, 0.02, 0.03])
            for _ in range(3):
                received.append(await sse.next_event())
        assert [e["id"] for e in received] == ["1", "2", "3"]
        assert [level_of(e) for e in received] == [0.01, 0.02, 0.03]
        message = orjson.loads(received[0]["data"])
        assert message["application_id"] == app_id
        assert message["vin"] == vin

        # Down while five more messages are written.
        await feed(db, vin, [0.04, 0.05, 0.06, 0.07, 0.08])
        await asyncio.sleep(0.3)

        async with open_sse(client, token, last_event_id="3") as sse:
            resumed = [await sse.next_event() for _ in range(5)]
            await feed(db, vin, [0.09])
            resumed.append(await sse.next_event())
    assert [e["id"] for e in resumed] == ["4", "5", "6", "7", "8", "9"]
    assert [level_of(e) for e in resumed] == [0.04, 0.05, 0.06, 0.07, 0.08, 0.09]


async def test_sse_without_last_event_id_starts_with_the_next_message(
    server: LiveServer,
) -> None:
    db = server.database
    vin = new_vin()
    app_id = await create_application(db)
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    token = await server.tokens.application(app_id)
    await feed(db, vin, [0.1, 0.2])
    await logged(db, 2)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
        async with open_sse(client, token) as sse:
            await feed(db, vin, [0.3])
            event = await sse.next_event()
        assert event["id"] == "3"
        assert level_of(event) == 0.3
        # `0` replays everything retained.
        async with open_sse(client, token, last_event_id="0") as sse:
            replay = [await sse.next_event() for _ in range(3)]
    assert [level_of(e) for e in replay] == [0.1, 0.2, 0.3]


async def test_sse_streams_only_the_callers_messages(server: LiveServer) -> None:
    db = server.database
    vin_a, vin_b = new_vin(), new_vin()
    app_a = await create_application(db)
    app_b = await create_application(db)
    await grant_consent(db, application_id=app_a, vin=vin_a, properties=["charging.battery_level"])
    await grant_consent(db, application_id=app_b, vin=vin_b, properties=["charging.battery_level"])
    async with (
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
        open_sse(client, await server.tokens.application(app_b)) as sse,
    ):
        await feed(db, vin_a, [0.5])
        await feed(db, vin_b, [0.6])
        event = await sse.next_event()
    message = orjson.loads(event["data"])
    assert (message["application_id"], message["vin"], event["id"]) == (app_b, vin_b, "1")


async def test_sse_reports_a_gap_when_missed_messages_were_pruned(server: LiveServer) -> None:
    db = server.database
    vin = new_vin()
    app_id = await create_application(db)
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    await feed(db, vin, [0.1, 0.2, 0.3])
    await logged(db, 3)
    await db.execute("DELETE FROM stream_messages WHERE seq < 3")
    async with (
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
        open_sse(client, await server.tokens.application(app_id), last_event_id="1") as sse,
    ):
        gap = await sse.next_event()
        event = await sse.next_event()
    assert gap["event"] == "gap"
    assert orjson.loads(gap["data"]) == {"requested_after": 1, "first_available": 3}
    assert event["id"] == "3"


async def test_sse_sends_keep_alive_comments_when_idle(settings: Settings) -> None:
    quick = settings.model_copy(update={"stream_keepalive_seconds": 0.2})
    async with live_server(quick) as server:
        app_id = await create_application(server.database)
        async with (
            httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
            open_sse(client, await server.tokens.application(app_id)) as sse,
        ):
            with pytest.raises(TimeoutError):
                await sse.next_event(timeout=0.7)
    assert ": keep-alive" in sse.comments


async def test_sse_with_a_client_credentials_token_from_the_live_token_endpoint(
    server: LiveServer,
) -> None:
    """End to end over real HTTP: the application authenticates at the token endpoint,
    streams with the access token it got, and is refused once it revokes that token."""
    db = server.database
    vin = new_vin()
    app_id = await create_application(db)
    creds = CREDENTIALS[app_id]
    await grant_consent(db, application_id=app_id, vin=vin, properties=["charging.battery_level"])
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
        issued = await client.post(
            "/sandbox/v1/access_tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": creds.client_id,
                "client_secret": creds.client_secret,
            },
        )
        assert issued.status_code == 200, issued.text
        token = issued.json()["access_token"]
        assert "vehicle:data" in issued.json()["scope"].split()
        async with open_sse(client, token) as sse:
            await feed(db, vin, [0.77])
            event = await sse.next_event()
        message = orjson.loads(event["data"])
        assert (message["application_id"], message["vin"]) == (app_id, vin)
        assert level_of(event) == 0.77

        revoked = await client.post("/sandbox/v1/revoke", data={"token": token, **creds.auth()})
        assert revoked.status_code == 200
        refused = await client.get(
            "/sandbox/v1/stream",
            headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
        )
        assert refused.status_code == 401
        assert "revoked" in refused.json()["errors"][0]["detail"]


# ----------------------------------------------------------------- refusals (ASGI)


async def test_stream_without_a_token_is_401(
    app: FastAPI, client: httpx.AsyncClient, tokens: StreamTokens
) -> None:
    response = await client.get("/sandbox/v1/stream")
    assert response.status_code == 401
    assert response.json()["errors"][0]["source"] == "Authorization"


async def test_stream_with_a_vehicle_token_is_403(
    client: httpx.AsyncClient, tokens: StreamTokens, app: FastAPI
) -> None:
    app_id = await create_application(app.state.autoport.database)
    response = await client.get(
        "/sandbox/v1/stream", headers={"Authorization": f"Bearer {await tokens.vehicle(app_id)}"}
    )
    assert response.status_code == 403
    assert "client_credentials" in response.json()["errors"][0]["detail"]


async def test_stream_without_the_vehicle_data_scope_is_403(
    client: httpx.AsyncClient, tokens: StreamTokens, app: FastAPI
) -> None:
    app_id = await create_application(app.state.autoport.database)
    token = await tokens.stored(app_id, scopes="fleet:clearance")
    response = await client.get("/sandbox/v1/stream", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403
    assert response.json()["errors"][0]["source"] == "scope"


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "99999999999999999999"])
async def test_stream_refuses_a_malformed_last_event_id(
    client: httpx.AsyncClient, tokens: StreamTokens, app: FastAPI, value: str
) -> None:
    app_id = await create_application(app.state.autoport.database)
    response = await client.get(
        "/sandbox/v1/stream",
        headers={
            "Authorization": f"Bearer {await tokens.application(app_id)}",
            "Last-Event-ID": value,
        },
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["source"] == "Last-Event-ID"


async def test_a_production_application_token_is_401_on_the_sandbox(
    client: httpx.AsyncClient, tokens: StreamTokens, app: FastAPI
) -> None:
    from autoport.kit.environments import Environment

    app_id = await create_application(
        app.state.autoport.database, environment=Environment.production
    )
    response = await client.get(
        "/sandbox/v1/stream",
        headers={"Authorization": f"Bearer {await tokens.application(app_id)}"},
    )
    assert response.status_code == 401


def test_a_closed_hub_wakes_every_stream_for_good_and_leaves_the_publisher_alone() -> None:
    from autoport.kit.environments import Environment
    from autoport.streaming.service import StreamHub

    hub = StreamHub()
    key = (Environment.sandbox, "app")
    waiting = hub.waiter(key)
    publisher = hub.any_waiter()
    hub.close()
    assert hub.closed and waiting.is_set()
    # A stream that looks again after the close does not block either.
    assert hub.waiter(key).is_set() and hub.waiter((Environment.production, "x")).is_set()
    # The MQTT publisher would spin on a set event; the lifespan stops it instead.
    assert not publisher.is_set()
