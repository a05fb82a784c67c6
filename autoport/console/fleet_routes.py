"""The console's Fleet page: an application's fleet vehicles (status, tags, changelog),
filtered and paged like GET /v1/fleets/vehicles, added from a VIN list or a CSV upload
with one result per line, and removed. Every rule is the fleet service's
(autoport.fleet.service), acting for the application (`application_caller`)."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request
from starlette.responses import Response

from autoport.apps.schemas import Application
from autoport.catalog.brands import hyphenated
from autoport.console import access, pages, service
from autoport.console.access import Principal, console_router
from autoport.console.app_pages import (
    account_application,
    applications_for_picker,
    multipart_form,
)
from autoport.console.routes import errors_of
from autoport.fleet import service as fleet
from autoport.fleet.filters import parse_filter
from autoport.fleet.service import RowResult
from autoport.fleet.states import Status
from autoport.kit.errors import ApiError

router = console_router()

STATUSES = tuple(str(status) for status in Status)
# The filter form's fields -> the members of the API's filter document.
FILTER_FIELDS = ("status", "brand", "vin", "tag")


def filter_document(query: dict[str, str]) -> tuple[str | None, dict[str, str]]:
    """The filter form as the API's `filter` JSON (so the same parser checks it), and
    the values to show in the form again. `tag` is `name=value` (tags.contains)."""
    shown = {name: query.get(name, "").strip()[:200] for name in FILTER_FIELDS}
    document: dict[str, Any] = {}
    if shown["status"]:
        document["status"] = {"eq": shown["status"]}
    if shown["brand"]:
        document["brand"] = {"eq": shown["brand"]}
    if shown["vin"]:
        document["vin"] = {"eq": shown["vin"]}
    if shown["tag"]:
        name, _, value = shown["tag"].partition("=")
        document["tags"] = {"contains": {name.strip(): value.strip()}}
    return (orjson.dumps(document).decode() if document else None), shown


def _filter_errors(error: ApiError) -> dict[str, str]:
    """An error of the filter parser under the form field it came from."""
    source = error.source or ""
    field = source.split(".")[1] if source.startswith("filter.") else "_"
    return {"tag" if field == "tags" else field: error.detail}


async def _page(
    request: Request,
    principal: Principal,
    account: Any,
    application: Application,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    results: list[RowResult] | None = None,
    vins: str = "",
    brand: str = "",
) -> Response:
    state, _ = access.where(request)
    query = dict(request.query_params)
    text, shown = filter_document(query)
    filter_errors: dict[str, str] = {}
    vehicles: list[dict[str, Any]] = []
    next_url = None
    try:
        page = await fleet.list_vehicles(
            state.database.reader,
            caller=fleet.application_caller(application),
            vehicle_filter=parse_filter(text),
            limit=state.settings.console_page_size,
            cursor=query.get("cursor") or None,
            cursor_key=state.token_key,
        )
        vehicles = page.vehicles
        if page.next_cursor:
            params = {k: v for k, v in shown.items() if v}
            params["cursor"] = page.next_cursor
            from urllib.parse import urlencode

            next_url = pages.url(request, request.url.path) + "?" + urlencode(params)
    except ApiError as error:
        filter_errors = _filter_errors(error) if error.source != "cursor" else {"_": error.detail}
        status = max(status, error.status)
    counts: dict[str, int] = {}
    for result in results or []:
        counts[result.status] = counts.get(result.status, 0) + 1
    return pages.render(
        request,
        principal,
        "fleet.html",
        status=status,
        title="fleet",
        account=account,
        account_id=account.id,
        application=application,
        vehicles=vehicles,
        next_url=next_url,
        filter=shown,
        filtered=any(shown.values()),
        filter_errors=filter_errors,
        statuses=STATUSES,
        brands=[hyphenated(b) for b in application.brands],
        errors=errors or {},
        results=results,
        result_counts=counts,
        vins=vins,
        brand=brand or (hyphenated(application.brands[0]) if application.brands else ""),
        max_rows=state.settings.fleet_max_vehicles_per_request,
    )


@router.get("/a/{account_id}/fleet")
async def fleet_index(request: Request, account_id: str) -> Response:
    """Pick the application whose fleet to show."""
    principal, account = await access.account_page(request, account_id)
    search = request.query_params.get("q")
    applications = await applications_for_picker(request, account_id, search)
    return pages.render(
        request,
        principal,
        "app_picker.html",
        title="fleet",
        account=account,
        account_id=account_id,
        applications=applications,
        search=search or "",
        heading="Fleet",
        page="fleet",
    )


@router.get("/a/{account_id}/fleet/{app_id}")
async def fleet_page(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    return await _page(request, principal, account, application)


@router.post("/a/{account_id}/fleet/{app_id}/add")
async def fleet_add(request: Request, account_id: str, app_id: str) -> Response:
    """Add the vehicles of the pasted list and/or the uploaded CSV; the page answers
    with one result per line (a bad line does not stop the others)."""
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    form = await multipart_form(request, principal)
    access.require_change(request, principal)
    state, environment = access.where(request)
    pasted = form.get("vins", "")
    uploaded = form.get("csv", "")
    brand = form.get("brand", "").strip()
    # The upload first: its header line (if any) must stay the first line.
    text = "\n".join(part for part in (uploaded.strip("\n"), pasted.strip("\n")) if part)
    now_us = state.clock.now_us()
    try:
        async with state.database.transaction() as conn:
            results = await fleet.add_vehicle_rows(
                conn,
                caller=fleet.application_caller(application),
                text=text,
                default_brand=brand or None,
                now_us=now_us,
                limit=state.settings.fleet_max_vehicles_per_request,
            )
    except ApiError as error:
        return await _page(
            request, principal, account, application,
            status=error.status, errors=errors_of(error), vins=pasted, brand=brand,
        )  # fmt: skip
    added = [r.vin for r in results if r.status != "error" and r.vin]
    async with state.database.transaction() as conn:
        await service.audit(
            conn,
            environment=environment,
            account_id=account_id,
            actor=principal.actor,
            actor_label=principal.label,
            action="fleet.add",
            target=application.id,
            detail={"requested": len(results), "vins": added[:50]},
            address=access.address_of(request),
            now_us=now_us,
        )
    return await _page(request, principal, account, application, results=results, brand=brand)


@router.post("/a/{account_id}/fleet/{app_id}/remove")
async def fleet_remove(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account_id, app_id)
    form = await access.checked_form(request, principal)
    access.require_change(request, principal)
    state, environment = access.where(request)
    vin = form.get("vin", "").strip()
    now_us = state.clock.now_us()
    try:
        async with state.database.transaction() as conn:
            await fleet.remove_vehicle(
                conn, caller=fleet.application_caller(application), vin=vin, now_us=now_us
            )
    except ApiError as error:
        return await _page(
            request, principal, account, application, status=error.status,
            errors={"remove": f"{vin}: {error.detail}" if vin else error.detail},
        )  # fmt: skip
    async with state.database.transaction() as conn:
        await service.audit(
            conn,
            environment=environment,
            account_id=account_id,
            actor=principal.actor,
            actor_label=principal.label,
            action="fleet.remove",
            target=f"{application.id}/{vin}",
            address=access.address_of(request),
            now_us=now_us,
        )
    return pages.see_other(
        pages.url(request, f"{access.PREFIX}/a/{account_id}/fleet/{application.id}")
    )
