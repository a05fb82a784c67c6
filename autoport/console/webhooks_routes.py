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

from pydantic import ValidationError
from starlette.responses import Response

from autoport.apps import service as apps_service
from autoport.apps.schemas import Application
from autoport.console import access, service
from autoport.console.access import AccountPage, AccountPageDep, ChangeDep, console_router
from autoport.kit import paging
from autoport.kit.errors import ApiError
from autoport.webhooks import service as webhooks
from autoport.webhooks.schemas import EVENT_TYPES, WebhookIn
from autoport.webhooks.signing import SIGNATURE_SCHEMES

router = console_router()


@router.get("/a/{account_id}/webhooks")
async def webhooks_overview(page: AccountPageDep) -> Response:
    """The account's applications (paged) with their webhook, if any."""
    state = page.state
    size = state.settings.console_page_size
    scope = ("console-webhooks", str(page.environment), page.account_id)
    cursor = page.request.query_params.get("cursor")
    after = paging.decode_cursor(state.token_key, scope, cursor, (int, str)) if cursor else None
    found = await apps_service.list_applications_of_account(
        state.database.reader, page.environment, page.account_id, limit=size + 1, after=after
    )
    next_url = None
    if len(found) > size:
        found = found[:size]
        token = paging.encode_cursor(state.token_key, scope, (found[-1].created_at, found[-1].id))
        next_url = page.url(f"webhooks?cursor={token}")
    hooks = {}
    for application in found:
        hook = await service.get_webhook(state.database.reader, page.environment, application.id)
        if hook is not None:
            hooks[application.id] = hook
    return page.render("webhooks.html", applications=found, hooks=hooks, next_url=next_url)


async def _webhook_page(
    page: AccountPage,
    application: Application,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    form: dict[str, Any] | None = None,
) -> Response:
    reader = page.state.database.reader
    config = webhooks.config_of(page.state)
    hook = await service.get_webhook(reader, page.environment, application.id)
    deliveries = await webhooks.list_deliveries(
        reader, environment=page.environment, application_id=application.id, config=config
    )
    values = form or {
        "url": hook.url if hook else "",
        "events": list(hook.events) if hook else list(EVENT_TYPES),
        "signature_scheme": hook.signature_scheme if hook else "default",
    }
    # A save's or a test's outcome (and a new secret): left by the POST, shown once.
    flashed = await page.flashed()
    return page.render(
        "webhook.html",
        status=status,
        application=application,
        hook=hook,
        deliveries=deliveries,
        errors=errors or {},
        values=values,
        events=EVENT_TYPES,
        schemes=SIGNATURE_SCHEMES,
        new_secret=flashed.get("secret"),
        ping=flashed.get("ping"),
        flash=page.request.query_params.get("done"),
    )


@router.get("/a/{account_id}/applications/{app_id}/webhook")
async def webhook_page(page: AccountPageDep) -> Response:
    return await _webhook_page(page, page.application)


@router.get("/a/{account_id}/applications/{app_id}/webhook/deliveries")
async def deliveries_fragment(page: AccountPageDep) -> Response:
    """The delivery log alone (htmx refreshes it while the page is open)."""
    application = page.application
    deliveries = await webhooks.list_deliveries(
        page.state.database.reader,
        environment=page.environment,
        application_id=application.id,
        config=webhooks.config_of(page.state),
    )
    return page.render("_deliveries.html", application=application, deliveries=deliveries)


async def _save(
    page: AccountPage, application: Application, body: WebhookIn, action: str
) -> Response:
    """Save through the service (which checks the URL, then pings after its commit) and
    show the page with the ping's outcome and the signing secret, once."""
    state = page.state
    result = await webhooks.save_webhook(
        state.database,
        environment=page.environment,
        application_id=application.id,
        url=body.url,
        secret=body.secret,
        events=body.events,
        signature_scheme=body.signature_scheme,
        config=webhooks.config_of(page.state),
        clock_now=state.clock.now_us,
        rng=random.Random(),
    )
    await page.audit(
        action=action,
        target=application.id,
        detail={
            "url": result.webhook.url,
            "events": list(result.webhook.events),
            "ping": result.ping.status,
        },
    )
    shown: dict[str, Any] = {"ping": webhooks.outcome_view(result.ping)}
    if action == "webhook_saved":
        shown["secret"] = result.secret
    return await page.flash(f"applications/{application.id}/webhook", shown)


@router.post("/a/{account_id}/applications/{app_id}/webhook")
async def save_webhook(page: ChangeDep) -> Response:
    """Save and ping: the page then shows the ping's outcome and the signing secret
    (once)."""
    application = page.application
    values: dict[str, Any] = {
        "url": page.form.get("url", "").strip(),
        "events": page.lists.get("events", []),
        "signature_scheme": page.form.get("signature_scheme") or None,
    }
    secret = page.form.get("secret", "").strip() or None
    try:
        body = WebhookIn.model_validate({**values, "secret": secret})
        return await _save(page, application, body, "webhook_saved")
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _webhook_page(
            page, application, status=status, errors=page.errors(error), form=values
        )


@router.post("/a/{account_id}/applications/{app_id}/webhook/test")
async def send_test_event(page: ChangeDep) -> Response:
    """Send a `ping` now: the webhook saved as it is (the service's way to ping)."""
    application = page.application
    hook = await service.get_webhook(page.state.database.reader, page.environment, application.id)
    if hook is None:
        raise access.not_found()
    try:
        body = WebhookIn.model_validate({"url": hook.url, "events": list(hook.events)})
        return await _save(page, application, body, "webhook_test_sent")
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _webhook_page(page, application, status=status, errors=page.errors(error))


@router.post("/a/{account_id}/applications/{app_id}/webhook/deliveries/{delivery_id}/redeliver")
async def redeliver(page: ChangeDep, delivery_id: str) -> Response:
    application = page.application
    try:
        async with page.state.database.transaction() as conn:
            await webhooks.redeliver(
                conn,
                environment=page.environment,
                application_id=application.id,
                delivery_id=delivery_id[:64],
                now_us=page.state.clock.now_us(),
                config=webhooks.config_of(page.state),
            )
            await page.audit(
                conn,
                action="webhook_redelivered",
                target=application.id,
                detail={"delivery_id": delivery_id[:64]},
            )
    except ApiError as error:
        return await _webhook_page(
            page, application, status=error.status, errors=page.errors(error)
        )
    return page.see_other(f"applications/{application.id}/webhook?done=redelivered")


@router.post("/a/{account_id}/applications/{app_id}/webhook/remove")
async def remove(page: ChangeDep) -> Response:
    application = page.application
    async with page.state.database.transaction() as conn:
        await webhooks.remove_webhook(
            conn,
            environment=page.environment,
            application_id=application.id,
            now_us=page.state.clock.now_us(),
        )
        await page.audit(conn, action="webhook_removed", target=application.id)
    return page.see_other(f"applications/{application.id}/webhook?done=removed")
