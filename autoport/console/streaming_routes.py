"""The console's Streaming page: an application's MQTT connection (host, port, topic,
username), a new password shown once (issued by autoport.streaming.service, as
`autoport streaming credentials` does), the SSE endpoint, and a live view of the
application's newest stream messages, kept current over Server-Sent Events (live.py;
without script the page shows the newest messages as of its loading)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Request
from starlette.responses import HTMLResponse, Response, StreamingResponse

from autoport.apps.schemas import Application
from autoport.console import access, live, pages, service
from autoport.console.access import Principal, console_router
from autoport.console.app_pages import account_application, applications_for_picker
from autoport.kit.environments import public_base_url
from autoport.streaming.service import StreamHub, issue_mqtt_credentials, mqtt_connection

router = console_router()

# Messages the live view shows (the newest).
LIVE_MESSAGES = 20


async def _messages(request: Request, application: Application) -> list[dict[str, object]]:
    state, environment = access.where(request)
    return await service.newest_stream_messages(
        state.database.reader,
        environment=environment,
        application_id=application.id,
        limit=LIVE_MESSAGES,
    )


async def _page(
    request: Request,
    principal: Principal,
    account: object,
    application: Application,
    *,
    issued: dict[str, object] | None = None,
) -> Response:
    state, environment = access.where(request)
    connection = mqtt_connection(state.settings, environment, application.id)
    return pages.render(
        request,
        principal,
        "streaming.html",
        title="streaming",
        account=account,
        account_id=principal.account_id or getattr(account, "id", ""),
        application=application,
        connection=connection,
        mqtt_enabled=bool(state.settings.mqtt_url),
        issued_at=await service.mqtt_issued_at(state.database.reader, application.id),
        issued=issued,
        sse_url=public_base_url(state.settings, environment) + "/v1/stream",
        messages=await _messages(request, application),
    )


@router.get("/a/{account_id}/streaming")
async def streaming_index(request: Request, account_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    search = request.query_params.get("q")
    return pages.render(
        request,
        principal,
        "app_picker.html",
        title="streaming",
        account=account,
        account_id=account_id,
        applications=await applications_for_picker(request, account_id, search),
        search=search or "",
        page="streaming",
    )


@router.get("/a/{account_id}/streaming/{app_id}")
async def streaming_page(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    return await _page(request, principal, account, application)


@router.get("/a/{account_id}/streaming/{app_id}/messages")
async def streaming_messages(request: Request, account_id: str, app_id: str) -> Response:
    """The live view's fragment as it stands (what each event of `/events` carries)."""
    principal, _ = await access.account_page(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    return pages.security_headers(
        HTMLResponse(await _messages_html(request, principal, account_id, application))
    )


async def _messages_html(
    request: Request, principal: Principal, account_id: str, application: Application
) -> str:
    return pages.fragment(
        request,
        principal,
        "streaming_messages.html",
        account_id=account_id,
        application=application,
        messages=await _messages(request, application),
    )


@router.get("/a/{account_id}/streaming/{app_id}/events")
async def streaming_events(
    request: Request,
    account_id: str,
    app_id: str,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> Response:
    """The live view as Server-Sent Events: `event: messages` with the fragment of the
    newest messages each time new ones arrive (`id:` the newest's sequence number), for
    any role that sees the account, while the session lasts (live.py)."""
    principal, _ = await access.account_events(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    state, environment = access.where(request)
    hub = state.part(StreamHub)
    key = (environment, application.id)
    head = await service.stream_head(
        state.database.reader, environment=environment, application_id=application.id
    )
    # A reconnect goes on from what the browser has; a new view from what the page showed.
    seen = min(live.last_event_id(last_event_id) or head, head)

    async def produce() -> bytes:
        nonlocal seen
        newest = await service.stream_head(
            state.database.reader, environment=environment, application_id=application.id
        )
        if newest == seen:
            return b""
        seen = newest
        html = await _messages_html(request, principal, account_id, application)
        return live.event("messages", html, newest)

    body = live.follow(
        state,
        still_allowed=lambda: access.still_sees(request, account_id),
        produce=produce,
        waiter=lambda: hub.waiter(key),
    )
    return pages.security_headers(
        StreamingResponse(body, media_type="text/event-stream", headers=live.HEADERS)
    )


@router.post("/a/{account_id}/streaming/{app_id}/credentials")
async def streaming_credentials(request: Request, account_id: str, app_id: str) -> Response:
    """A new MQTT password (the old one stops working once the broker reloads its
    password file), shown on this answer only."""
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    await access.checked_form(request, principal)
    access.require_change(request, principal)
    state, environment = access.where(request)
    now_us = state.clock.now_us()
    issued = await issue_mqtt_credentials(
        state.database,
        state.settings,
        environment=environment,
        application_id=application.id,
        now_us=now_us,
    )
    async with state.database.transaction() as conn:
        await service.audit(
            conn,
            environment=environment,
            account_id=account_id,
            actor=principal.actor,
            actor_label=principal.label,
            action="streaming.credentials",
            target=application.id,
            address=access.address_of(request),
            now_us=now_us,
        )
    return await _page(request, principal, account, application, issued=issued)
