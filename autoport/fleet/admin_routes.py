"""The operator's side of fleet clearance (admin token): the pending clearances of
push-fed brands, and approving or rejecting them (autoport.fleet.decisions). Per
environment like every admin path."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request
from starlette.responses import Response

from autoport.brands.registry import registry_of
from autoport.catalog.brands import canonical_brand
from autoport.fleet import decisions
from autoport.fleet.schemas import PendingClearance, PendingClearanceList
from autoport.kit.auth import AdminDep
from autoport.kit.environments import EnvironmentDep
from autoport.kit.errors import ApiError
from autoport.kit.routing import api_router, json_response
from autoport.kit.state import StateDep

router = api_router(prefix="/admin/v1/fleet/clearances", tags=["fleet clearance (admin)"])


@router.get(
    "",
    summary="Pending clearances awaiting a decision",
    responses={200: {"model": PendingClearanceList}},
)
async def list_pending(
    state: StateDep,
    environment: EnvironmentDep,
    _: AdminDep,
    brand: Annotated[str | None, Query(description="Only this brand.")] = None,
    limit: Annotated[int | None, Query()] = None,
    cursor: Annotated[str | None, Query()] = None,
) -> Response:
    """Clearances of push-fed brands (no carmaker connector decides them) still
    pending, oldest first; page on with `cursor` = the answer's `next_cursor`."""
    brands = None
    if brand is not None:
        canonical = canonical_brand(brand)
        if canonical is None:
            raise ApiError(422, f"brand: unknown brand {brand!r}", source="brand")
        brands = [canonical]
    return json_response(
        await decisions.list_pending(
            state.database.reader,
            registry_of(state),
            environment=environment,
            brands=brands,
            limit=limit,
            cursor=cursor,
        )
    )


async def _decide(
    request: Request,
    state: StateDep,
    environment: EnvironmentDep,
    app_id: str,
    vin: str,
    *,
    approve: bool,
) -> Response:
    reason = decisions.reason_of(await request.body())
    async with state.database.transaction() as conn:
        decided = await decisions.decide(
            conn,
            registry_of(state),
            environment=environment,
            application_id=app_id,
            vin=vin,
            approve=approve,
            reason=reason,
            brands=None,
            now_us=state.clock.now_us(),
        )
    return json_response(decided)


@router.post(
    "/{app_id}/{vin}/approve",
    summary="Approve a pending clearance",
    responses={200: {"model": PendingClearance}},
)
async def approve(
    request: Request,
    app_id: str,
    vin: str,
    state: StateDep,
    environment: EnvironmentDep,
    _: AdminDep,
) -> Response:
    """The operator, speaking for the carmaker, approves: the application may read the
    vehicle. Body optional: `{"reason": "..."}` (the changelog's and webhook's detail)."""
    return await _decide(request, state, environment, app_id, vin, approve=True)


@router.post(
    "/{app_id}/{vin}/reject",
    summary="Reject a pending clearance",
    responses={200: {"model": PendingClearance}},
)
async def reject(
    request: Request,
    app_id: str,
    vin: str,
    state: StateDep,
    environment: EnvironmentDep,
    _: AdminDep,
) -> Response:
    """The operator rejects; body optional: `{"reason": "..."}`."""
    return await _decide(request, state, environment, app_id, vin, approve=False)
