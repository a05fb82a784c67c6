"""The Webhooks page: each application's webhook (URL, secret, events, signature
scheme), the ping's outcome when saved, the last deliveries with request and response
headers and bodies, redelivery, and "send test event".

Everything is autoport/webhooks/service.py, as the admin API calls it (the request
model is the API's `WebhookInV`); "send test event" saves the webhook unchanged, which
is how the service sends a `ping`. The signing secret is shown once, when saved: the
console has no way to reveal it later.
"""

from __future__ import annotations

import random
from typing import Any

from fastapi import Request
from pydantic import ValidationError
from starlette.responses import Response

from autoport.apps.schemas import Account, Application
from autoport.console import access, pages, service
from autoport.console.access import PREFIX, Principal, console_router
from autoport.console.app_pages import account_application, form_errors
from autoport.kit import paging
from autoport.kit.errors import ApiError
from autoport.webhooks import service as webhooks
from autoport.webhooks.routes import _config
from autoport.webhooks.schemas import EVENT_TYPES, WebhookIn
from autoport.webhooks.signing import SIGNATURE_SCHEMES

router = console_router()


@router.get("/a/{account_id}/webhooks")
async def webhooks_overview(request: Request, account_id: str) -> Response:
    """The account's applications (paged) with their webhook, if any."""
    principal, account = await access.account_page(request, account_id)
    state, environment = access.where(request)
    size = state.settings.console_page_size
    scope = ("console-webhooks", str(environment), account.id)
    cursor = request.query_params.get("cursor")
    after = paging.decode_cursor(state.token_key, scope, cursor, (int, str)) if cursor else None
    found = await service.list_applications_of_account(
        state.database.reader, environment, account.id, limit=size + 1, after=after
    )
    next_url = None
    if len(found) > size:
        found = found[:size]
        token = paging.encode_cursor(state.token_key, scope, (found[-1].created_at, found[-1].id))
        next_url = pages.url(request, f"{PREFIX}/a/{account.id}/webhooks?cursor={token}")
    hooks = {}
    for application in found:
        hook = await service.get_webhook(state.database.reader, environment, application.id)
        if hook is not None:
            hooks[application.id] = hook
    return pages.render(
        request,
        principal,
        "webhooks.html",
        account=account,
        account_id=account.id,
        applications=found,
        hooks=hooks,
        next_url=next_url,
    )


async def _webhook_page(
    request: Request,
    principal: Principal,
    account: Account,
    application: Application,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    form: dict[str, Any] | None = None,
    saved: webhooks.SaveResult | None = None,
    ping: dict[str, Any] | None = None,
    flash: str | None = None,
) -> Response:
    state, environment = access.where(request)
    config = _config(request)
    hook = await service.get_webhook(state.database.reader, environment, application.id)
    deliveries = await webhooks.list_deliveries(
        state.database.reader, environment=environment, application_id=application.id, config=config
    )
    values = form or {
        "url": hook.url if hook else "",
        "events": list(hook.events) if hook else list(EVENT_TYPES),
        "signature_scheme": hook.signature_scheme if hook else "default",
    }
    return pages.render(
        request,
        principal,
        "webhook.html",
        status=status,
        account=account,
        account_id=account.id,
        application=application,
        hook=hook,
        deliveries=deliveries,
        errors=errors or {},
        values=values,
        events=EVENT_TYPES,
        schemes=SIGNATURE_SCHEMES,
        new_secret=saved.secret if saved else None,
        ping=ping,
        flash=flash or request.query_params.get("done"),
    )


@router.get("/a/{account_id}/applications/{app_id}/webhook")
async def webhook_page(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account.id, app_id)
    return await _webhook_page(request, principal, account, application)


@router.get("/a/{account_id}/applications/{app_id}/webhook/deliveries")
async def deliveries_fragment(request: Request, account_id: str, app_id: str) -> Response:
    """The delivery log alone (htmx refreshes it while the page is open)."""
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account.id, app_id)
    state, environment = access.where(request)
    deliveries = await webhooks.list_deliveries(
        state.database.reader,
        environment=environment,
        application_id=application.id,
        config=_config(request),
    )
    return pages.render(
        request,
        principal,
        "_deliveries.html",
        account_id=account.id,
        application=application,
        deliveries=deliveries,
    )


async def _save(
    request: Request,
    principal: Principal,
    account: Account,
    application: Application,
    body: WebhookIn,
    action: str,
) -> webhooks.SaveResult:
    state, environment = access.where(request)
    result = await webhooks.save_webhook(
        state.database,
        environment=environment,
        application_id=application.id,
        url=body.url,
        secret=body.secret,
        events=body.events,
        signature_scheme=body.signature_scheme,
        config=_config(request),
        clock_now=state.clock.now_us,
        rng=random.Random(),
    )
    async with state.database.transaction() as conn:
        await service.audit(
            conn,
            environment=environment,
            account_id=account.id,
            actor=principal.actor,
            actor_label=principal.label,
            action=action,
            target=application.id,
            detail={
                "url": result.webhook.url,
                "events": list(result.webhook.events),
                "ping": result.ping.status,
            },
            address=access.address_of(request),
            now_us=state.clock.now_us(),
        )
    return result


@router.post("/a/{account_id}/applications/{app_id}/webhook")
async def save_webhook(request: Request, account_id: str, app_id: str) -> Response:
    """Save and ping: the answer shows the ping's outcome and the signing secret (once)."""
    principal, account = await access.account_page(request, account_id)
    form = await access.checked_lists(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    values: dict[str, Any] = {
        "url": (form.get("url") or [""])[-1].strip(),
        "events": form.get("events", []),
        "signature_scheme": (form.get("signature_scheme") or [""])[-1] or None,
    }
    secret = (form.get("secret") or [""])[-1].strip() or None
    try:
        body = WebhookIn.model_validate({**values, "secret": secret})
        result = await _save(request, principal, account, application, body, "webhook_saved")
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _webhook_page(
            request, principal, account, application, status=status, errors=form_errors(error),
            form=values,
        )  # fmt: skip
    return await _webhook_page(
        request,
        principal,
        account,
        application,
        saved=result,
        ping=webhooks.outcome_view(result.ping),
    )


@router.post("/a/{account_id}/applications/{app_id}/webhook/test")
async def send_test_event(request: Request, account_id: str, app_id: str) -> Response:
    """Send a `ping` now: the webhook saved as it is (the service's way to ping)."""
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    state, environment = access.where(request)
    hook = await service.get_webhook(state.database.reader, environment, application.id)
    if hook is None:
        raise access.not_found()
    try:
        body = WebhookIn.model_validate({"url": hook.url, "events": list(hook.events)})
        result = await _save(request, principal, account, application, body, "webhook_test_sent")
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _webhook_page(
            request, principal, account, application, status=status, errors=form_errors(error)
        )
    return await _webhook_page(
        request, principal, account, application, ping=webhooks.outcome_view(result.ping)
    )


@router.post("/a/{account_id}/applications/{app_id}/webhook/deliveries/{delivery_id}/redeliver")
async def redeliver(request: Request, account_id: str, app_id: str, delivery_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    state, environment = access.where(request)
    try:
        async with state.database.transaction() as conn:
            await webhooks.redeliver(
                conn,
                environment=environment,
                application_id=application.id,
                delivery_id=delivery_id[:64],
                now_us=state.clock.now_us(),
                config=_config(request),
            )
    except ApiError as error:
        return await _webhook_page(
            request, principal, account, application, status=error.status, errors=form_errors(error)
        )
    async with state.database.transaction() as conn:
        await service.audit(
            conn,
            environment=environment,
            account_id=account.id,
            actor=principal.actor,
            actor_label=principal.label,
            action="webhook_redelivered",
            target=application.id,
            detail={"delivery_id": delivery_id[:64]},
            address=access.address_of(request),
            now_us=state.clock.now_us(),
        )
    target = f"{PREFIX}/a/{account.id}/applications/{application.id}/webhook?done=redelivered"
    return pages.see_other(pages.url(request, target))


@router.post("/a/{account_id}/applications/{app_id}/webhook/remove")
async def remove(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    state, environment = access.where(request)
    now = state.clock.now_us()
    async with state.database.transaction() as conn:
        await webhooks.remove_webhook(
            conn, environment=environment, application_id=application.id, now_us=now
        )
    async with state.database.transaction() as conn:
        await service.audit(
            conn,
            environment=environment,
            account_id=account.id,
            actor=principal.actor,
            actor_label=principal.label,
            action="webhook_removed",
            target=application.id,
            address=access.address_of(request),
            now_us=now,
        )
    target = f"{PREFIX}/a/{account.id}/applications/{application.id}/webhook?done=removed"
    return pages.see_other(pages.url(request, target))
