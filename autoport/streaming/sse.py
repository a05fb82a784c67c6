"""The SSE event stream of one application: replay from the log, then follow it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson

from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.streaming import repository
from autoport.streaming.metrics import MESSAGES_PUBLISHED, PUBLISH_LAG
from autoport.streaming.service import hub_of, wait_for

PAGE = 500
# Streams of this process are woken at once; messages written by other replicas are
# found by polling the log this often.
POLL_SECONDS = 1.0
RETRY_MS = 2000


async def open_stream(
    state: AppState, *, environment: Environment, application_id: str, after: int | None
) -> AsyncIterator[bytes]:
    """Decide where the stream starts (before the response begins, so a database
    error is still an error response), then return the event generator."""
    reader = state.database.reader
    head = await repository.last_seq(reader, environment=environment, application_id=application_id)
    preamble = f"retry: {RETRY_MS}\n\n".encode()
    if after is None:
        cursor = head
    else:
        cursor = min(after, head)
        oldest = await repository.oldest_seq(
            reader, environment=environment, application_id=application_id
        )
        first_available = oldest if oldest is not None else head + 1
        if cursor + 1 < first_available:
            # Messages the client asked for are past the retention: say so, then go on
            # from the oldest retained one.
            gap = {"requested_after": after, "first_available": first_available}
            preamble += b"event: gap\ndata: " + orjson.dumps(gap) + b"\n\n"
            cursor = first_available - 1
    return _events(state, environment, application_id, cursor, preamble)


async def _events(
    state: AppState,
    environment: Environment,
    application_id: str,
    cursor: int,
    preamble: bytes,
) -> AsyncIterator[bytes]:
    hub = hub_of(state)
    key = (environment, application_id)
    keepalive = state.settings.stream_keepalive_seconds
    loop = asyncio.get_running_loop()
    yield preamble
    quiet_since = loop.time()
    while not hub.closed:
        waiter = hub.waiter(key)
        messages = await repository.messages_after(
            state.database.reader,
            environment=environment,
            application_id=application_id,
            after=cursor,
            limit=PAGE,
        )
        if messages:
            chunk = b"".join(
                b"id: %d\ndata: %s\n\n" % (m.seq, m.message.encode()) for m in messages
            )
            yield chunk
            cursor = messages[-1].seq
            now = state.clock.now_us()
            MESSAGES_PUBLISHED.labels("sse").inc(len(messages))
            for m in messages:
                PUBLISH_LAG.labels("sse").observe(max(0, now - m.ingested_at) / 1_000_000)
            quiet_since = loop.time()
            continue
        remaining = quiet_since + keepalive - loop.time()
        if remaining <= 0:
            yield b": keep-alive\n\n"
            quiet_since = loop.time()
            continue
        await wait_for(waiter, min(POLL_SECONDS, remaining))
