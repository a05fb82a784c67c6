"""Server-Sent Events read over httpx, and vehicle data fed to a stream: shared by the
streaming and owner-portal stream tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx

from autoport.kit.db import Database
from tests.streaming.conftest import ingest, point


class SseReader:
    """A minimal SSE parser over an httpx streaming response."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.lines = response.aiter_lines()
        self.comments: list[str] = []

    async def next_event(self, timeout: float = 10.0) -> dict[str, str]:
        async def read() -> dict[str, str]:
            event: dict[str, str] = {}
            async for line in self.lines:
                if line == "":
                    if event.get("event") == "start":  # the position, not a message
                        event = {}
                    elif "data" in event or "event" in event:
                        return event
                    continue
                if line.startswith(":"):
                    self.comments.append(line)
                    continue
                name, _, value = line.partition(":")
                event[name] = value[1:] if value.startswith(" ") else value
            raise EOFError("stream ended")

        return await asyncio.wait_for(read(), timeout)


@contextlib.asynccontextmanager
async def open_sse(
    client: httpx.AsyncClient, token: str, last_event_id: str | None = None
) -> AsyncIterator[SseReader]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    async with client.stream("GET", "/sandbox/v1/stream", headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield SseReader(response)


async def feed(db: Database, vin: str, levels: list[float]) -> None:
    for level in levels:
        await ingest(db, vin=vin, data={"charging": {"battery_level": point(level)}})
