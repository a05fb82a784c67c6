"""The sandbox console's Sandbox vehicles page: an account's simulated cars (created here,
owned by the account: no other account sees them), their scenario, time scale, hand-set
properties, injected failures and behaviour (offline, latency, privacy mode), the
vehicle code of a consent flow, the position drawn as a track, and battery/fuel, speed
and odometer charts that follow the car live (Server-Sent Events from `/events`,
live.py: the new points as JSON and the track's figure; without script the page shows
the latest values as of its loading). Every change goes through autoport.sandbox.service,
as the admin API's does."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import Depends, Header, Request
from pydantic import BaseModel, ValidationError
from starlette.responses import HTMLResponse, Response, StreamingResponse

from autoport.catalog.validation import FAILURE_REASONS
from autoport.console import access, live, pages
from autoport.console.access import AccountPage, AccountPageDep, ChangeDep, console_router
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit import jsonlimit
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.proof.service import current_vehicle_code
from autoport.sandbox import charts
from autoport.sandbox import service as sandbox
from autoport.sandbox.physics import Powertrain, Scenario
from autoport.sandbox.repository import VehicleRow
from autoport.sandbox.schemas import (
    BehaviourChange,
    FailureSet,
    ScenarioChange,
    StepRequest,
    VehicleCreate,
)
from autoport.sandbox.service import CONNECTIVITY_STATUSES, ENVIRONMENT, NewVehicle
from autoport.sandbox.snapshot import PROFILES
from autoport.streaming.service import hub_of

router = console_router()

# Properties a developer most often sets by hand (the form takes any catalog key).
COMMON_PROPERTIES = (
    "charging.battery_level",
    "diagnostics.fuel_level",
    "diagnostics.odometer",
    "doors.locks_state",
    "vehicle_location.coordinates",
)


def _sandbox_only(page: AccountPage) -> AccountPage:
    """The sandbox console only (production has no simulator)."""
    if page.environment is not Environment.sandbox:
        raise access.not_found()
    return page


async def _sandbox_page(page: AccountPageDep) -> AccountPage:
    return _sandbox_only(page)


async def _sandbox_change(page: ChangeDep) -> AccountPage:
    return _sandbox_only(page)


SandboxPageDep = Annotated[AccountPage, Depends(_sandbox_page)]
SandboxChangeDep = Annotated[AccountPage, Depends(_sandbox_change)]


async def _vehicle(page: AccountPage, vin: str) -> VehicleRow:
    """The account's vehicle; another account's (or the operator's) is a 404 page."""
    try:
        return await sandbox.get_account_vehicle(page.state.database.reader, vin, page.account_id)
    except ApiError:
        raise access.not_found() from None


def _checked(model: type[BaseModel], values: dict[str, Any]) -> Any:
    """The form as the admin API's body model validates it (a ValidationError says what
    is wrong, page.errors words it)."""
    return model.model_validate(values)


def _number(form: dict[str, str], name: str) -> str | None:
    value = form.get(name, "").strip()
    return value or None


def _checkbox(form: dict[str, str], name: str) -> bool:
    return form.get(name) in ("1", "on", "true")


# ------------------------------------------------------------------------ list


def _list_page(
    page: AccountPage,
    vehicles: list[VehicleRow],
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
) -> Response:
    return page.render(
        "sandbox_list.html",
        status=status,
        title="sandbox",
        vehicles=vehicles,
        errors=errors or {},
        form=form
        or {
            "powertrain": "electric",
            "profile": "standard",
            "scenario": "driving",
            "time_scale": "1",
        },
        powertrains=[p.value for p in Powertrain],
        profiles=list(PROFILES),
        scenarios=[s.value for s in Scenario],
    )


@router.get("/a/{account_id}/sandbox")
async def sandbox_list(page: SandboxPageDep) -> Response:
    vehicles = await sandbox.list_account_vehicles(page.state.database.reader, page.account_id)
    return _list_page(page, vehicles)


@router.post("/a/{account_id}/sandbox")
async def sandbox_create(page: SandboxChangeDep) -> Response:
    form, state = page.form, page.state
    try:
        body: VehicleCreate = _checked(
            VehicleCreate,
            {
                "vin": form.get("vin", "").strip() or None,
                "name": form.get("name", "").strip() or None,
                "powertrain": form.get("powertrain") or "electric",
                "profile": form.get("profile") or "standard",
                "scenario": form.get("scenario") or "parked",
                "time_scale": _number(form, "time_scale") or 1.0,
            },
        )
        vehicle = await sandbox.create_vehicle(
            state.database,
            ingest=ingest_vehicle_data,
            spec=NewVehicle(
                vin=body.vin,
                name=body.name,
                powertrain=body.powertrain,
                profile=body.profile,
                scenario=body.scenario,
                time_scale=body.time_scale,
                account_id=page.account_id,
            ),
            now_us=state.clock.now_us(),
        )
    except (ApiError, ValidationError) as error:
        vehicles = await sandbox.list_account_vehicles(state.database.reader, page.account_id)
        status = error.status if isinstance(error, ApiError) else 422
        return _list_page(page, vehicles, status=status, errors=page.errors(error), form=form)
    await page.audit(action="sandbox.create", target=vehicle.vin)
    return page.see_other(f"sandbox/{vehicle.vin}")


# ---------------------------------------------------------------------- vehicle


def _latest(figures: dict[str, list[tuple[float, float]]]) -> dict[str, float | None]:
    return {name: (points[-1][1] if points else None) for name, points in figures.items()}


async def _vehicle_page(
    page: AccountPage,
    vehicle: VehicleRow,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
) -> Response:
    state = page.state
    figures = (await charts.series(state.database, vehicle.vin, limit=1)).points
    code = await current_vehicle_code(
        state.database.reader, environment=ENVIRONMENT, vin=vehicle.vin, now_us=state.clock.now_us()
    )
    return page.render(
        "sandbox_vehicle.html",
        status=status,
        title="sandbox",
        vehicle=vehicle,
        latest=_latest(figures),
        track=await charts.track(state.database, vehicle.vin),
        vehicle_code=code,
        errors=errors or {},
        form=form or {},
        scenarios=[s.value for s in Scenario],
        failure_reasons=FAILURE_REASONS,
        connectivity_statuses=CONNECTIVITY_STATUSES,
        common_properties=COMMON_PROPERTIES,
        properties=vehicle.properties,
    )


@router.get("/a/{account_id}/sandbox/{vin}")
async def sandbox_vehicle(page: SandboxPageDep, vin: str) -> Response:
    return await _vehicle_page(page, await _vehicle(page, vin))


@router.get("/a/{account_id}/sandbox/{vin}/track")
async def sandbox_track(page: SandboxPageDep, vin: str) -> Response:
    """The track figure alone (what each `track` event of `/events` carries)."""
    vehicle = await _vehicle(page, vin)
    return pages.security_headers(HTMLResponse(await _track_html(page, vehicle)))


async def _track_html(page: AccountPage, vehicle: VehicleRow) -> str:
    return pages.fragment(
        page.request,
        page.principal,
        "sandbox_track.html",
        account_id=page.account_id,
        vehicle=vehicle,
        track=await charts.track(page.state.database, vehicle.vin),
    )


@router.get("/a/{account_id}/sandbox/{vin}/series.json")
async def sandbox_series(page: SandboxPageDep, vin: str) -> Response:
    """The charts' points (unix seconds, value) stored after `after` (the previous
    answer's `after`, a position in the history); the newest kept points without it."""
    vehicle = await _vehicle(page, vin)
    raw = page.request.query_params.get("after", "")
    after: int | None = None
    if raw:
        if not raw.isdigit() or len(raw) > 20:
            refusal = {"errors": [{"detail": "after: expected an integer", "source": "after"}]}
            return pages.security_headers(
                Response(orjson.dumps(refusal), status_code=400, media_type="application/json")
            )
        after = int(raw)
    figures = await charts.series(page.state.database, vehicle.vin, after_id=after)
    body = orjson.dumps({"vin": vehicle.vin, "series": figures.points, "after": figures.last_id})
    return pages.security_headers(Response(body, media_type="application/json"))


@router.get("/a/{account_id}/sandbox/{vin}/events")
async def sandbox_events(
    request: Request,
    account_id: str,
    vin: str,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> Response:
    """The car's live data as Server-Sent Events: `event: series` (series.json's body:
    the points stored since the last event, the newest kept points first) and
    `event: track` (the track's figure), `id:` the position in the history, for any
    role that sees the account, while the session lasts (live.py)."""
    page = _sandbox_only(await access.account_events(request, account_id))
    vehicle = await _vehicle(page, vin)
    state = page.state
    hub = hub_of(state)
    after = live.last_event_id(last_event_id)
    first = True

    async def produce() -> bytes:
        nonlocal after, first
        figures = await charts.series(state.database, vehicle.vin, after_id=after)
        if not first and figures.last_id == (after or 0):
            return b""
        first = False
        after = figures.last_id
        body = {"vin": vehicle.vin, "series": figures.points, "after": figures.last_id}
        track = await _track_html(page, vehicle)
        return live.event("series", orjson.dumps(body).decode(), after) + live.event("track", track)

    body = live.follow(
        state,
        still_allowed=lambda: access.still_sees(request, account_id),
        produce=produce,
        # The simulator's data reaches stream messages when an application has the car;
        # otherwise the poll finds it.
        waiter=hub.any_waiter,
    )
    return pages.security_headers(
        StreamingResponse(body, media_type="text/event-stream", headers=live.HEADERS)
    )


async def _change(page: AccountPage, vin: str, action: str, apply: Any) -> Response:
    """One change of a vehicle (the form checked and the role by the dependency): the
    account's vehicle, the service call (`apply(state, vehicle, form)`), audit, back to
    the page; an error shows the page again with the field's message."""
    vehicle = await _vehicle(page, vin)
    try:
        detail = await apply(page.state, vehicle, page.form)
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        fresh = await _vehicle(page, vin)
        # Under the form's field the error names, else above the form.
        errors = {
            f"{action}.{key if key in page.form else '_'}": message
            for key, message in page.errors(error).items()
        }
        return await _vehicle_page(page, fresh, status=status, errors=errors, form=page.form)
    await page.audit(action=f"sandbox.{action}", target=vin, detail=detail)
    if action == "delete":
        return page.see_other("sandbox")
    return page.see_other(f"sandbox/{vin}")


@router.post("/a/{account_id}/sandbox/{vin}/scenario")
async def sandbox_scenario(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        body: ScenarioChange = _checked(
            ScenarioChange,
            {
                "scenario": form.get("scenario") or None,
                "time_scale": _number(form, "time_scale"),
                "running": _checkbox(form, "running"),
                "reset": _checkbox(form, "reset"),
            },
        )
        await sandbox.set_scenario(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin,
            now_us=state.clock.now_us(), scenario=body.scenario, time_scale=body.time_scale,
            running=body.running, reset=body.reset,
        )  # fmt: skip
        return body.model_dump(mode="json", exclude_none=True)

    return await _change(page, vin, "scenario", apply)


@router.post("/a/{account_id}/sandbox/{vin}/step")
async def sandbox_step(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        body: StepRequest = _checked(StepRequest, {"seconds": _number(form, "seconds")})
        await sandbox.step_vehicle(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin,
            stepping=sandbox.sandbox_parts(state).stepping,
            seconds=body.seconds, now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"seconds": body.seconds}

    return await _change(page, vin, "step", apply)


@router.post("/a/{account_id}/sandbox/{vin}/properties")
async def sandbox_set_property(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        key = form.get("key", "").strip()
        text = form.get("value", "").strip()
        if not key:
            raise ApiError(422, "property: required, e.g. charging.battery_level", source="key")
        try:
            value = jsonlimit.loads(text)
        except orjson.JSONDecodeError:
            raise ApiError(
                422, f'{key}: not valid JSON (a number, "text" or an object)', source="value"
            ) from None
        await sandbox.set_properties(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin,
            values={key: value}, now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"key": key}

    return await _change(page, vin, "property", apply)


@router.post("/a/{account_id}/sandbox/{vin}/properties/clear")
async def sandbox_clear_property(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        key = form.get("key", "").strip()
        await sandbox.clear_property(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin, key=key,
            now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"key": key}

    return await _change(page, vin, "clear", apply)


@router.post("/a/{account_id}/sandbox/{vin}/failures")
async def sandbox_failure(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        key = form.get("key", "").strip()
        body: FailureSet = _checked(
            FailureSet,
            {"reason": form.get("reason", ""), "description": form.get("description") or None},
        )
        await sandbox.set_failure(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin, key=key,
            reason=body.reason, description=body.description, now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"key": key, "reason": body.reason}

    return await _change(page, vin, "failure", apply)


@router.post("/a/{account_id}/sandbox/{vin}/failures/clear")
async def sandbox_clear_failure(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        key = form.get("key", "").strip()
        await sandbox.clear_failure(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin, key=key,
            now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"key": key}

    return await _change(page, vin, "clear_failure", apply)


@router.post("/a/{account_id}/sandbox/{vin}/behaviour")
async def sandbox_behaviour(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        body: BehaviourChange = _checked(
            BehaviourChange,
            {
                "offline": _checkbox(form, "offline"),
                "latency_seconds": _number(form, "latency_seconds") or 0,
                "eligible": _checkbox(form, "eligible"),
                "connectivity_status": form.get("connectivity_status") or "activated",
                "privacy_mode": _checkbox(form, "privacy_mode"),
            },
        )
        await sandbox.set_behaviour(
            state.database, outcomes=sandbox.sandbox_parts(state).freshness,
            ingest=ingest_vehicle_data, vin=vehicle.vin,
            now_us=state.clock.now_us(), offline=body.offline,
            latency_seconds=body.latency_seconds, eligible=body.eligible,
            connectivity_status=body.connectivity_status, privacy_mode=body.privacy_mode,
        )  # fmt: skip
        return body.model_dump(mode="json")

    return await _change(page, vin, "behaviour", apply)


@router.post("/a/{account_id}/sandbox/{vin}/delete")
async def sandbox_delete(page: SandboxChangeDep, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> None:
        async with state.database.transaction() as conn:
            await sandbox.delete_vehicle(conn, vehicle.vin)

    return await _change(page, vin, "delete", apply)
