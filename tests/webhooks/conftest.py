"""Webhook test fixtures: a real aiohttp receiver on loopback, applications in the
database, settings that allow loopback receivers (as the webhook setting intends for
tests), and a worker with an injectable clock."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from aiohttp import web
from pydantic import SecretStr

from autoport.config import Settings, ensure_secrets
from autoport.kit import outbox
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.webhooks import service
from autoport.webhooks.delivery import WebhookConfig
from autoport.webhooks.tasks import DeliveryWorker

ADMIN_TOKEN = "test-admin-token-for-webhooks"
APP_ID = "0123456789ABCDEF01234567"
OTHER_APP_ID = "FEDCBA987654321001234567"
SANDBOX_APP_ID = "AAAAAAAAAAAAAAAAAAAAAAAA"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass
class Answer:
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"


Behaviour = Callable[[Received], Answer | Awaitable[Answer]]


class Receiver:
    """An HTTP server on 127.0.0.1 that records every request with its raw body."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.behaviour: Behaviour = lambda _: Answer()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        received = Received(request.path, dict(request.headers), await request.read())
        self.requests.append(received)
        answer = self.behaviour(received)
        if not isinstance(answer, Answer):
            answer = await answer
        if answer.delay:
            await asyncio.sleep(answer.delay)
        return web.Response(status=answer.status, body=answer.body, headers=answer.headers)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def to(self, path: str) -> list[Received]:
        return [r for r in self.requests if r.path == path]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    server = Receiver()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The suite's settings (both backends), with loopback receivers allowed, a known
    admin token and short timeouts; secrets generated into the data dir so that worker
    subprocesses share them."""
    updated = settings.model_copy(
        update={
            "webhook_allow_loopback": True,
            "admin_token": SecretStr(ADMIN_TOKEN),
            "webhook_timeout_seconds": 1.0,
        }
    )
    return ensure_secrets(updated)[0]


@pytest.fixture
def config(settings: Settings) -> WebhookConfig:
    return WebhookConfig.from_settings(settings)


async def add_application(
    db: Database, application_id: str, environment: Environment = Environment.production
) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES (:id, :env, 'test account', 0) ON CONFLICT (id) DO NOTHING",
            {"id": f"acct-{application_id}", "env": str(environment)},
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, "
            "client_type, redirect_uris, properties, brands, created_at) VALUES "
            "(:id, :env, :account, :client, 'test app', 'confidential', '[]', '[]', "
            "'[\"sandbox\"]', 0)",
            {
                "id": application_id,
                "env": str(environment),
                "account": f"acct-{application_id}",
                "client": f"client-{application_id}",
            },
        )


@pytest.fixture
async def applications(database: Database) -> Database:
    await add_application(database, APP_ID)
    await add_application(database, OTHER_APP_ID)
    await add_application(database, SANDBOX_APP_ID, Environment.sandbox)
    return database


@pytest.fixture
async def worker(
    applications: Database, config: WebhookConfig, clock: FrozenClock
) -> AsyncIterator[DeliveryWorker]:
    runner = DeliveryWorker(applications, config, clock=clock, rng=random.Random(7))
    try:
        yield runner
    finally:
        await runner.close()


SECRET = "receiver-shared-secret-0123456789"


async def configure(
    db: Database,
    config: WebhookConfig,
    clock: FrozenClock,
    url: str,
    *,
    application_id: str = APP_ID,
    events: list[str] | None = None,
    secret: str = SECRET,
    signature_scheme: str | None = None,
) -> service.SaveResult:
    return await service.save_webhook(
        db,
        environment=Environment.production,
        application_id=application_id,
        url=url,
        secret=secret,
        events=events,
        signature_scheme=signature_scheme,
        config=config,
        clock_now=clock.now_us,
    )


async def emit(
    db: Database,
    clock: FrozenClock,
    event_type: str,
    vin: str,
    payload: dict[str, Any],
    application_id: str = APP_ID,
    environment: Environment = Environment.production,
) -> None:
    async with db.transaction() as conn:
        await outbox.emit(
            conn,
            environment=environment,
            event_type=event_type,
            payload=payload,
            now_us=clock.now_us(),
            vin=vin,
            application_id=application_id,
        )
