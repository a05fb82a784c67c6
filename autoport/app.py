"""The ASGI app factory: one process serves production and the sandbox.

`create_app(settings)` wires the request pipeline, error handlers and every feature's
router; the database is opened in the lifespan. `uvicorn --factory autoport.app:create_app`
works too (settings then come from the environment).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette.routing import Mount, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from autoport import __version__
from autoport.brands.registry import install_brands
from autoport.config import Settings, ensure_secrets
from autoport.health.routes import router as health_router
from autoport.kit import openapi
from autoport.kit.clock import Clock
from autoport.kit.db import create_database
from autoport.kit.environments import Environment, EnvironmentRouter
from autoport.kit.errors import install_error_handlers
from autoport.kit.middleware import RequestPipeline
from autoport.kit.state import AppState, serving
from autoport.oauth.bearer import make_authenticator
from autoport.sandbox.source import install_behaviour as install_sandbox_behaviour

# Background work started with the app (workers of webhooks, streaming, fleet, sandbox).
# Each takes the AppState and runs until cancelled.
BackgroundTask = Callable[[AppState], contextlib.AbstractAsyncContextManager[None]]


def feature_routers() -> Sequence[APIRouter]:
    """Every feature's router, in one place. Imported here so that `autoport.app` stays
    cheap to import for the CLI."""
    from autoport.apidocs.routes import router as apidocs_router
    from autoport.apps.routes import router as apps_router
    from autoport.consent.routes import consent_router
    from autoport.eligibility.routes import router as eligibility_router
    from autoport.fleet.admin_routes import router as fleet_admin_router
    from autoport.fleet.routes import router as fleet_router
    from autoport.ingestion.routes import router as ingestion_router
    from autoport.oauth.routes import router as oauth_router
    from autoport.sandbox.routes import router as sandbox_router
    from autoport.streaming.routes import router as streaming_router
    from autoport.vehicle_data.routes import router as vehicle_data_router
    from autoport.webhooks.routes import router as webhooks_router

    # The vehicle data pull is the hottest route: matched first.
    return [
        vehicle_data_router,
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
        apidocs_router,
    ]


def hot_routes() -> Sequence[Route]:
    """Routes answered before FastAPI (autoport.kit.routing.HotRoute)."""
    from autoport.vehicle_data.routes import hot_routes as vehicle_data_hot_routes

    return [*vehicle_data_hot_routes]


class AppRouter(Router):
    """What answers a request once the pipeline has done its cross-cutting work: the hot
    routes first, then FastAPI mounted at the root for everything else (a method a hot
    route does not answer on its path, such as POST on the pull, goes on to FastAPI's
    405 too). The lifespan is FastAPI's."""

    def __init__(self, hot: Sequence[Route], api: ASGIApp) -> None:
        super().__init__(routes=[*hot, Mount("", app=api)])
        self.api = api

    async def lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.api(scope, receive, send)


def background_tasks() -> Sequence[BackgroundTask]:
    from autoport.consent.tasks import session_purger
    from autoport.fleet.tasks import fleet_worker
    from autoport.oauth.tasks import housekeeping
    from autoport.sandbox.tasks import sandbox_runner
    from autoport.streaming.tasks import streaming_worker
    from autoport.vehicle_data.tasks import history_pruner
    from autoport.webhooks.tasks import webhook_worker

    return [
        housekeeping,
        history_pruner,
        fleet_worker,
        streaming_worker,
        session_purger,
        sandbox_runner,
        webhook_worker,
    ]


class AutoportAPI(FastAPI):
    """The app as served: RequestPipeline(AppRouter(hot routes, FastAPI)). The pipeline is
    the outermost layer, so every request, hot route or not, gets its environment, id,
    metrics, input limits and last-resort 500 there; the object itself stays the
    FastAPI app (state, lifespan, OpenAPI)."""

    pipeline: RequestPipeline

    def openapi(self) -> dict[str, Any]:
        return self.openapi_for(Environment.production)

    def openapi_for(self, environment: Environment) -> dict[str, Any]:
        """The OpenAPI document as `environment` serves it, built on first use (the
        routes do not change once the app is made; autoport.kit.openapi)."""
        documents: dict[Environment, dict[str, Any]] = self.__dict__.setdefault("_documents", {})
        if environment not in documents:
            if self.openapi_schema is None:
                self.openapi_schema = openapi.build(self)
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


def create_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    run_background: bool = True,
) -> FastAPI:
    settings, _ = ensure_secrets(settings or Settings())
    database = create_database(
        settings.resolved_database_url,
        schema=settings.database_schema,
        pool_size=settings.database_pool_size,
    )
    state = AppState(settings=settings, database=database, clock=clock or Clock())
    install_brands(state)
    install_sandbox_behaviour(state)  # the sandbox connector asks the emulator per vehicle

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await database.connect()
        try:
            async with contextlib.AsyncExitStack() as stack:
                stack.enter_context(serving(state))
                if run_background:
                    for task in background_tasks():
                        await stack.enter_async_context(task(state))
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
    install_error_handlers(app)
    for router in feature_routers():
        app.include_router(router)
    app.pipeline = RequestPipeline(
        AppRouter(hot_routes(), app.framework),
        environments=EnvironmentRouter.from_settings(settings),
        access_log=settings.access_log,
        max_body_bytes=settings.max_body_bytes,
        max_header_bytes=settings.max_header_bytes,
    )
    return app
