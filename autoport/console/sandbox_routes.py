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
from fastapi import Header, Request
from pydantic import BaseModel, ValidationError
from starlette.responses import HTMLResponse, Response, StreamingResponse

from autoport.catalog.validation import FAILURE_REASONS
from autoport.console import access, live, pages, service
from autoport.console.access import Principal, console_router
from autoport.console.routes import errors_of
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit import jsonlimit
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError, validation_items
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
from autoport.streaming.service import StreamHub

router = console_router()

# Properties a developer most often sets by hand (the form takes any catalog key).
COMMON_PROPERTIES = (
    "charging.battery_level",
    "diagnostics.fuel_level",
    "diagnostics.odometer",
    "doors.locks_state",
    "vehicle_location.coordinates",
)


async def _sandbox_account(request: Request, account_id: str) -> tuple[Principal, Any]:
    """The account page, in the sandbox console only (production has no simulator)."""
    principal, account = await access.account_page(request, account_id)
    _, environment = access.where(request)
    if environment is not Environment.sandbox:
        raise access.not_found()
    return principal, account


async def _vehicle(request: Request, principal: Principal, account_id: str, vin: str) -> VehicleRow:
    """The account's vehicle; another account's (or the operator's) is a 404 page."""
    state, _ = access.where(request)
    try:
        return await sandbox.get_account_vehicle(state.database.reader, vin, account_id)
    except ApiError:
        raise access.not_found() from None


def _checked(model: type[BaseModel], values: dict[str, Any]) -> Any:
    """The form as the admin API's body model validates it; its errors as an ApiError
    naming the field, with the API's message."""
    try:
        return model.model_validate(values)
    except ValidationError as error:
        _, items = validation_items(error.errors())
        first = items[0]
        raise ApiError(422, first.detail, source=first.source) from None


def _number(form: dict[str, str], name: str) -> str | None:
    value = form.get(name, "").strip()
    return value or None


def _checkbox(form: dict[str, str], name: str) -> bool:
    return form.get(name) in ("1", "on", "true")


async def _audit(
    request: Request,
    principal: Principal,
    account_id: str,
    action: str,
    vin: str,
    detail: dict[str, Any] | None = None,
) -> None:
    state, environment = access.where(request)
    async with state.database.transaction() as conn:
        await service.audit(
            conn,
            environment=environment,
            account_id=account_id,
            actor=principal.actor,
            actor_label=principal.label,
            action=action,
            target=vin,
            detail=detail,
            address=access.address_of(request),
            now_us=state.clock.now_us(),
        )


# ------------------------------------------------------------------------ list


def _list_page(
    request: Request,
    principal: Principal,
    account: Any,
    vehicles: list[VehicleRow],
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
) -> Response:
    return pages.render(
        request,
        principal,
        "sandbox_list.html",
        status=status,
        title="sandbox",
        account=account,
        account_id=account.id,
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
async def sandbox_list(request: Request, account_id: str) -> Response:
    principal, account = await _sandbox_account(request, account_id)
    state, _ = access.where(request)
    vehicles = await sandbox.list_account_vehicles(state.database.reader, account_id)
    return _list_page(request, principal, account, vehicles)


@router.post("/a/{account_id}/sandbox")
async def sandbox_create(request: Request, account_id: str) -> Response:
    principal, account = await _sandbox_account(request, account_id)
    form = await access.checked_form(request, principal)
    access.require_change(request, principal)
    state, _ = access.where(request)
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
                account_id=account_id,
            ),
            now_us=state.clock.now_us(),
        )
    except ApiError as error:
        vehicles = await sandbox.list_account_vehicles(state.database.reader, account_id)
        return _list_page(
            request, principal, account, vehicles,
            status=error.status, errors=errors_of(error), form=form,
        )  # fmt: skip
    await _audit(request, principal, account_id, "sandbox.create", vehicle.vin)
    return pages.see_other(
        pages.url(request, f"{access.PREFIX}/a/{account_id}/sandbox/{vehicle.vin}")
    )


# ---------------------------------------------------------------------- vehicle


def _latest(figures: dict[str, list[tuple[float, float]]]) -> dict[str, float | None]:
    return {name: (points[-1][1] if points else None) for name, points in figures.items()}


async def _vehicle_page(
    request: Request,
    principal: Principal,
    account: Any,
    vehicle: VehicleRow,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
) -> Response:
    state, _ = access.where(request)
    now_us = state.clock.now_us()
    figures = (await charts.series(state.database, vehicle.vin, limit=1)).points
    code = await current_vehicle_code(
        state.database.reader, environment=ENVIRONMENT, vin=vehicle.vin, now_us=now_us
    )
    return pages.render(
        request,
        principal,
        "sandbox_vehicle.html",
        status=status,
        title="sandbox",
        account=account,
        account_id=account.id,
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
async def sandbox_vehicle(request: Request, account_id: str, vin: str) -> Response:
    principal, account = await _sandbox_account(request, account_id)
    vehicle = await _vehicle(request, principal, account_id, vin)
    return await _vehicle_page(request, principal, account, vehicle)


@router.get("/a/{account_id}/sandbox/{vin}/track")
async def sandbox_track(request: Request, account_id: str, vin: str) -> Response:
    """The track figure alone (what each `track` event of `/events` carries)."""
    principal, account = await _sandbox_account(request, account_id)
    vehicle = await _vehicle(request, principal, account_id, vin)
    return pages.security_headers(
        HTMLResponse(await _track_html(request, principal, account.id, vehicle))
    )


async def _track_html(
    request: Request, principal: Principal, account_id: str, vehicle: VehicleRow
) -> str:
    state, _ = access.where(request)
    return pages.fragment(
        request,
        principal,
        "sandbox_track.html",
        account_id=account_id,
        vehicle=vehicle,
        track=await charts.track(state.database, vehicle.vin),
    )


@router.get("/a/{account_id}/sandbox/{vin}/series.json")
async def sandbox_series(request: Request, account_id: str, vin: str) -> Response:
    """The charts' points (unix seconds, value) stored after `after` (the previous
    answer's `after`, a position in the history); the newest kept points without it."""
    principal, _ = await _sandbox_account(request, account_id)
    vehicle = await _vehicle(request, principal, account_id, vin)
    state, _ = access.where(request)
    raw = request.query_params.get("after", "")
    after: int | None = None
    if raw:
        if not raw.isdigit() or len(raw) > 20:
            refusal = {"errors": [{"detail": "after: expected an integer", "source": "after"}]}
            return pages.security_headers(
                Response(orjson.dumps(refusal), status_code=400, media_type="application/json")
            )
        after = int(raw)
    figures = await charts.series(state.database, vehicle.vin, after_id=after)
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
    principal, account = await access.account_events(request, account_id)
    _, environment = access.where(request)
    if environment is not Environment.sandbox:
        raise access.not_found()
    vehicle = await _vehicle(request, principal, account_id, vin)
    state, _ = access.where(request)
    hub = state.part(StreamHub)
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
        track = await _track_html(request, principal, account.id, vehicle)
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


async def _change(request: Request, account_id: str, vin: str, action: str, apply: Any) -> Response:
    """One change of a vehicle: CSRF, role, the account's vehicle, the service call
    (`apply(state, vehicle, form)`), audit, back to the page; an error re-renders the
    page with the field's message."""
    principal, account = await _sandbox_account(request, account_id)
    form = await access.checked_form(request, principal)
    access.require_change(request, principal)
    vehicle = await _vehicle(request, principal, account_id, vin)
    state, _ = access.where(request)
    try:
        detail = await apply(state, vehicle, form)
    except ApiError as error:
        fresh = await _vehicle(request, principal, account_id, vin)
        # Under the form's field the error names, else above the form.
        errors = {
            f"{action}.{key if key in form else '_'}": message
            for key, message in errors_of(error).items()
        }
        return await _vehicle_page(
            request, principal, account, fresh, status=error.status, errors=errors, form=form
        )
    await _audit(request, principal, account_id, f"sandbox.{action}", vin, detail)
    if action == "delete":
        return pages.see_other(pages.url(request, f"{access.PREFIX}/a/{account_id}/sandbox"))
    return pages.see_other(pages.url(request, f"{access.PREFIX}/a/{account_id}/sandbox/{vin}"))


@router.post("/a/{account_id}/sandbox/{vin}/scenario")
async def sandbox_scenario(request: Request, account_id: str, vin: str) -> Response:
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

    return await _change(request, account_id, vin, "scenario", apply)


@router.post("/a/{account_id}/sandbox/{vin}/step")
async def sandbox_step(request: Request, account_id: str, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        body: StepRequest = _checked(StepRequest, {"seconds": _number(form, "seconds")})
        await sandbox.step_vehicle(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin,
            seconds=body.seconds, now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"seconds": body.seconds}

    return await _change(request, account_id, vin, "step", apply)


@router.post("/a/{account_id}/sandbox/{vin}/properties")
async def sandbox_set_property(request: Request, account_id: str, vin: str) -> Response:
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

    return await _change(request, account_id, vin, "property", apply)


@router.post("/a/{account_id}/sandbox/{vin}/properties/clear")
async def sandbox_clear_property(request: Request, account_id: str, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        key = form.get("key", "").strip()
        await sandbox.clear_property(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin, key=key,
            now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"key": key}

    return await _change(request, account_id, vin, "clear", apply)


@router.post("/a/{account_id}/sandbox/{vin}/failures")
async def sandbox_failure(request: Request, account_id: str, vin: str) -> Response:
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

    return await _change(request, account_id, vin, "failure", apply)


@router.post("/a/{account_id}/sandbox/{vin}/failures/clear")
async def sandbox_clear_failure(request: Request, account_id: str, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> dict[str, Any]:
        key = form.get("key", "").strip()
        await sandbox.clear_failure(
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin, key=key,
            now_us=state.clock.now_us(),
        )  # fmt: skip
        return {"key": key}

    return await _change(request, account_id, vin, "clear_failure", apply)


@router.post("/a/{account_id}/sandbox/{vin}/behaviour")
async def sandbox_behaviour(request: Request, account_id: str, vin: str) -> Response:
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
            state.database, ingest=ingest_vehicle_data, vin=vehicle.vin,
            now_us=state.clock.now_us(), offline=body.offline,
            latency_seconds=body.latency_seconds, eligible=body.eligible,
            connectivity_status=body.connectivity_status, privacy_mode=body.privacy_mode,
        )  # fmt: skip
        return body.model_dump(mode="json")

    return await _change(request, account_id, vin, "behaviour", apply)


@router.post("/a/{account_id}/sandbox/{vin}/delete")
async def sandbox_delete(request: Request, account_id: str, vin: str) -> Response:
    async def apply(state: Any, vehicle: VehicleRow, form: dict[str, str]) -> None:
        async with state.database.transaction() as conn:
            await sandbox.delete_vehicle(conn, vehicle.vin)

    return await _change(request, account_id, vin, "delete", apply)
