"""`GET /v1/stream`: the built-in transport, Server-Sent Events."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Query, Request
from starlette.responses import StreamingResponse

from autoport.kit.auth import Caller, CallerDep, CallerKind, current_caller, require_scope
from autoport.kit.errors import ApiError
from autoport.kit.routing import api_router
from autoport.kit.state import StateDep
from autoport.streaming.service import admit_stream
from autoport.streaming.sse import StreamAccess, open_stream

# Retry-After of a 429 for too many open streams: streams end when their clients go
# (or their tokens do), so a slot is usually free again soon.
BUSY_RETRY_SECONDS = 10

router = api_router(tags=["streaming"])


@router.get(
    "/v1/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-Sent Events: `id:` the sequence number, `data:` one "
            "schema-v2 message",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        429: {"description": "The application has its limit of open streams (see Retry-After)"},
    },
)
async def stream(
    request: Request,
    caller: CallerDep,
    state: StateDep,
    last_event_id_header: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    last_event_id: Annotated[str | None, Query()] = None,
) -> StreamingResponse:
    """The application's stream messages (schema version 2) as Server-Sent Events.

    Authenticate with the application's client_credentials token (scope `vehicle:data`).
    Each event's `id:` is the application's message sequence number and its `data:` one
    message. After a disconnect, send `Last-Event-ID: <last id received>` (browsers'
    EventSource does it by itself), or `?last_event_id=`, to receive every message after
    it that is still retained; `0` replays everything retained. Without it the stream
    starts with the next message; its first event (an `id:` without data) carries the
    position it starts from, so a client that drops before any message still resumes
    without a loss. Comment lines (`: keep-alive`) keep proxies from closing an idle
    stream.

    The token is verified again while the stream is open: when it expires, is revoked
    or the application is disabled, the stream sends `event: end` (its `data` says why)
    and closes; reconnect with a new token and `Last-Event-ID`. An application may
    hold `stream_max_per_application` open streams (across every server process); one
    more is answered 429 with Retry-After.
    """
    if caller.kind is not CallerKind.application:
        raise ApiError(
            403,
            "streams are read with the application's client_credentials token",
            source="Authorization",
        )
    require_scope(caller, "vehicle:data")
    after = _parse_event_id(last_event_id_header, "Last-Event-ID")
    if after is None:
        after = _parse_event_id(last_event_id, "last_event_id")
    limit = state.settings.stream_max_per_application
    key = (caller.environment, caller.application_id)
    connection_id = await admit_stream(state, key, limit=limit)
    if connection_id is None:
        raise ApiError(
            429,
            f"the application already has {limit} open streams; close one or retry in "
            f"{BUSY_RETRY_SECONDS} s",
            headers={"Retry-After": str(BUSY_RETRY_SECONDS)},
        )

    async def recheck() -> Caller:
        # The same bearer token through the authenticator: the request's headers stay.
        return await current_caller(request)

    body = await open_stream(state, StreamAccess(caller, recheck, connection_id), after=after)
    return StreamingResponse(
        body,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _parse_event_id(value: str | None, source: str) -> int | None:
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if not text.isdigit() or len(text) > 18:
        raise ApiError(
            400,
            f"{source} must be a message sequence number (a non-negative integer)",
            source=source,
        )
    return int(text)
