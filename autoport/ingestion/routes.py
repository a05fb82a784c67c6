"""The data providers' API: POST /v1/ingest pushes vehicle data (pull or streaming-v2
layout); /v1/ingest/clearances lists and decides the fleet clearances of the provider's
brands. Every call authenticates with the provider's secret."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from autoport.brands.registry import registry_of
from autoport.catalog.brands import MAKER_CODE_RULE, canonical_brand
from autoport.fleet import decisions
from autoport.fleet.schemas import PendingClearance, PendingClearanceList
from autoport.ingestion import providers
from autoport.ingestion.schemas import IngestAnswer, IngestRejected
from autoport.ingestion.service import Delivery, IngestError, ingest_many
from autoport.kit import jsonlimit
from autoport.kit.environments import environment_of
from autoport.kit.errors import ApiError, ErrorItem, request_id_of
from autoport.kit.openapi import PROVIDER_SECURITY
from autoport.kit.routing import api_router, documented, is_json_content_type, json_response
from autoport.kit.state import state_of

router = api_router(tags=["ingestion"])

# Members of a vehicle in the pull layout that are not capability groups.
_ENVELOPE = frozenset({"vin", "brand", "request_id"})


async def _provider(request: Request) -> providers.Provider:
    header = request.headers.get("authorization", "")
    scheme, _, secret = header.partition(" ")
    challenge = {"WWW-Authenticate": 'Bearer realm="ingest"'}
    if scheme.lower() != "bearer" or not secret.strip():
        raise ApiError(
            401,
            "ingestion needs 'Authorization: Bearer <provider secret>'",
            source="Authorization",
            headers=challenge,
        )
    state = state_of(request)
    provider = await providers.authenticate_provider(
        state.database,
        key=state.token_key,
        environment=environment_of(request),
        secret=secret.strip(),
    )
    if provider is None:
        raise ApiError(
            401,
            "the provider secret is unknown, revoked, or of the other environment",
            source="Authorization",
            headers=challenge,
        )
    return provider


def _provider_brand(provider: providers.Provider, brand: str | None, where: str) -> str | None:
    """A provider that speaks for brands pushes only theirs (data stored for a brand is
    what that brand's grants and clearances read); without a brand in the body, its only
    brand. A provider of no brand pushes as before."""
    if not provider.brands:
        return brand
    if brand is None:
        if len(provider.brands) == 1:
            return provider.brands[0]
        raise IngestError(
            f"{where}brand", f"required: the provider pushes for {', '.join(provider.brands)}"
        )
    if canonical_brand(brand) not in provider.brands:
        raise IngestError(
            f"{where}brand",
            f"{brand!r} is not a brand of this provider ({', '.join(provider.brands)})",
        )
    return brand


def _vehicles(body: Any) -> list[Any]:
    if isinstance(body, list):
        return body
    if isinstance(body, dict) and "vehicles" in body and "vin" not in body:
        vehicles = body["vehicles"]
        if not isinstance(vehicles, list):
            raise ApiError(422, "vehicles: expected an array of vehicles", source="vehicles")
        return vehicles
    if isinstance(body, dict):
        return [body]
    raise ApiError(
        422, 'the body must be a vehicle object, an array of them, or {"vehicles": [...]}'
    )


def _layout(item: dict[str, Any], where: str) -> tuple[Any, str]:
    """The capability data of one vehicle and the path prefix of its errors. `data` is
    not a capability, so a vehicle holding it (or `version`) is in the streaming layout."""
    if "version" in item or "data" in item:
        if item.get("version", 2) != 2:
            raise IngestError(f"{where}version", "only streaming schema version 2 is accepted")
        return item.get("data"), f"{where}data."
    return {k: v for k, v in item.items() if k not in _ENVELOPE}, where


def _refused(vin: object, error: IngestError, where: str) -> dict[str, Any]:
    """A vehicle refused as a whole: its answer, the source naming the field in the body."""
    source = error.source if error.source.startswith(where) else where + error.source
    return {
        "vin": vin if isinstance(vin, str) else None,
        "brand": None,
        "accepted": [],
        "rejected": [{"source": source, "reason": error.message}],
    }


@router.post(
    "/v1/ingest",
    summary="Push vehicle data (data providers)",
    responses={
        200: {
            "description": "Per vehicle, the accepted and the rejected data points",
            "model": IngestAnswer,
        },
        401: {"description": "Missing, unknown or revoked provider secret"},
        409: {
            "description": "Nothing accepted: each vehicle names a brand its stored data "
            "does not allow this provider to set (a VIN re-registered under another brand "
            "is rebranded by the operator)",
            "model": IngestRejected,
        },
        413: {"description": "Body over the configured size limit"},
        422: {
            "description": "Nothing in the body could be accepted (a brand the VIN's "
            "manufacturer code contradicts among the reasons)",
            "model": IngestRejected,
        },
    },
    openapi_extra={"security": PROVIDER_SECURITY},
)
@documented(MAKER_CODE_RULE)
async def ingest(request: Request) -> Response:
    """Store data points of one or many vehicles, validated against the level-13 catalog.

    The body is one vehicle in the pull-response layout (`{"vin", "brand", <capability>:
    {...}}`) or the streaming-v2 layout (`{"version": 2, "vin", "brand"?, "data": {...}}`),
    an array of such vehicles, or `{"vehicles": [...]}`. Every valid data point is
    stored (in one transaction); invalid ones are listed with the reason and never stored.

    The brand: a provider pushes only for its own brands, a brand the VIN's maker code
    contradicts is refused (`brand`, 422; the rule below), and a vehicle stored for a
    brand the provider does not speak for keeps it (`brand`, 409 when that is all the
    body holds): a VIN re-registered under another brand is rebranded by the operator
    (`autoport vehicles rebrand`), which starts a new document.
    """
    provider = await _provider(request)
    content_type = request.headers.get("content-type", "")
    if not is_json_content_type(content_type):
        raise ApiError(
            415,
            f"Content-Type must be application/json, got {content_type or 'none'}",
            source="Content-Type",
        )
    try:
        raw = await request.body()
    except ClientDisconnect:
        # The sender went away mid-body: nothing was stored, nobody is left to answer.
        return Response(status_code=400)
    try:
        body = jsonlimit.loads(raw)
    except orjson.JSONDecodeError as error:
        raise ApiError(
            400, f"the body is not valid JSON: {error}", title="Malformed JSON"
        ) from None
    vehicles = _vehicles(body)
    state = state_of(request)
    environment = environment_of(request)
    now = state.clock.now_us()
    conflicts = 0  # rejections of a brand the stored one does not allow (409)
    maker_codes = registry_of(state).maker_codes
    multi = len(vehicles) != 1 or isinstance(body, list) or "vehicles" in body
    # Each vehicle checked on its own first; the valid ones stored together, in order.
    results: list[dict[str, Any] | None] = []
    deliveries: list[Delivery] = []
    places: list[tuple[int, str, str]] = []  # (index in results, where, prefix)
    for index, item in enumerate(vehicles):
        where = f"vehicles[{index}]." if multi else ""
        vin = item.get("vin") if isinstance(item, dict) else None
        try:
            if not isinstance(item, dict):
                raise IngestError(where.rstrip(".") or "body", "expected a vehicle object")
            if not isinstance(vin, str):
                raise IngestError(f"{where}vin", "required, a string of 17 characters")
            data, prefix = _layout(item, where)
            if not isinstance(data, dict):
                raise IngestError(
                    prefix.rstrip(".") or "body", "expected an object of capabilities"
                )
            brand = item.get("brand")
            if brand is not None and not isinstance(brand, str):
                raise IngestError(f"{where}brand", "expected a string")
            brand = _provider_brand(provider, brand, where)
        except IngestError as error:
            results.append(_refused(vin, error, where))
            continue
        places.append((len(results), where, prefix))
        results.append(None)
        deliveries.append(Delivery(vin, brand, data))
    if deliveries:
        async with state.database.transaction() as conn:
            reports = await ingest_many(
                conn,
                environment=environment,
                deliveries=deliveries,
                now_us=now,
                source=f"provider:{provider.id}",
                speaks_for=provider.brands,
                maker_codes=maker_codes,
            )
        for (index, where, prefix), delivery, report in zip(
            places, deliveries, reports, strict=True
        ):
            if isinstance(report, IngestError):
                if report.status == 409:
                    conflicts += 1
                results[index] = _refused(delivery.vin, report, where)
                continue
            result = report.as_dict()
            for rejection in result["rejected"]:
                rejection["source"] = prefix + rejection["source"]
            results[index] = result
    answers = [r for r in results if r is not None]
    accepted = sum(len(r["accepted"]) for r in answers)
    rejected = sum(len(r["rejected"]) for r in answers)
    content = {
        "request_id": request_id_of(request),
        "accepted_count": accepted,
        "rejected_count": rejected,
        "vehicles": answers,
    }
    if accepted == 0 and rejected > 0:
        # Only refusals: 409 when each is a brand the stored vehicle does not allow (the
        # body is valid; what is stored decides), 422 otherwise.
        conflict = conflicts == rejected
        title = "Conflict" if conflict else "Invalid data point"
        items = [
            ErrorItem(title, f"{r['source']}: {r['reason']}", r["source"]).as_dict()
            for result in answers
            for r in result["rejected"]
        ]
        return json_response({"errors": items, **content}, status_code=409 if conflict else 422)
    return json_response(content)


# ------------------------------------------------------ clearances the provider decides


@router.get(
    "/v1/ingest/clearances",
    summary="Pending clearances of the provider's brands",
    responses={200: {"model": PendingClearanceList}},
    openapi_extra={"security": PROVIDER_SECURITY},
)
async def pending_clearances(
    request: Request, limit: int | None = None, cursor: str | None = None
) -> Response:
    """Fleet clearances applications asked for vehicles of the provider's brands, still
    awaiting its decision, oldest first (`next_cursor` pages on). A provider of no brand
    sees none."""
    provider = await _provider(request)
    state = state_of(request)
    return json_response(
        await decisions.list_pending(
            state.database.reader,
            registry_of(state),
            environment=provider.environment,
            brands=provider.brands,
            limit=limit,
            cursor=cursor,
        )
    )


async def _decide(request: Request, application_id: str, vin: str, *, approve: bool) -> Response:
    provider = await _provider(request)
    state = state_of(request)
    reason = decisions.reason_of(await request.body())
    async with state.database.transaction() as conn:
        decided = await decisions.decide(
            conn,
            registry_of(state),
            environment=provider.environment,
            application_id=application_id,
            vin=vin,
            approve=approve,
            reason=reason,
            brands=provider.brands,
            now_us=state.clock.now_us(),
        )
    return json_response(decided)


@router.post(
    "/v1/ingest/clearances/{application_id}/{vin}/approve",
    summary="Approve a clearance (data providers)",
    responses={200: {"model": PendingClearance}},
    openapi_extra={"security": PROVIDER_SECURITY},
)
async def approve_clearance(request: Request, application_id: str, vin: str) -> Response:
    """The provider knows the vehicle and lets the application read it. Only clearances
    of the provider's brands (others: 404); 409 when not pending. Body optional:
    `{"reason": "..."}`."""
    return await _decide(request, application_id, vin, approve=True)


@router.post(
    "/v1/ingest/clearances/{application_id}/{vin}/reject",
    summary="Reject a clearance (data providers)",
    responses={200: {"model": PendingClearance}},
    openapi_extra={"security": PROVIDER_SECURITY},
)
async def reject_clearance(request: Request, application_id: str, vin: str) -> Response:
    """The provider refuses; body optional: `{"reason": "..."}` (sent to the application
    as the webhook's `detail`)."""
    return await _decide(request, application_id, vin, approve=False)
