"""The SSE consumer against a real server: typed messages, the cursor callback, resuming
from a stored cursor, a fresh token after a 401, and a server restart in the middle of a
stream (reconnect with Last-Event-ID: every message once, none missed)."""

from __future__ import annotations

import asyncio

from conftest import LiveServer

from autoport_client import AsyncClient, Client, StreamMessage
from autoport_client._core import Backoff

QUICK = Backoff(initial=0.1, maximum=0.5)


def consecutive(messages: list[StreamMessage]) -> bool:
    ids = [int(message.event_id or "0") for message in messages]
    return ids == list(range(ids[0], ids[0] + len(ids)))


def test_stream_and_resume_from_a_stored_cursor(client: Client, server: LiveServer) -> None:
    assert server.demo is not None
    stored: list[str] = []
    first: list[StreamMessage] = []
    for message in client.stream(on_cursor=stored.append, backoff=QUICK, max_reconnects=5):
        first.append(message)
        if len(first) == 3:
            break
    assert consecutive(first)
    # A message counts as processed once the next one is asked for: the third was handed
    # out but the loop ended in it, so a resume gives it again (at-least-once).
    assert stored[-1] == first[-2].event_id
    message = first[0]
    assert message.vin in server.demo.vins.values()
    assert message.application_id == server.demo.application_id
    assert len(message.message_id) == 64
    assert message.data.vin == message.vin
    # Resuming from the stored cursor starts right after it (an app restarted).
    resumed = next(iter(client.stream(last_event_id=stored[-1], backoff=QUICK)))
    assert resumed.event_id == first[-1].event_id and resumed.message_id == first[-1].message_id


def test_a_refused_token_is_replaced_before_streaming(client: Client) -> None:
    client.revoke(client.app_token())  # the cached token is dead: the first connect is 401
    message = next(iter(client.stream(backoff=QUICK, max_reconnects=3)))
    assert message.message_id


async def test_stream_resumes_across_a_server_restart(server: LiveServer) -> None:
    assert server.demo is not None
    cursors: list[str] = []
    received: list[StreamMessage] = []
    async with AsyncClient(
        server.root, server.demo.client_id, server.demo.client_secret, environment="sandbox"
    ) as client:
        stream = client.stream(on_cursor=cursors.append, backoff=QUICK, max_reconnects=100)
        async for message in stream:
            received.append(message)
            if len(received) == 3:
                # The server goes away (its open streams end) and comes back on the same
                # data; the consumer reconnects with Last-Event-ID.
                await asyncio.to_thread(server.restart)
            if len(received) == 10:
                break
        await stream.aclose()
    assert consecutive(received), [m.event_id for m in received]
    assert len({message.message_id for message in received}) == len(received)
    assert cursors[-1] == received[-2].event_id
