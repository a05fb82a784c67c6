"""Fixtures of the console tests: the real app on both backends, browsers as httpx
clients that keep their cookies and send the page's CSRF token, and two accounts with a
user of every role (tests try each one against the other account's URLs).

    async def test_x(console: Console, world: World) -> None:
        browser = await console.signed_in(world.a.owner)      # or console.operator()
        page = await browser.get(f"/console/a/{world.a.id}/applications")
        done = await browser.post(f"/console/a/{world.a.id}/...", {"name": "x"})
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from autoport.app import create_app
from autoport.apps import service as apps_service
from autoport.config import Settings
from autoport.console import repository, service
from autoport.console.schemas import User
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment

ADMIN_TOKEN = "test-admin-token"
PASSWORD = "correct horse battery"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"admin_token": SecretStr(ADMIN_TOKEN)})


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock, run_background=False)
    async with application.router.lifespan_context(application):
        yield application


@functools.lru_cache(maxsize=1)
def _password_hash() -> str:
    # argon2id is slow on purpose: hashed once for every test user.
    return service.hash_password(PASSWORD)


class Browser:
    """One browser: its own cookie jar; `post` sends the CSRF token of the last page
    it loaded (as a form does) unless the data brings its own."""

    def __init__(self, app: FastAPI, prefix: str = "/sandbox", served: str | None = None) -> None:
        self.prefix = prefix
        # httpx's ASGI transport buffers a whole response: event streams need the app
        # served over HTTP (`served`, a base URL; tests/console/test_live.py).
        transport = None if served else httpx.ASGITransport(app=app)
        self.client = httpx.AsyncClient(
            transport=transport, base_url=served or "http://127.0.0.1:8080", timeout=10
        )
        self.csrf = ""

    async def close(self) -> None:
        await self.client.aclose()

    def _remember(self, response: httpx.Response) -> None:
        found = CSRF.search(response.text)
        if found:
            self.csrf = found.group(1)

    async def get(self, path: str, **kwargs: Any) -> httpx.Response:
        response = await self.client.get(self.prefix + path, **kwargs)
        self._remember(response)
        return response

    async def post(
        self,
        path: str,
        data: dict[str, Any] | None = None,
        *,
        csrf: bool = True,
        follow: bool = False,
        **kwargs: Any,
    ) -> httpx.Response:
        """`follow`: go where the answer redirects (a change answers 303 to the page
        that shows its outcome) and return that page."""
        form = dict(data or {})
        if csrf:
            form.setdefault("csrf_token", self.csrf)
        response = await self.client.post(
            self.prefix + path, data=form, follow_redirects=follow, **kwargs
        )
        self._remember(response)
        return response


@dataclass
class Person:
    email: str
    role: str
    account_id: str
    id: str = ""


@dataclass
class Tenant:
    id: str
    name: str
    owner: Person
    developer: Person
    viewer: Person
    app_id: str = ""

    @property
    def people(self) -> list[Person]:
        return [self.owner, self.developer, self.viewer]


@dataclass
class World:
    a: Tenant
    b: Tenant
    environment: Environment = Environment.sandbox
    extra: dict[str, Any] = field(default_factory=dict)


class Console:
    def __init__(self, app: FastAPI, clock: FrozenClock) -> None:
        self.app = app
        self.clock = clock
        self.browsers: list[Browser] = []
        # Set to a base URL once the app is served over HTTP: new browsers use it.
        self.served: str | None = None

    @property
    def database(self) -> Any:
        return self.app.state.autoport.database

    def browser(self, prefix: str = "/sandbox") -> Browser:
        browser = Browser(self.app, prefix, self.served)
        self.browsers.append(browser)
        return browser

    async def operator(self, prefix: str = "/sandbox") -> Browser:
        browser = self.browser(prefix)
        await browser.get("/console/sign-in?operator=1")
        done = await browser.post("/console/sign-in", {"admin_token": ADMIN_TOKEN})
        assert done.status_code == 303, done.text
        return browser

    async def signed_in(self, person: Person, prefix: str = "/sandbox") -> Browser:
        browser = self.browser(prefix)
        await browser.get("/console/sign-in")
        done = await browser.post("/console/sign-in", {"email": person.email, "password": PASSWORD})
        assert done.status_code == 303, done.text
        return browser

    async def add_user(
        self,
        account_id: str,
        email: str,
        role: str,
        environment: Environment = Environment.sandbox,
    ) -> Person:
        user = User(
            str(uuid.uuid4()), environment, account_id, email, _password_hash(),
            role, self.clock.now_us(), None,
        )  # fmt: skip
        async with self.database.transaction() as conn:
            await repository.create_user(conn, user)
        return Person(email, role, account_id, user.id)

    async def add_account(self, name: str, environment: Environment = Environment.sandbox) -> str:
        async with self.database.transaction() as conn:
            account = await apps_service.create_account(
                conn, environment=environment, name=name, now_us=self.clock.now_us()
            )
        return account.id

    async def add_application(
        self, account_id: str, name: str, environment: Environment = Environment.sandbox
    ) -> str:
        async with self.database.transaction() as conn:
            application, _ = await apps_service.create_application(
                conn,
                environment=environment,
                account_id=account_id,
                name=name,
                redirect_uris=["https://app.example.com/callback"],
                properties=["charging.battery_level"],
                brands=["sandbox"] if environment is Environment.sandbox else ["bmw"],
                client_type="confidential",
                now_us=self.clock.now_us(),
            )
        return application.id

    async def tenant(self, name: str) -> Tenant:
        account_id = await self.add_account(name)
        slug = name.lower()
        tenant = Tenant(
            account_id,
            name,
            await self.add_user(account_id, f"owner@{slug}.example.com", "owner"),
            await self.add_user(account_id, f"dev@{slug}.example.com", "developer"),
            await self.add_user(account_id, f"viewer@{slug}.example.com", "viewer"),
        )
        tenant.app_id = await self.add_application(account_id, f"{name} app")
        return tenant


@pytest.fixture
async def console(app: FastAPI, clock: FrozenClock) -> AsyncIterator[Console]:
    helper = Console(app, clock)
    yield helper
    for browser in helper.browsers:
        await browser.close()


@pytest.fixture
async def world(console: Console) -> World:
    return World(await console.tenant("Alpha"), await console.tenant("Beta"))
