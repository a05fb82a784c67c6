"""What the MQTT tests share: reading a subscriber's messages."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiomqtt
import orjson


async def receive(client: aiomqtt.Client, count: int, timeout: float) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = []

    async def collect() -> None:
        async for message in client.messages:
            assert isinstance(message.payload, bytes)
            received.append(orjson.loads(message.payload))
            if len(received) >= count:
                return

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(collect(), timeout)
    return received
