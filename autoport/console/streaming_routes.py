"""The console's Streaming page: an application's MQTT connection (host, port, topic,
username), a new password shown once (issued by autoport.streaming.service, as
`autoport streaming credentials` does), the SSE endpoint, and a live view of the
application's newest stream messages (an htmx poll of a fragment)."""

from __future__ import annotations

from fastapi import Request
from starlette.responses import Response

from autoport.apps.schemas import Application
from autoport.console import access, pages, service
from autoport.console.access import Principal, console_router
from autoport.console.app_pages import account_application, applications_for_picker
from autoport.kit.environments import public_base_url
from autoport.streaming import repository as streaming_repository
from autoport.streaming.service import issue_mqtt_credentials, mqtt_connection

router = console_router()

# Messages the live view shows (the newest).
LIVE_MESSAGES = 20


async def _messages(request: Request, application: Application) -> list[dict[str, object]]:
    state, environment = access.where(request)
    logged = await streaming_repository.list_latest_messages(
        state.database.reader,
        environment=environment,
        application_id=application.id,
        limit=LIVE_MESSAGES,
    )
    return [{"seq": m.seq, "message": m.message, "ingested_at": m.ingested_at} for m in logged]


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
        issued_at=await streaming_repository.get_mqtt_credentials_issued_at(
            state.database.reader, application.id
        ),
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
    """The live view's fragment (htmx replaces it every two seconds)."""
    principal, _ = await access.account_page(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    return pages.render(
        request,
        principal,
        "streaming_messages.html",
        account_id=account_id,
        application=application,
        messages=await _messages(request, application),
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
