"""Receive autoport webhooks: verify each delivery, drop duplicates, handle the event.

    WEBHOOK_SECRET=whsec_... PORT=9000 python webhook_receiver.py

Configure the webhook with the same secret (PUT /admin/v1/applications/{id}/webhook)."""

from __future__ import annotations

import os
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from autoport_client import SignatureError
from autoport_client.webhooks import WebhookEvent, verify_starlette


def create_app(secret: str, handle: Callable[[WebhookEvent], None]) -> Starlette:
    seen: set[str] = set()  # delivery ids: a retried delivery keeps its id

    async def hook(request: Request) -> Response:
        try:
            event = await verify_starlette(secret, request)
        except SignatureError:
            return Response(status_code=401)
        if event.delivery_id is not None and event.delivery_id in seen:
            return Response(status_code=204)
        if event.delivery_id is not None:
            seen.add(event.delivery_id)
        handle(event)
        return Response(status_code=204)

    return Starlette(routes=[Route("/hook", hook, methods=["POST"])])


def print_event(event: WebhookEvent) -> None:
    print(event.type, event.vin, event.action or "", event.delivery_id, flush=True)


def main() -> None:
    import uvicorn

    app = create_app(os.environ["WEBHOOK_SECRET"], print_event)
    port = int(os.environ.get("PORT", "9000"))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
