"""Operations endpoints, the same in both environments: liveness, readiness, metrics."""

from __future__ import annotations

import structlog
from fastapi import APIRouter, Request
from starlette.responses import Response

from autoport import __version__
from autoport.health.queues import queue_families
from autoport.history.migration import metric_families as migration_families
from autoport.kit.db import DatabaseUnavailable
from autoport.kit.environments import EnvironmentDep, public_base_url
from autoport.kit.errors import RETRY_AFTER_SECONDS, ApiError
from autoport.kit.metrics import exposition
from autoport.kit.migrate import expected_heads, is_current
from autoport.kit.routing import json_response
from autoport.kit.state import StateDep, database_of

log = structlog.get_logger("autoport.health")

router = APIRouter(include_in_schema=False)


@router.get("/")
async def service_info(environment: EnvironmentDep, state: StateDep) -> Response:
    """Which service and environment answered; handy to check host/prefix routing."""
    return json_response(
        {
            "service": "autoport",
            "version": __version__,
            "environment": str(environment),
            "base_url": public_base_url(state.settings, environment),
        }
    )


@router.get("/healthz")
async def healthz() -> Response:
    """The process is alive and serving (HEAD too, as every GET route: load balancers
    probe with it; see kit.middleware)."""
    return json_response({"status": "ok"})


@router.get("/readyz")
async def readyz(request: Request) -> Response:
    """The database answers and its schema is at the version this code expects."""
    db = database_of(request)
    retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    try:
        await db.fetch_value("SELECT 1")
    except Exception as error:
        cause = error.__cause__ if isinstance(error, DatabaseUnavailable) else error
        raise ApiError(
            503,
            f"database unreachable: {type(cause).__name__}",
            title="Not Ready",
            source="database",
            headers=retry,
        ) from error
    if not await is_current(db):
        raise ApiError(
            503,
            "database migrations are not current; run `autoport migrate`",
            title="Not Ready",
            source="migrations",
            headers=retry,
        )
    return json_response({"status": "ready", "migrations": sorted(expected_heads())})


@router.get("/metrics")
async def metrics(state: StateDep) -> Response:
    """This process's metrics, or every process's on the host in multiprocess mode
    (autoport.kit.metrics), and the deployment's queue depths and history migration
    progress from the database."""
    try:
        families = await queue_families(state.database, now_us=state.clock.now_us())
        families += await migration_families(state.database)
    except Exception:
        # The process metrics still answer while the database is away (readyz says why).
        log.warning("queue depths unavailable for /metrics", exc_info=True)
        families = []
    body, content_type = exposition(families)
    return Response(body, media_type=content_type)
