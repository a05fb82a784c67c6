"""GET /v1/vehicle-data/autoapi-13/{vin} and its history. Thin: authenticate, count
against the application's rate limit, call the service, answer bytes."""

from __future__ import annotations

from typing import Annotated, Protocol

from fastapi import Query, Request
from starlette.responses import Response

from autoport.kit.auth import Caller, CallerDep, current_caller
from autoport.kit.errors import ApiError, request_id_of
from autoport.kit.ratelimit import RateLimiter, Verdict
from autoport.kit.routing import HotRoute, JsonBytes, api_router, json_response
from autoport.kit.state import AppState, parts_of, state_of
from autoport.kit.usage import usage_of
from autoport.vehicle_data import service
from autoport.vehicle_data.schemas import history_response_schema, pull_response_schema

router = api_router(tags=["vehicle data"])

_ERRORS: dict[int | str, dict[str, str]] = {
    400: {"description": "Malformed VIN or query parameter (the detail names it)"},
    401: {"description": "Missing, invalid, expired or revoked token, or another environment's"},
    403: {
        "description": "No approved consent or fleet clearance for this VIN, pending, or "
        "outside the validity window; for the pull also a vehicle in privacy mode (title "
        "`Privacy Mode`: the owner switched data sharing off in the vehicle)"
    },
    408: {"description": "The vehicle is offline or asleep"},
    422: {"description": "Nothing is known of this vehicle yet (data pending)"},
    429: {"description": "Rate limit of the application exceeded (see Retry-After)"},
    500: {"description": "Unexpected error; quote the request_id"},
    503: {"description": "The carmaker's data source failed"},
    504: {"description": "The carmaker's data source did not answer in time"},
}


class VehicleDataParts(Protocol):
    """The parts the reads take (autoport.state.Parts; mypy checks it has them)."""

    @property
    def vehicle_data_limit(self) -> RateLimiter: ...


async def _rate_limit(state: AppState, caller: Caller) -> Verdict:
    # Per application, against vehicle_data_rate_limit.
    parts: VehicleDataParts = parts_of(state)
    verdict = await parts.vehicle_data_limit.hit(caller.application_id)
    if not verdict.allowed:
        usage_of(state).rate_limited(
            caller.environment.value, caller.application_id, state.clock.now_us()
        )
        headers = verdict.headers()
        raise ApiError(
            429,
            f"the application's rate limit of {verdict.limit} requests is used up; "
            f"retry in {headers['Retry-After']} s",
            headers=headers,
        )
    return verdict


PULL_PATH = "/v1/vehicle-data/autoapi-13/{vin}"


async def pull(request: Request, vin: str, caller: Caller) -> Response:
    state = state_of(request)
    verdict = await _rate_limit(state, caller)
    try:
        service.check_vin(vin)
        body = await service.pull(state, caller, vin, request_id_of(request))
    except ApiError as error:
        error.headers = {**verdict.headers(), **(error.headers or {})}
        raise
    # For the owner portal's "last read": an in-memory count, flushed off the request path.
    usage_of(state).read(caller, state.clock.now_us())
    return JsonBytes(body, verdict.raw_headers())


async def pull_endpoint(request: Request) -> Response:
    # Same authenticator as CallerDep, same errors, same answer as the FastAPI route.
    caller = await current_caller(request)
    return await pull(request, request.path_params["vin"], caller)


# The pull as a hot route: GET and HEAD are answered before FastAPI (autoport.app's
# AppRouter); the FastAPI route below, its twin, documents it in the OpenAPI description
# and answers the same (tests/vehicle_data/test_hot_route_twin.py).
hot_routes = [HotRoute(PULL_PATH, pull_endpoint, methods=["GET"])]


@router.get(
    PULL_PATH,
    summary="Latest data of a vehicle",
    responses={
        200: {
            "description": "Vehicle data response (level-13 capabilities)",
            "content": {"application/json": {"schema": pull_response_schema()}},
        },
        **_ERRORS,
    },
)
async def get_vehicle_data(vin: str, request: Request, caller: CallerDep) -> Response:
    """The latest known value of every property the token may read, grouped by capability:
    each a wrapper `{data, timestamp}` or `{failure, timestamp}`; array properties are
    arrays of wrappers. Needs the `vehicle:data` scope."""
    return await pull(request, vin, caller)


@router.get(
    "/v1/vehicle-data/autoapi-13/{vin}/history",
    summary="History of one property of a vehicle",
    responses={
        200: {
            "description": "Values, newest first, with a cursor",
            "content": {"application/json": {"schema": history_response_schema()}},
        },
        **_ERRORS,
    },
)
async def get_vehicle_data_history(
    vin: str,
    request: Request,
    caller: CallerDep,
    property: Annotated[
        str | None, Query(description="capability.property, e.g. charging.battery_level")
    ] = None,
    since: Annotated[str | None, Query(description="ISO 8601; values at or after")] = None,
    until: Annotated[str | None, Query(description="ISO 8601; values before")] = None,
    limit: Annotated[int | None, Query(description="1..1000, default 100")] = None,
    cursor: Annotated[str | None, Query(description="next_cursor of the previous page")] = None,
) -> Response:
    """Every accepted value of one property, newest first (same access rules as the
    pull). Follow `next_cursor` until it is null."""
    state = state_of(request)
    headers = (await _rate_limit(state, caller)).headers()
    try:
        service.check_vin(vin)
        content = await service.history(
            state,
            caller,
            vin,
            prop=property,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
            request_id=request_id_of(request),
        )
    except ApiError as error:
        error.headers = {**headers, **(error.headers or {})}
        raise
    usage_of(state).read(caller, state.clock.now_us())
    return json_response(content, headers=headers)
