"""The SSE event stream of one application: replay from the log, then follow it, for as
long as the caller's token stays good."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import anyio
import orjson

from autoport.kit.auth import Caller
from autoport.kit.errors import ApiError
from autoport.kit.periodic import wait_for
from autoport.kit.state import AppState
from autoport.streaming import repository
from autoport.streaming.metrics import MESSAGES_PUBLISHED, PUBLISH_LAG
from autoport.streaming.service import close_stream, hub_of, renew_stream

PAGE = 500
# Streams are woken at once by messages of this process and, on PostgreSQL, of other
# replicas (StreamHub.listen); this poll catches what no wake-up announced (SQLite's
# other processes, a lost notification).
POLL_SECONDS = 1.0
RETRY_MS = 2000


@dataclass(frozen=True, slots=True)
class StreamAccess:
    """Who the stream serves, how to verify that again (the request's own token through
    the authenticator: raises ApiError(401) once it is revoked, expired or its
    application disabled), and the stream's row among the application's open streams
    (`service.admit_stream`)."""

    caller: Caller
    recheck: Callable[[], Awaitable[Caller]]
    connection_id: str


async def _close(state: AppState, access: StreamAccess) -> None:
    # Shielded: it runs while the response is being cancelled (client gone, shutdown).
    # A failure (database gone at shutdown) leaves the row to expire with its lease.
    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        await close_stream(state, access.connection_id)


async def open_stream(
    state: AppState, access: StreamAccess, *, after: int | None
) -> AsyncIterator[bytes]:
    """Decide where the stream starts (before the response begins, so a database
    error is still an error response), then return the event generator."""
    try:
        cursor, preamble = await _start(state, access.caller, after)
    except BaseException:
        await _close(state, access)
        raise
    # (A response that never runs its body leaves the row to expire with its lease.)
    return _events(state, access, cursor, preamble)


async def _start(state: AppState, caller: Caller, after: int | None) -> tuple[int, bytes]:
    reader = state.database.reader
    environment, application_id = caller.environment, caller.application_id
    head = await repository.get_last_seq(
        reader, environment=environment, application_id=application_id
    )
    preamble = b""
    if after is None:
        cursor = head
    else:
        cursor = min(after, head)
        oldest = await repository.get_oldest_seq(
            reader, environment=environment, application_id=application_id
        )
        first_available = oldest if oldest is not None else head + 1
        if cursor + 1 < first_available:
            # Messages the client asked for are past the retention: say so, then go on
            # from the oldest retained one.
            gap = {"requested_after": after, "first_available": first_available}
            preamble += b"event: gap\ndata: " + orjson.dumps(gap) + b"\n\n"
            cursor = first_available - 1
    preamble += start_event(cursor)
    return cursor, preamble


def start_event(cursor: int) -> bytes:
    """The position the stream starts from, with the reconnection delay: a browser that
    drops before the first message resumes from here (its last event id) instead of
    from "now", missing nothing written in between. A named event with JSON data, like
    every event of the stream: browsers' `onmessage` passes over named events, and
    clients that hand over every event (httpx-sse, sseclient-py) can `json.loads` its
    data (an event without data came to them with an empty one, and the usual loop
    crashed on it)."""
    data = orjson.dumps({"after": cursor})
    return b"retry: %d\nevent: start\nid: %d\ndata: %s\n\n" % (RETRY_MS, cursor, data)


def _end(reason: str) -> bytes:
    """The last event of a stream whose token stopped being good: the client gets a
    new token and reconnects with Last-Event-ID."""
    return b"event: end\ndata: " + orjson.dumps({"reason": reason}) + b"\n\n"


async def _events(
    state: AppState, access: StreamAccess, cursor: int, preamble: bytes
) -> AsyncIterator[bytes]:
    hub = hub_of(state)
    caller = access.caller
    key = (caller.environment, caller.application_id)
    keepalive = state.settings.stream_keepalive_seconds
    recheck_every = state.settings.stream_auth_recheck_seconds
    clock = state.clock
    loop = asyncio.get_running_loop()
    try:
        yield preamble
        quiet_since = loop.time()
        next_check = loop.time() + recheck_every
        generation = hub.access_generation
        while not hub.closed:
            waiter = hub.waiter(key)
            if generation != hub.access_generation or loop.time() >= next_check:
                generation = hub.access_generation
                next_check = loop.time() + recheck_every
                try:
                    caller = await access.recheck()
                except ApiError as error:
                    yield _end(error.detail)
                    return
                await renew_stream(state, key, access.connection_id)
            # Expiry needs no query: checked before every delivery.
            expires_at = caller.expires_at_us
            if expires_at is not None and clock.now_us() >= expires_at:
                yield _end("the access token has expired")
                return
            messages = await repository.list_messages_after(
                state.database.reader,
                environment=caller.environment,
                application_id=caller.application_id,
                after=cursor,
                limit=PAGE,
            )
            if messages:
                chunk = b"".join(
                    b"id: %d\ndata: %s\n\n" % (m.seq, m.message.encode()) for m in messages
                )
                yield chunk
                cursor = messages[-1].seq
                now = clock.now_us()
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
            wait = min(POLL_SECONDS, remaining, max(0.0, next_check - loop.time()))
            if expires_at is not None:
                wait = min(wait, max(0.0, (expires_at - clock.now_us()) / 1_000_000))
            await wait_for(waiter, wait)
    finally:
        await _close(state, access)
