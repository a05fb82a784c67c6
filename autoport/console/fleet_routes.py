"""The console's Fleet page: an application's fleet vehicles (status, tags, changelog),
filtered and paged like GET /v1/fleets/vehicles, added from a VIN list or a CSV upload
with one result per line, and removed. Every rule is the fleet service's
(autoport.fleet.service), acting for the application (`application_caller`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.responses import Response

from autoport.apps.schemas import Application
from autoport.catalog.brands import hyphenated
from autoport.console.access import AccountPage, AccountPageDep, ChangeDep, console_router
from autoport.console.app_pages import applications_for_picker, brand_choices
from autoport.fleet import service as fleet
from autoport.fleet.filters import parse_filter
from autoport.fleet.service import RowResult
from autoport.fleet.states import Status
from autoport.kit.errors import ApiError
from autoport.web import forms

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
    page: AccountPage,
    application: Application,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    vins: str = "",
    brand: str = "",
) -> Response:
    state = page.state
    query = dict(page.request.query_params)
    text, shown = filter_document(query)
    filter_errors: dict[str, str] = {}
    vehicles: list[dict[str, Any]] = []
    next_url = None
    try:
        found = await fleet.list_vehicles(
            state.database.reader,
            caller=fleet.application_caller(application),
            vehicle_filter=parse_filter(text),
            limit=state.settings.console_page_size,
            cursor=query.get("cursor") or None,
            cursor_key=state.token_key,
        )
        vehicles = found.vehicles
        if found.next_cursor:
            params = {k: v for k, v in shown.items() if v}
            params["cursor"] = found.next_cursor
            next_url = page.url(f"fleet/{application.id}") + "?" + urlencode(params)
    except ApiError as error:
        filter_errors = _filter_errors(error) if error.source != "cursor" else {"_": error.detail}
        status = max(status, error.status)
    # An upload's results: left by the POST that made them, shown this once.
    flashed = await page.flashed()
    results = [RowResult(**row) for row in flashed.get("results", [])] if flashed else None
    counts: dict[str, int] = {}
    for result in results or []:
        counts[result.status] = counts.get(result.status, 0) + 1
    return page.render(
        "fleet.html",
        status=status,
        title="fleet",
        application=application,
        vehicles=vehicles,
        next_url=next_url,
        filter=shown,
        filtered=any(shown.values()),
        filter_errors=filter_errors,
        statuses=STATUSES,
        brands=[(hyphenated(b), name) for b, name in brand_choices(application.brands)],
        errors=errors or {},
        results=results,
        result_counts=counts,
        vins=vins,
        brand=brand
        or flashed.get("brand", "")
        or (hyphenated(application.brands[0]) if application.brands else ""),
        max_rows=state.settings.fleet_max_vehicles_per_request,
    )


@router.get("/a/{account_id}/fleet")
async def fleet_index(page: AccountPageDep) -> Response:
    """Pick the application whose fleet to show."""
    search = page.request.query_params.get("q")
    applications = await applications_for_picker(page, search)
    return page.render(
        "app_picker.html",
        title="fleet",
        applications=applications,
        search=search or "",
        heading="Fleet",
        page="fleet",
    )


@router.get("/a/{account_id}/fleet/{app_id}")
async def fleet_page(page: AccountPageDep) -> Response:
    return await _page(page, page.application)


@router.post("/a/{account_id}/fleet/{app_id}/add")
async def fleet_add(page: ChangeDep) -> Response:
    """Add the vehicles of the pasted list and/or the uploaded CSV; the fleet page then
    shows one result per line (a bad line does not stop the others), once: a reload
    shows the fleet, it never adds the vehicles again."""
    application = page.application
    pasted = page.form.get("vins", "")
    uploaded = page.form.get("csv", "")
    brand = page.form.get("brand", "").strip()
    # The upload first: its header line (if any) must stay the first line.
    text = "\n".join(part for part in (uploaded.strip("\n"), pasted.strip("\n")) if part)
    try:
        async with page.state.database.transaction() as conn:
            results = await fleet.add_vehicle_rows(
                conn,
                caller=fleet.application_caller(application),
                text=text,
                default_brand=brand or None,
                now_us=page.state.clock.now_us(),
                limit=page.state.settings.fleet_max_vehicles_per_request,
            )
            added = [r.vin for r in results if r.status != "error" and r.vin]
            await page.audit(
                conn,
                action="fleet.add",
                target=application.id,
                detail={"requested": len(results), "vins": added[:50]},
            )
    except ApiError as error:
        return await _page(
            page, application, status=error.status, errors=page.errors(error),
            vins=pasted, brand=brand,
        )  # fmt: skip
    rows = [asdict(result) for result in results]
    return await page.flash(f"fleet/{application.id}", {"results": rows, "brand": brand})


@router.post("/a/{account_id}/fleet/{app_id}/remove")
async def fleet_remove(page: ChangeDep) -> Response:
    application = page.application
    vin = page.form.get("vin", "").strip()
    try:
        async with page.state.database.transaction() as conn:
            await fleet.remove_vehicle(
                conn,
                caller=fleet.application_caller(application),
                vin=vin,
                now_us=page.state.clock.now_us(),
            )
            await page.audit(conn, action="fleet.remove", target=f"{application.id}/{vin}")
    except ApiError as error:
        words = page.errors(error).get(forms.field_of(error.source), error.detail)
        errors = {"remove": f"{vin}: {words}" if vin else words}
        return await _page(page, application, status=error.status, errors=errors)
    return page.see_other(f"fleet/{application.id}")
