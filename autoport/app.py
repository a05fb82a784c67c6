"""The ASGI app factory: one process serves production and the sandbox.

`create_app(settings)` wires the request pipeline, error handlers and every feature's
router; the database is opened in the lifespan. `uvicorn --factory autoport.app:create_app`
works too (settings then come from the environment).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI
from starlette.datastructures import State
from starlette.routing import BaseRoute, Match, Mount, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from autoport import __version__, worker
from autoport.config import Settings, ensure_secrets
from autoport.health.routes import router as health_router
from autoport.kit import metrics, openapi
from autoport.kit.clock import Clock
from autoport.kit.db import create_database
from autoport.kit.environments import Environment, EnvironmentRouter, public_base_url
from autoport.kit.errors import install_error_handlers
from autoport.kit.logging import configure_logging
from autoport.kit.middleware import RequestPipeline
from autoport.kit.state import serving
from autoport.kit.usage import application_requests, usage_of
from autoport.oauth.bearer import make_authenticator
from autoport.oauth.paths import is_oauth_path
from autoport.state import build_state

# Background work started with the app: the kinds of autoport.worker (one registry,
# shared with `autoport worker`).
BackgroundTask = worker.BackgroundTask


def feature_routers() -> Sequence[APIRouter]:
    """Every feature's router, in one place. Imported here so that `autoport.app` stays
    cheap to import for the CLI."""
    from autoport.apidocs.routes import router as apidocs_router
    from autoport.apps.routes import router as apps_router
    from autoport.commands.routes import router as commands_router
    from autoport.consent.routes import consent_router
    from autoport.console.routes import console_router_with_pages
    from autoport.eligibility.routes import router as eligibility_router
    from autoport.fleet.admin_routes import router as fleet_admin_router
    from autoport.fleet.routes import router as fleet_router
    from autoport.ingestion.routes import router as ingestion_router
    from autoport.oauth.routes import router as oauth_router
    from autoport.owner.routes import owner_router
    from autoport.sandbox.oem_login import router as sandbox_oem_login_router
    from autoport.sandbox.routes import router as sandbox_router
    from autoport.streaming.routes import router as streaming_router
    from autoport.vehicle_data.routes import router as vehicle_data_router
    from autoport.webhooks.routes import router as webhooks_router

    # The vehicle data pull is the hottest route: matched first.
    return [
        vehicle_data_router,
        # Commands next: the hot paths of applications that act on cars.
        commands_router,
        health_router,
        oauth_router,
        apps_router,
        ingestion_router,
        eligibility_router,
        fleet_router,
        fleet_admin_router,
        streaming_router,
        webhooks_router,
        sandbox_router,
        consent_router,
        sandbox_oem_login_router,
        owner_router,
        apidocs_router,
        console_router_with_pages(),
    ]


def hot_routes() -> Sequence[Route]:
    """Routes answered before FastAPI (autoport.kit.routing.HotRoute)."""
    from autoport.commands.routes import hot_routes as commands_hot_routes
    from autoport.oauth.routes import hot_routes as oauth_hot_routes
    from autoport.vehicle_data.routes import hot_routes as vehicle_data_hot_routes

    return [*vehicle_data_hot_routes, *oauth_hot_routes, *commands_hot_routes]


_RouteT = TypeVar("_RouteT", bound=BaseRoute)


class AppRouter(Router):
    """What answers a request once the pipeline has done its cross-cutting work: the hot
    routes first, then FastAPI mounted at the root for everything else (a method a hot
    route does not answer on its path, such as POST on the pull, goes on to FastAPI's
    405 too). The lifespan is FastAPI's."""

    def __init__(self, hot: Sequence[Route], api: ASGIApp) -> None:
        self.hot = tuple(hot)
        self.api_mount = Mount("", app=api)
        super().__init__(routes=[*self.hot, self.api_mount])
        self.api = api

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Router's own route loop, for HTTP without the calls it takes to get there (its
        # middleware stack, `app`, `handle`): a hot route's full match is called at once,
        # any other request goes straight to FastAPI (matching the mount at the root
        # would only add an empty root path and a `path` parameter: 3 µs of each FastAPI
        # request); a partial match (POST on the pull: 405) and the lifespan go through
        # Router, and its mount, as usual.
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        for route in self.hot:
            match, child_scope = route.matches(scope)
            if match is Match.FULL:  # its path and method: `handle` would only call it
                await self._enter(route, child_scope, scope).app(scope, receive, send)
                return
            if match is Match.PARTIAL:
                await super().__call__(scope, receive, send)
                return
        await self.api(scope, receive, send)

    def _enter(self, route: _RouteT, child_scope: Scope, scope: Scope) -> _RouteT:
        """What Router notes on the scope of the route it hands a request to."""
        scope["router"] = self
        scope["route"] = route
        scope.update(child_scope)
        return route

    async def lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.api(scope, receive, send)


def process_tasks() -> Sequence[BackgroundTask]:
    """The work of this process's own API state, started whenever the app serves with
    background work, also under `serve --no-workers`: the in-memory read and request
    counts are this process's and only it can flush them. The shared background work
    (autoport.worker's kinds) is started apart, unless the process is API only."""
    from autoport.owner.reads import flush_reads
    from autoport.owner.tasks import session_purger
    from autoport.usage.tasks import usage_flusher

    # One flusher for the one daily counter; the reads go to the owner portal's table.
    return [functools.partial(usage_flusher, write_reads=flush_reads), session_purger]


class PlainAttributes(State):
    """`app.state` whose entries are plain attributes. Starlette's State keeps them in a
    dict of its own and finds each through `__getattr__`, in Python (0.4 µs); every
    request reads two (`state_of`, the authenticator). Here that dict is the instance's
    own `__dict__`, so State's methods and item access still work, and a read is an
    ordinary attribute lookup."""

    def __init__(self) -> None:
        super().__init__(self.__dict__)


class AutoportAPI(FastAPI):
    """The app as served: RequestPipeline(AppRouter(hot routes, FastAPI)). The pipeline is
    the outermost layer, so every request, hot route or not, gets its environment, id,
    metrics, input limits and last-resort 500 there; the object itself stays the
    FastAPI app (state, lifespan, OpenAPI)."""

    pipeline: RequestPipeline

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.state = PlainAttributes()

    def openapi(self) -> dict[str, Any]:
        return self.openapi_for(Environment.production)

    def openapi_for(self, environment: Environment) -> dict[str, Any]:
        """The OpenAPI document as `environment` serves it, built on first use (the
        routes do not change once the app is made; autoport.kit.openapi)."""
        documents: dict[Environment, dict[str, Any]] = self.__dict__.setdefault("_documents", {})
        if environment not in documents:
            if self.openapi_schema is None:
                self.openapi_schema = openapi.build(self, oauth_path=is_oauth_path)
            settings = self.state.autoport.settings
            documents[environment] = openapi.for_environment(
                self.openapi_schema, settings, environment
            )
        return documents[environment]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["app"] = self  # what Starlette sets, for request.app on the hot routes
        await self.pipeline(scope, receive, send)

    async def framework(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().__call__(scope, receive, send)


def hsts_headers(settings: Settings) -> dict[Environment, str]:
    """Strict-Transport-Security for each environment whose public base URL is https
    (browsers ignore it over http; sent there it would only confuse)."""
    if settings.hsts_max_age_seconds == 0:
        return {}
    value = f"max-age={settings.hsts_max_age_seconds}"
    return {
        environment: value
        for environment in Environment
        if public_base_url(settings, environment).startswith("https://")
    }


def create_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    run_background: bool = True,
) -> FastAPI:
    """The app; its lifespan starts every kind of background work unless
    `run_background` is false or the settings say API only (`serve --no-workers`), and
    this process's own flushers (`process_tasks`) unless `run_background` is false."""
    settings, _ = ensure_secrets(settings or Settings())
    run_workers = run_background and settings.background_workers
    metrics.application_labels.limit = settings.metrics_application_labels
    database = create_database(
        settings.resolved_database_url,
        schema=settings.database_schema,
        pool_size=settings.database_pool_size,
    )
    # Every long-lived object, once per app (autoport.state); the database connects in
    # the lifespan.
    state = build_state(settings, database, clock or Clock())

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await database.connect()
        try:
            async with contextlib.AsyncExitStack() as stack:
                stack.enter_context(serving(state))
                metrics.PROCESS_STARTS.labels("api").inc()
                if run_background:
                    for task in process_tasks():
                        await stack.enter_async_context(task(state))
                if run_workers:
                    await stack.enter_async_context(worker.running(state, worker.KIND_NAMES))
                yield
        finally:
            await database.close()

    app = AutoportAPI(
        title="autoport",
        version=__version__,
        summary="Vehicle data, consent, eligibility, fleet clearance, webhooks and streams.",
        lifespan=lifespan,
        # autoport.apidocs serves both, per environment, with Swagger UI from the package.
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.autoport = state
    # Bearer tokens -> Caller for every data route (autoport.kit.auth).
    app.state.authenticator = make_authenticator(state)
    install_error_handlers(app, oauth_path=is_oauth_path)
    for router in feature_routers():
        app.include_router(router)
    app.pipeline = RequestPipeline(
        AppRouter(hot_routes(), app.framework),
        environments=EnvironmentRouter.from_settings(settings),
        access_log=settings.access_log_sample if settings.access_log else 0.0,
        max_body_bytes=settings.max_body_bytes,
        max_header_bytes=settings.max_header_bytes,
        oauth_path=is_oauth_path,
        hsts=hsts_headers(settings),
        # Each request a token got through, per application: for the console's usage
        # page (kit.usage) and the metrics' per-application request counts (kit.metrics).
        count_application=application_requests(usage_of(state), state.clock),
    )
    return app


def app_from_environment() -> FastAPI:
    """The factory `autoport serve` has uvicorn call (autoport.kit.server), in this process
    or in each worker process: settings from the environment (and config file), secrets
    from the data directory."""
    settings, _ = ensure_secrets(Settings())
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings)
