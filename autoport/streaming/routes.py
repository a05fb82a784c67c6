"""`GET /v1/stream`: the built-in transport, Server-Sent Events."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Query
from starlette.responses import StreamingResponse

from autoport.kit.auth import CallerDep, CallerKind, require_scope
from autoport.kit.errors import ApiError
from autoport.kit.routing import api_router
from autoport.kit.state import StateDep
from autoport.streaming.sse import open_stream

router = api_router(tags=["streaming"])


@router.get(
    "/v1/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-Sent Events: `id:` the sequence number, `data:` one "
            "schema-v2 message",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def stream(
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
    starts with the next message. Comment lines (`: keep-alive`) keep proxies from
    closing an idle stream.
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
    body = await open_stream(
        state, environment=caller.environment, application_id=caller.application_id, after=after
    )
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
