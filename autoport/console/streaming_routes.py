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
from autoport.console.access import AccountPage, AccountPageDep, ChangeDep, console_router
from autoport.console.app_pages import applications_for_picker
from autoport.kit.environments import public_base_url
from autoport.streaming.service import hub_of, issue_mqtt_credentials, mqtt_connection
from autoport.web.errors import PageError

router = console_router()

# Messages the live view shows (the newest).
LIVE_MESSAGES = 20


async def _messages(page: AccountPage, application: Application) -> list[dict[str, object]]:
    return await service.newest_stream_messages(
        page.state.database.reader,
        environment=page.environment,
        application_id=application.id,
        limit=LIVE_MESSAGES,
    )


def _mqtt_on(page: AccountPage) -> bool:
    return bool(page.state.settings.mqtt_url)


@router.get("/a/{account_id}/streaming")
async def streaming_index(page: AccountPageDep) -> Response:
    search = page.request.query_params.get("q")
    return page.render(
        "app_picker.html",
        title="streaming",
        applications=await applications_for_picker(page, search),
        search=search or "",
        page="streaming",
    )


@router.get("/a/{account_id}/streaming/{app_id}")
async def streaming_page(page: AccountPageDep) -> Response:
    """The MQTT connection (only where this deployment publishes MQTT), a new password
    once after it was issued, the SSE endpoint, and the live view."""
    application = page.application
    state = page.state
    connection = mqtt_connection(state.settings, page.environment, application.id)
    return page.render(
        "streaming.html",
        title="streaming",
        application=application,
        connection=connection,
        mqtt_enabled=_mqtt_on(page),
        issued_at=await service.mqtt_issued_at(state.database.reader, application.id),
        issued=(await page.flashed()).get("issued"),
        sse_url=public_base_url(state.settings, page.environment) + "/v1/stream",
        messages=await _messages(page, application),
    )


@router.get("/a/{account_id}/streaming/{app_id}/messages")
async def streaming_messages(page: AccountPageDep) -> Response:
    """The live view's fragment as it stands (what each event of `/events` carries)."""
    application = page.application
    return pages.security_headers(HTMLResponse(await _messages_html(page, application)))


async def _messages_html(page: AccountPage, application: Application) -> str:
    return pages.fragment(
        page.request,
        page.principal,
        "streaming_messages.html",
        account_id=page.account_id,
        application=application,
        messages=await _messages(page, application),
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
    page = await access.account_events(request, account_id)
    application = page.application
    state, environment = page.state, page.environment
    hub = hub_of(state)
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
        return live.event("messages", await _messages_html(page, application), newest)

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
async def streaming_credentials(page: ChangeDep) -> Response:
    """A new MQTT password (the old one stops working once the broker reloads its
    password file), shown on the next page once. None where MQTT is off: there is no
    broker to connect to."""
    application = page.application
    if not _mqtt_on(page):
        raise PageError("mqtt_off", 409)
    issued = await issue_mqtt_credentials(
        page.state.database,
        page.state.settings,
        environment=page.environment,
        application_id=application.id,
        now_us=page.state.clock.now_us(),
    )
    await page.audit(action="streaming.credentials", target=application.id)
    return await page.flash(f"streaming/{application.id}", {"issued": dict(issued)})
