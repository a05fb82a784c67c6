"""The console's live views as Server-Sent Events (the streaming page's messages, the
sandbox car's charts and track), on the machinery `GET /v1/stream` uses: the
`StreamHub` wakes a view as soon as this process commits stream messages, a short poll
finds what other processes wrote, comments keep proxies from closing an idle stream,
and the server's shutdown (`StreamHub.close`) ends every view.

A view lives as long as its session: the session is looked up again every
`stream_auth_recheck_seconds` (and the principal must still see the account), so a
signed-out, expired or deleted session, or a user moved out of the account, ends the
open stream with `event: end` within that time. The browser's EventSource would
reconnect after an end; the console's script closes it instead (the page then says the
view stopped), and a reconnect without a session is answered 401.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import orjson

from autoport.kit.periodic import wait_for
from autoport.kit.state import AppState
from autoport.streaming.service import hub_of

# How often a view looks for data other processes wrote (this process's wake it at once).
POLL_SECONDS = 1.0
RETRY_MS = 2000
HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def event(name: str, data: str, event_id: int | None = None) -> bytes:
    """One SSE event; every line of `data` gets its own `data:` field (the browser joins
    them with newlines again)."""
    head = f"event: {name}\n" + (f"id: {event_id}\n" if event_id is not None else "")
    body = "".join(f"data: {line}\n" for line in (data.splitlines() or [""]))
    return (head + body + "\n").encode()


def end(reason: str) -> bytes:
    return event("end", orjson.dumps({"reason": reason}).decode())


def last_event_id(value: str | None) -> int | None:
    """The `Last-Event-ID` an EventSource sends when it reconnects (a position in the
    view's data); anything but a plain number starts afresh."""
    text = (value or "").strip()
    return int(text) if text.isdigit() and len(text) <= 18 else None


async def follow(
    state: AppState,
    *,
    still_allowed: Callable[[], Awaitable[bool]],
    produce: Callable[[], Awaitable[bytes]],
    waiter: Callable[[], asyncio.Event],
) -> AsyncIterator[bytes]:
    """The event stream of one view: `produce()` returns the events of what is new
    (empty when nothing is), `waiter()` the hub's event that wakes the view early,
    `still_allowed()` whether the session may still watch (checked every
    `stream_auth_recheck_seconds`; False ends the stream)."""
    hub = hub_of(state)
    keepalive = state.settings.stream_keepalive_seconds
    recheck_every = state.settings.stream_auth_recheck_seconds
    loop = asyncio.get_running_loop()
    yield f"retry: {RETRY_MS}\n\n".encode()
    quiet_since = loop.time()
    next_check = loop.time() + recheck_every
    while not hub.closed:
        woken = waiter()  # before the read: a notify in between still wakes us
        if loop.time() >= next_check:
            if not await still_allowed():
                yield end("signed out")
                return
            next_check = loop.time() + recheck_every
        chunk = await produce()
        if chunk:
            yield chunk
            quiet_since = loop.time()
            continue
        remaining = quiet_since + keepalive - loop.time()
        if remaining <= 0:
            yield b": keep-alive\n\n"
            quiet_since = loop.time()
            continue
        await wait_for(woken, min(POLL_SECONDS, remaining, max(0.0, next_check - loop.time())))
