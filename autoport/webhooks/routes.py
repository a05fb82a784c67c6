"""Admin API of webhooks (admin token): configuration, the delivery log, redelivery.

Paths are per environment like the rest of the API: `/sandbox/admin/v1/...` configures
the sandbox application of that id.
"""

from __future__ import annotations

import random
from typing import Annotated

from fastapi import Depends, Path, Query, Request
from starlette.responses import Response

from autoport.kit.auth import AdminDep
from autoport.kit.environments import EnvironmentDep
from autoport.kit.routing import api_router, json_response
from autoport.kit.state import StateDep, state_of
from autoport.webhooks import service
from autoport.webhooks.delivery import WebhookConfig
from autoport.webhooks.schemas import (
    DeliveryAnswer,
    DeliveryList,
    WebhookAnswer,
    WebhookIn,
    WebhookSaved,
)

router = api_router(prefix="/admin/v1/applications", tags=["webhooks (admin)"])

ApplicationId = Annotated[str, Path(min_length=1, max_length=64)]
DeliveryId = Annotated[str, Path(min_length=1, max_length=64)]


def _config(request: Request) -> WebhookConfig:
    return service.config_of(state_of(request))


ConfigDep = Annotated[WebhookConfig, Depends(_config)]


@router.put(
    "/{application_id}/webhook",
    responses={
        200: {"model": WebhookSaved, "description": "Changed"},
        201: {"model": WebhookSaved, "description": "Created"},
    },
)
async def put_webhook(
    application_id: ApplicationId,
    body: WebhookIn,
    _: AdminDep,
    state: StateDep,
    environment: EnvironmentDep,
    config: ConfigDep,
) -> Response:
    """Create or change the application's webhook and send `ping` at once. The answer
    holds the webhook, its secret (to configure the receiver) and the ping's outcome;
    201 when created, 200 when changed."""
    result = await service.save_webhook(
        state.database,
        environment=environment,
        application_id=application_id,
        url=body.url,
        secret=body.secret,
        events=body.events,
        signature_scheme=body.signature_scheme,
        config=config,
        clock_now=state.clock.now_us,
        rng=random.Random(),
    )
    return json_response(
        {
            "webhook": service.webhook_view(result.webhook, secret=result.secret),
            "ping": service.outcome_view(result.ping),
        },
        status_code=201 if result.created else 200,
    )


@router.get("/{application_id}/webhook", responses={200: {"model": WebhookAnswer}})
async def get_webhook(
    application_id: ApplicationId,
    _: AdminDep,
    state: StateDep,
    environment: EnvironmentDep,
    config: ConfigDep,
    reveal_secret: Annotated[bool, Query(description="Include the signing secret.")] = False,
) -> Response:
    """The application's webhook (the secret only with `reveal_secret=true`)."""
    view = await service.show_webhook(
        state.database.reader,
        environment=environment,
        application_id=application_id,
        config=config,
        reveal_secret=reveal_secret,
    )
    return json_response({"webhook": view})


@router.delete("/{application_id}/webhook", status_code=204)
async def delete_webhook(
    application_id: ApplicationId, _: AdminDep, state: StateDep, environment: EnvironmentDep
) -> Response:
    """Remove the webhook; queued deliveries are marked failed and stay in the log."""
    async with state.database.transaction() as conn:
        await service.remove_webhook(
            conn,
            environment=environment,
            application_id=application_id,
            now_us=state.clock.now_us(),
        )
    return Response(status_code=204)


@router.get("/{application_id}/webhook/deliveries", responses={200: {"model": DeliveryList}})
async def list_deliveries(
    application_id: ApplicationId,
    _: AdminDep,
    state: StateDep,
    environment: EnvironmentDep,
    config: ConfigDep,
) -> Response:
    """The latest deliveries (newest first), with request and response headers and
    bodies (response bodies truncated)."""
    deliveries = await service.list_deliveries(
        state.database.reader, environment=environment, application_id=application_id, config=config
    )
    return json_response({"deliveries": deliveries})


@router.get(
    "/{application_id}/webhook/deliveries/{delivery_id}",
    responses={200: {"model": DeliveryAnswer}},
)
async def get_delivery(
    application_id: ApplicationId,
    delivery_id: DeliveryId,
    _: AdminDep,
    state: StateDep,
    environment: EnvironmentDep,
) -> Response:
    """One delivery of the log."""
    delivery = await service.get_delivery(
        state.database.reader,
        environment=environment,
        application_id=application_id,
        delivery_id=delivery_id,
    )
    return json_response({"delivery": delivery})


@router.post(
    "/{application_id}/webhook/deliveries/{delivery_id}/redeliver",
    status_code=202,
    responses={202: {"model": DeliveryAnswer}},
)
async def redeliver(
    application_id: ApplicationId,
    delivery_id: DeliveryId,
    _: AdminDep,
    state: StateDep,
    environment: EnvironmentDep,
    config: ConfigDep,
) -> Response:
    """Queue the delivery again (same delivery id and body); 409 while an attempt of it
    is in flight."""
    async with state.database.transaction() as conn:
        delivery = await service.redeliver(
            conn,
            environment=environment,
            application_id=application_id,
            delivery_id=delivery_id,
            now_us=state.clock.now_us(),
            config=config,
        )
    return json_response({"delivery": delivery}, status_code=202)
