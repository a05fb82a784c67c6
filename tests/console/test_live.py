"""The console's live views over Server-Sent Events (autoport/console/live.py): the
Streaming page's messages and the sandbox car's charts and track, served over HTTP by
a real uvicorn (httpx's ASGI transport buffers streams), on both backends. A stream
lasts as long as its session (signed out, expired: `event: end` within the re-check
interval); another account's application or car is a 404, no session a 401; a viewer
and the operator watch."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
import uvicorn
from fastapi import FastAPI

from autoport.config import Settings

from .conftest import Browser, Console, World
from .sandbox import VIN, created
from .streams import message

RECHECK = 0.2
# A stream ends this soon after its session does: the re-check interval plus slack
# for a loaded machine.
BOUND = 3.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"stream_auth_recheck_seconds": RECHECK})


@pytest.fixture
async def served(app: FastAPI, console: Console) -> AsyncIterator[Console]:
    """The `app` fixture (its lifespan already running) served over HTTP."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started
    console.served = f"http://127.0.0.1:{port}"
    try:
        yield console
    finally:
        for browser in console.browsers:
            await browser.close()
        server.should_exit = True
        await asyncio.wait_for(task, 15)


class Events:
    """The events of an open stream (name, id, data); comments are skipped."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines = response.aiter_lines()

    async def next(self, timeout: float = 10.0) -> dict[str, str]:
        async def read() -> dict[str, str]:
            found: dict[str, str] = {}
            async for line in self.lines:
                if line == "":
                    if "event" in found:
                        return found
                    found = {}
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                found[name] = found[name] + "\n" + value if name in found else value
            raise EOFError("the stream ended")

        return await asyncio.wait_for(read(), timeout)


@contextlib.asynccontextmanager
async def opened(browser: Browser, path: str) -> AsyncIterator[Events]:
    async with browser.client.stream("GET", browser.prefix + path) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        yield Events(response)


def streaming(account: str, app_id: str) -> str:
    return f"/console/a/{account}/streaming/{app_id}/events"


def car(account: str, vin: str = VIN) -> str:
    return f"/console/a/{account}/sandbox/{vin}/events"


async def test_new_stream_messages_arrive_without_reload(served: Console, world: World) -> None:
    await message(served, world.a.app_id, 1, '{"hello": "before"}')
    browser = await served.signed_in(world.a.developer)
    async with opened(browser, streaming(world.a.id, world.a.app_id)) as events:
        await message(served, world.a.app_id, 2, '{"hello": "live"}')
        got = await events.next()
        assert got["event"] == "messages" and got["id"] == "2"
        assert "live" in got["data"] and got["data"].index("live") < got["data"].index("before")
        await message(served, world.a.app_id, 3, '{"hello": "<b>again</b>"}')
        again = await events.next()
        assert again["id"] == "3" and "&lt;b&gt;again" in again["data"]  # escaped
    # A reconnect with Last-Event-ID gets what it missed at once.
    await message(served, world.a.app_id, 4, '{"hello": "missed"}')
    async with browser.client.stream(
        "GET", browser.prefix + streaming(world.a.id, world.a.app_id),
        headers={"Last-Event-ID": "3"},
    ) as response:  # fmt: skip
        assert "missed" in (await Events(response).next())["data"]


async def test_signing_out_ends_the_open_stream(served: Console, world: World) -> None:
    browser = await served.signed_in(world.a.owner)
    await browser.get(f"/console/a/{world.a.id}/applications")  # the CSRF token
    async with opened(browser, streaming(world.a.id, world.a.app_id)) as events:
        assert (await browser.post("/console/sign-out", {})).status_code == 303
        started = asyncio.get_running_loop().time()
        ended = await events.next(timeout=BOUND)
        assert ended["event"] == "end", ended
        assert asyncio.get_running_loop().time() - started < BOUND
        with pytest.raises(EOFError):
            await events.next()
    # The cookie is gone: a reconnect is refused.
    again = await browser.client.get(browser.prefix + streaming(world.a.id, world.a.app_id))
    assert again.status_code == 401


async def test_an_expired_session_ends_the_open_stream(served: Console, world: World) -> None:
    browser = await served.signed_in(world.a.viewer)
    cookies = dict(browser.client.cookies)
    async with opened(browser, streaming(world.a.id, world.a.app_id)) as events:
        served.clock.advance(8 * 3600 + 1)  # console_session_seconds
        ended = await events.next(timeout=BOUND)
        assert ended["event"] == "end"
    # The same cookie, after the expiry: 401.
    stale = httpx.AsyncClient(base_url=served.served or "", cookies=cookies)
    async with stale:
        answer = await stale.get(browser.prefix + streaming(world.a.id, world.a.app_id))
    assert answer.status_code == 401


async def test_the_sandbox_car_chart_and_track_move_over_the_stream(
    served: Console, world: World
) -> None:
    developer = await served.signed_in(world.a.developer)
    await created(developer, world.a.id)
    async with opened(developer, car(world.a.id)) as events:
        first = await events.next()
        assert first["event"] == "series"
        body = orjson.loads(first["data"])
        assert len(body["series"]["odometer"]) == 1 and first["id"] == str(body["after"])
        track = await events.next()
        assert track["event"] == "track" and 'id="track"' in track["data"]
        for _ in range(2):
            served.clock.advance(60)
            await developer.get(f"/console/a/{world.a.id}/sandbox/{VIN}")
            stepped = await developer.post(
                f"/console/a/{world.a.id}/sandbox/{VIN}/step", {"seconds": "60"}
            )
            assert stepped.status_code == 303
            moved = await events.next()
            assert moved["event"] == "series"
            points = orjson.loads(moved["data"])["series"]["odometer"]
            assert len(points) == 1 and points[0][1] > body["series"]["odometer"][-1][1]
            body = orjson.loads(moved["data"])
            assert (await events.next())["event"] == "track"


async def test_who_may_open_an_event_stream(served: Console, world: World) -> None:
    owner_b = await served.signed_in(world.b.owner)
    await created(owner_b, world.b.id)  # B's car
    own = {world.a.id: (streaming(world.a.id, world.a.app_id),)}
    foreign = (
        streaming(world.b.id, world.b.app_id),  # B's application through B's account
        streaming(world.a.id, world.b.app_id),  # B's application through A's account
        car(world.b.id),
        car(world.a.id),  # B's car through A's account
    )
    for person in world.a.people:
        browser = await served.signed_in(person)
        for path in foreign:
            answer = await browser.client.get(browser.prefix + path)
            assert answer.status_code == 404, (person.role, path)
        # Every role watches its own account's view (a viewer too: watching changes nothing).
        async with opened(browser, own[world.a.id][0]):
            pass
    # Nobody signed in: 401 (an EventSource stops), on each view.
    anonymous = served.browser()
    for path in (streaming(world.a.id, world.a.app_id), car(world.b.id)):
        assert (await anonymous.client.get(anonymous.prefix + path)).status_code == 401
    # The operator watches any account's application and car.
    operator = await served.operator()
    async with opened(operator, streaming(world.b.id, world.b.app_id)):
        pass
    async with opened(operator, car(world.b.id)) as events:
        assert (await events.next())["event"] == "series"
    # A viewer watches but changes nothing.
    viewer = await served.signed_in(world.a.viewer)
    await viewer.get(f"/console/a/{world.a.id}/streaming/{world.a.app_id}")
    refused = await viewer.post(f"/console/a/{world.a.id}/streaming/{world.a.app_id}/credentials")
    assert refused.status_code == 403
