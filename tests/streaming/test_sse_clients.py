"""The SSE stream read by the clients people use, each with its usual loop (issue #38):
the first event used to be an `id:` without data, which browsers skip but httpx-sse
hands over with empty data, so `json.loads(sse.data)` crashed on it. Every event now
carries JSON data; the starting position is a named `start` event, which a browser's
`onmessage` passes over while it still sets the last event id.

Real server (uvicorn), real clients: httpx-sse, sseclient-py, Chromium's EventSource
(Playwright), and the project's own client. One backend: the stream's bytes do not
depend on it (tests/streaming/test_sse.py runs both)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import httpx_sse
import pytest
import sseclient

from autoport.config import Settings
from autoport_client import AsyncClient
from tests.helpers.browsers import chromium_browser
from tests.streaming.conftest import (
    CREDENTIALS,
    LiveServer,
    create_application,
    grant_consent,
    ingest,
    live_server,
    new_vin,
    point,
)

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "streaming"


@pytest.fixture
def settings(sqlite_settings: Settings) -> Settings:
    return sqlite_settings


@pytest.fixture
async def reader(settings: Settings) -> AsyncIterator[tuple[LiveServer, str, str, str]]:
    """A live server, an application reading one vehicle, two messages already logged
    (the stream starts after them), its token and the vehicle."""
    async with live_server(settings) as server:
        db, vin = server.database, new_vin()
        app_id = await create_application(db)
        await grant_consent(
            db, application_id=app_id, vin=vin, properties=["charging.battery_level"]
        )
        await feed(server, vin, [0.1, 0.2])
        await logged(server, 2)
        yield server, app_id, await server.tokens.application(app_id), vin


async def feed(server: LiveServer, vin: str, levels: list[float]) -> None:
    for level in levels:
        await ingest(server.database, vin=vin, data={"charging": {"battery_level": point(level)}})


async def logged(server: LiveServer, count: int) -> None:
    for _ in range(500):
        if await server.database.fetch_value("SELECT COUNT(*) FROM stream_messages") >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the worker did not write {count} messages")


def level(message: dict[str, Any]) -> float:
    value: float = message["data"]["charging"]["battery_level"][0]["data"]
    return value


async def test_httpx_sse_usual_loop_decodes_every_event(
    reader: tuple[LiveServer, str, str, str],
) -> None:
    server, app_id, token, vin = reader
    decoded: list[tuple[str, str, Any]] = []
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
        httpx_sse.aconnect_sse(client, "GET", "/sandbox/v1/stream", headers=headers) as source,
    ):
        fed = False
        async for sse in source.aiter_sse():
            decoded.append((sse.event, sse.id, sse.json()))  # the usual loop
            if not fed:
                await feed(server, vin, [0.3, 0.4])
                fed = True
            if len(decoded) == 3:
                break
    start, *messages = decoded
    assert start == ("start", "2", {"after": 2})
    assert [(event, id_) for event, id_, _ in messages] == [("message", "3"), ("message", "4")]
    assert [level(body) for _, _, body in messages] == [0.3, 0.4]
    assert {body["application_id"] for _, _, body in messages} == {app_id}


async def test_sseclient_py_usual_loop_decodes_every_event(
    reader: tuple[LiveServer, str, str, str],
) -> None:
    server, _, token, vin = reader

    def read(count: int) -> list[tuple[str, str | None, Any]]:
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
        url = f"{server.base_url}/sandbox/v1/stream"
        with httpx.stream("GET", url, headers=headers, timeout=10) as response:
            client = sseclient.SSEClient(response.iter_bytes())
            events = []
            for event in client.events():
                events.append((event.event, event.id, json.loads(event.data)))  # the usual loop
                if len(events) == count:
                    return events
        raise AssertionError("the stream ended")

    reading = asyncio.create_task(asyncio.to_thread(read, 3))
    await asyncio.sleep(0.5)
    await feed(server, vin, [0.3, 0.4])
    start, *messages = await asyncio.wait_for(reading, 20)
    assert start == ("start", "2", {"after": 2})
    assert [(event, id_) for event, id_, _ in messages] == [("message", "3"), ("message", "4")]
    assert [level(body) for _, _, body in messages] == [0.3, 0.4]


@pytest.mark.browser
async def test_a_browsers_event_source_gets_only_messages_and_the_position(
    reader: tuple[LiveServer, str, str, str],
) -> None:
    """`onmessage` sees the messages only; the `start` event sets the last event id (what
    the browser sends as Last-Event-ID when it reconnects) before any message."""
    server, _, token, vin = reader

    def browse() -> dict[str, Any]:
        with chromium_browser(ARTIFACTS) as browser:
            # EventSource sends no Authorization header of its own: the context adds it.
            context = browser.new_context(extra_http_headers={"Authorization": f"Bearer {token}"})
            page = context.new_page()
            page.goto(f"{server.base_url}/sandbox/")
            page.evaluate(
                """() => {
                  window.seen = {messages: [], starts: [], errors: 0};
                  const source = new EventSource('/sandbox/v1/stream');
                  source.onmessage = (e) => window.seen.messages.push(
                      {id: e.lastEventId, data: JSON.parse(e.data)});
                  source.addEventListener('start', (e) => window.seen.starts.push(
                      {id: e.lastEventId, data: JSON.parse(e.data)}));
                  source.onerror = () => { window.seen.errors += 1; };
                  window.source = source;
                }"""
            )
            page.wait_for_function("window.seen.starts.length === 1", timeout=15_000)
            asyncio.run_coroutine_threadsafe(feed(server, vin, [0.3, 0.4]), loop).result(15)
            page.wait_for_function("window.seen.messages.length === 2", timeout=15_000)
            seen: dict[str, Any] = page.evaluate("window.seen")
            page.evaluate("window.source.close()")
            context.close()
            return seen

    loop = asyncio.get_running_loop()
    seen = await asyncio.to_thread(browse)
    assert seen["starts"] == [{"id": "2", "data": {"after": 2}}]
    assert [m["id"] for m in seen["messages"]] == ["3", "4"]
    assert [level(m["data"]) for m in seen["messages"]] == [0.3, 0.4]
    assert seen["errors"] == 0


async def test_the_project_client_yields_messages_and_records_the_position(
    reader: tuple[LiveServer, str, str, str],
) -> None:
    server, app_id, _, vin = reader
    creds = CREDENTIALS[app_id]
    cursors: list[str] = []

    async def consume() -> list[Any]:
        received: list[Any] = []
        async with AsyncClient(
            server.base_url, creds.client_id, creds.client_secret, environment="sandbox"
        ) as client:
            async for message in client.stream(on_cursor=cursors.append):
                received.append(message)
                if len(received) == 2:
                    break
        return received

    consuming = asyncio.create_task(consume())
    for _ in range(500):
        if cursors or consuming.done():
            break
        await asyncio.sleep(0.02)
    assert cursors == ["2"]  # the start position, before any message
    await feed(server, vin, [0.3, 0.4])
    received = await asyncio.wait_for(consuming, 20)
    assert [message.event_id for message in received] == ["3", "4"]
    assert cursors == ["2", "3"]  # each recorded after the message was processed
