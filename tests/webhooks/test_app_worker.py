"""The worker the app starts with (background task): an event emitted while the app
runs reaches the receiver without anything else running."""

from __future__ import annotations

import asyncio
import time

import httpx

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit import outbox
from autoport.kit.clock import Clock
from autoport.kit.environments import Environment

from .conftest import ADMIN_TOKEN, APP_ID, Receiver, add_application


async def test_the_app_delivers_events_in_the_background(
    settings: Settings, receiver: Receiver
) -> None:
    app = create_app(settings, clock=Clock(), run_background=True)
    async with app.router.lifespan_context(app):
        db = app.state.autoport.database
        await add_application(db, APP_ID)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            saved = await c.put(
                f"/admin/v1/applications/{APP_ID}/webhook",
                json={"url": receiver.url},
                headers={"authorization": f"Bearer {ADMIN_TOKEN}"},
            )
        assert saved.status_code == 201
        async with db.transaction() as conn:
            await outbox.emit(
                conn,
                environment=Environment.production,
                event_type="authorization_changed",
                payload={"action": "approved", "authorization_id": "a-1", "detail": None},
                now_us=Clock().now_us(),
                vin="WBA12345678901234",
                application_id=APP_ID,
            )
        deadline = time.monotonic() + 20
        while len(receiver.requests) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    assert [r.headers["X-Svc-Event"] for r in receiver.requests] == [
        "ping",
        "authorization_changed",
    ]
    assert receiver.requests[1].json()["event"]["authorization_id"] == "a-1"


async def test_an_event_wakes_the_worker_at_once_instead_of_its_poll(
    settings: Settings, receiver: Receiver
) -> None:
    # A poll this slow would hold the event for up to a minute: it is delivered within
    # seconds only because the outbox commit wakes the worker.
    slow = settings.model_copy(update={"webhook_poll_interval_seconds": 60})
    app = create_app(slow, clock=Clock(), run_background=True)
    async with app.router.lifespan_context(app):
        db = app.state.autoport.database
        await add_application(db, APP_ID)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            saved = await c.put(
                f"/admin/v1/applications/{APP_ID}/webhook",
                json={"url": receiver.url},
                headers={"authorization": f"Bearer {ADMIN_TOKEN}"},
            )
        assert saved.status_code == 201
        await asyncio.sleep(1.0)  # the worker's first passes are over: it waits now
        for n in range(3):
            async with db.transaction() as conn:
                await outbox.emit(
                    conn,
                    environment=Environment.production,
                    event_type="authorization_changed",
                    payload={"action": "approved", "authorization_id": f"a-{n}", "detail": None},
                    now_us=Clock().now_us(),
                    vin=f"WBA1234567890123{n}",
                    application_id=APP_ID,
                )
            started = time.monotonic()
            while len(receiver.requests) < 2 + n and time.monotonic() - started < 10:
                await asyncio.sleep(0.01)
            took = time.monotonic() - started
            assert len(receiver.requests) == 2 + n, f"event {n} not delivered in 10 s"
            assert took < 5, f"event {n} delivered after {took:.1f} s"
            await asyncio.sleep(0.5)  # idle again before the next one
