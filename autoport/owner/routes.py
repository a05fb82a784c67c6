"""The owner portal's pages (`/owner`, in the sandbox `/sandbox/owner`): server-rendered,
no JavaScript, the consent pages' protections (HttpOnly SameSite cookie, CSRF token on
every form, strict CSP, 303 after every POST); and the admin API's revocation of a grant.

Routes stay thin: read the cookie and form, call the service, render or redirect. Errors
the owner sees are raised as `autoport.web.errors.PageError` and answered with the
portal's error page (`pages.error_page`, through the pages' router).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol
from urllib.parse import urlencode

import structlog
from fastapi import APIRouter, Request
from starlette.responses import Response

from autoport.brands.registry import registry_of
from autoport.kit.auth import AdminDep
from autoport.kit.crypto import new_token
from autoport.kit.environments import Environment, environment_of
from autoport.kit.errors import ApiError
from autoport.kit.ratelimit import RateLimiter, client_address
from autoport.kit.routing import api_router, json_response
from autoport.kit.state import AppState, parts_of
from autoport.owner import flows, pages, reads, service
from autoport.owner.schemas import RevokeResult
from autoport.owner.service import OwnerSession
from autoport.proof.flows import Step
from autoport.proof.service import Method
from autoport.web import forms, http, locale
from autoport.web.errors import PageError
from autoport.web.http import prefix
from autoport.web.http import see_other as _see_other

log = structlog.get_logger("autoport.owner")

COOKIE = pages.COOKIE
FORM_COOKIE = pages.FORM_COOKIE
BASE = pages.BASE

router = pages.router()
admin_router = api_router(tags=["admin"])


# ----------------------------------------------------------------------- helpers


def _state(request: Request) -> AppState:
    state: AppState = request.app.state.autoport
    return state


def _keys(state: AppState) -> tuple[bytes, bytes]:
    return state.token_key, state.session_key


_url = pages.url


def _secure(state: AppState) -> bool:
    return state.settings.base_url.startswith("https://")


def _set_cookie(request: Request, response: Response, name: str, value: str, seconds: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=seconds,
        path=prefix(request) + BASE,
        httponly=True,
        secure=_secure(_state(request)),
        samesite="lax",
    )


async def _session(request: Request, *, signed_in: bool = True) -> OwnerSession:
    """The request's live session of this environment (a cookie of another environment,
    forged, expired or signed out finds none)."""
    state = _state(request)
    key, _ = _keys(state)
    session = await service.load(
        state.database.reader,
        key=key,
        environment=environment_of(request),
        token=request.cookies.get(COOKIE),
        now_us=state.clock.now_us(),
    )
    if session is None:
        if not request.cookies.get(COOKIE):
            # A first visit (or a browser that never signed in here): nothing has ended.
            raise PageError("sign_in", 401)
        raise PageError("signed_out", 401, drop_cookie=True)
    if signed_in and not session.signed_in:
        raise PageError("signed_out", 401)  # the proof is not finished: the cookie stays
    lang = request.query_params.get("lang")
    if lang and lang in locale.LOCALES and lang != session.locale:
        async with state.database.transaction() as conn:
            await service.set_locale(conn, session, lang)
    return session


async def _checked_form(request: Request, cookie: str = COOKIE) -> dict[str, str]:
    state = _state(request)
    form = await forms.form(request)
    anchor = request.cookies.get(cookie, "")
    if not pages.CSRF.valid(state.session_key, anchor, form.get("csrf_token")):
        raise PageError("csrf", 403)
    return form


# ---------------------------------------------------------------------- sign-in


@router.get(BASE + "/" + pages.STYLESHEET)
async def owner_stylesheet() -> Response:
    return http.static(pages.SURFACE.stylesheet, pages.STYLESHEET)


def _sign_in_page(
    request: Request,
    *,
    form_value: str,
    status: int = 200,
    problem: service.FormProblem | None = None,
    brand: str = "",
    vin: str = "",
    chosen: str | None = None,
) -> Response:
    response = pages.render(
        request,
        "sign_in.html",
        chosen=chosen,
        csrf=pages.CSRF.token(_state(request).session_key, form_value),
        status=status,
        problem=problem,
        brands=service.brands_for(environment_of(request)),
        brand=brand,
        vin=vin,
    )
    if request.cookies.get(FORM_COOKIE) != form_value:
        _set_cookie(request, response, FORM_COOKIE, form_value, 3600)
    return response


@router.get(BASE)
async def sign_in_page(request: Request) -> Response:
    try:
        await _session(request)
    except PageError:
        pass
    else:
        return _see_other(_url(request, "vehicles"))
    prefill = request.query_params
    return _sign_in_page(
        request,
        form_value=request.cookies.get(FORM_COOKIE) or new_token(),
        brand=prefill.get("brand", ""),
        vin=prefill.get("vin", "")[:40],
    )


class OwnerParts(Protocol):
    """The parts the owner portal's sign-in takes (autoport.state.Parts; mypy checks it
    has them): its limiters per address and per VIN."""

    @property
    def owner_ip_limit(self) -> RateLimiter: ...
    @property
    def owner_vin_limit(self) -> RateLimiter: ...


async def _throttle(request: Request, state: AppState, vin: str) -> None:
    """Sign-ins per client address, then per VIN (the same for a VIN nobody knows)."""
    parts: OwnerParts = parts_of(state)
    checks = (
        (parts.owner_ip_limit, client_address(request)),
        (parts.owner_vin_limit, vin[:40]),
    )
    for limiter, subject in checks:
        verdict = await limiter.hit(subject)
        if not verdict.allowed:
            raise PageError("busy", 429, verdict.headers())


@router.post(BASE + "/sign-in")
async def sign_in_submit(request: Request) -> Response:
    state = _state(request)
    env = environment_of(request)
    form = await _checked_form(request, FORM_COOKIE)
    accept_language = request.headers.get("accept-language")
    words = locale.negotiate(form.get("locale"), accept_language=accept_language)
    vin_typed = form.get("vin", "")
    await _throttle(request, state, "".join(vin_typed.split()).upper())
    try:
        brand, vin = service.check_sign_in(
            env, form.get("brand"), vin_typed, maker_codes=registry_of(state).maker_codes
        )
    except service.FormProblem as problem:
        return _sign_in_page(
            request,
            form_value=request.cookies.get(FORM_COOKIE, ""),
            status=422,
            problem=problem,
            brand=form.get("brand", ""),
            vin=vin_typed[:40],
            chosen=words,
        )
    method = await flows.proof_method(state, env, brand=brand, vin=vin)
    if method is Method.owner_portal:
        return pages.render(request, "elsewhere.html", chosen=words, csrf="", brand=brand)
    started, shown = await flows.sign_in(
        state, env, brand=brand, vin=vin, method=method, locale=words,
        address=client_address(request),
    )  # fmt: skip
    target = "vehicles" if started.session.signed_in else "verify"
    if shown is not None and shown.notice == "unreachable":
        target = "verify?unreachable=1"
    elif shown is not None and shown.refused is not None:
        target = "verify?refused=1"
    response = _see_other(_url(request, target))
    _set_cookie(request, response, COOKIE, started.token, state.settings.owner_session_seconds)
    pages.drop_cookie(request, response, FORM_COOKIE)
    return response


def _verify_page(request: Request, session: OwnerSession, step: Step) -> Response:
    state = _state(request)
    return pages.render(
        request,
        "verify.html",
        session,
        status=step.status,
        headers=step.headers(state.clock.now_us()),
        method=str(session.method),
        verified=False,
        **{**step.page(), "request_sent": request.query_params.get("sent") == "1"},
    )


@router.get(BASE + "/verify")
async def verify_page(request: Request) -> Response:
    session = await _session(request, signed_in=False)
    if session.signed_in:
        return _see_other(_url(request, "vehicles"))
    step = await flows.refusal(_state(request), session, address=client_address(request))
    if request.query_params.get("unreachable"):
        step = Step(notice="unreachable", refused=step.refused)
    return _verify_page(request, session, step)


@router.post(BASE + "/verify")
async def verify_submit(request: Request) -> Response:
    state = _state(request)
    session = await _session(request, signed_in=False)
    form = await _checked_form(request)
    if session.signed_in:
        return _see_other(_url(request, "vehicles"))
    token = request.cookies.get(COOKIE, "")
    action = form.get("action", "")
    address = client_address(request)
    if action == "code" and session.method is Method.vehicle_code:
        step, new = await flows.check_code(
            state, session, form.get("code"), token=token, address=address
        )
        if new is not None:
            return _signed_in(request, state, new)
    elif action == "new_code" and session.method is Method.vehicle_code:
        step = await flows.new_code(state, session, token=token, address=address)
        if step.sent:
            return _see_other(_url(request, "verify") + "?sent=1")
    elif action == "oem_login" and session.method is Method.oem_login:
        step = await flows.carmaker_login(state, session, token=token, prefix=prefix(request))
        if step.go_to is not None:
            return _see_other(step.go_to)
    else:
        step = Step(status=400)
    return _verify_page(request, session, step)


def _signed_in(request: Request, state: AppState, token: str) -> Response:
    """Ownership proven: the rotated session token replaces the cookie."""
    response = _see_other(_url(request, "vehicles"))
    _set_cookie(request, response, COOKIE, token, state.settings.owner_session_seconds)
    return response


@router.get(BASE + "/oem-callback")
async def oem_callback(request: Request) -> Response:
    state = _state(request)
    session = await _session(request, signed_in=False)
    if session.signed_in:
        return _see_other(_url(request, "vehicles"))
    step, new = await flows.carmaker_returned(
        state, session, dict(request.query_params), token=request.cookies.get(COOKIE, "")
    )
    if new is None:
        return _verify_page(request, session, step)
    return _signed_in(request, state, new)


@router.post(BASE + "/sign-out")
async def sign_out(request: Request) -> Response:
    state = _state(request)
    session = await _session(request, signed_in=False)
    await _checked_form(request)
    async with state.database.transaction() as conn:
        await service.sign_out(conn, session)
    response = _see_other(_url(request, ""))
    pages.drop_cookie(request, response, COOKIE)
    return response


# ------------------------------------------------------------------------- vehicles


async def _grants(state: AppState, env: Environment, vin: str) -> list[service.GrantView]:
    """The vehicle's grants, with this process's unflushed reads written first so they
    show."""
    await reads.flush(state)
    return await service.grants(state.database.reader, env, vin, now_us=state.clock.now_us())


def _vehicle_url(request: Request) -> Callable[[str], str]:
    return lambda vin: _url(request, f"vehicles/{vin}")


@router.get(BASE + "/vehicles")
async def vehicles_page(request: Request) -> Response:
    state = _state(request)
    session = await _session(request)
    vins = await service.vehicles_of(state.database.reader, session)
    if len(vins) == 1:
        return _see_other(_url(request, f"vehicles/{vins[0]}"))
    return pages.render(
        request, "vehicles.html", session, vins=vins, vehicle_url=_vehicle_url(request)
    )


async def _vehicle(request: Request, vin: str) -> tuple[AppState, OwnerSession, str]:
    """The session and the VIN, only when the session's proof covers the VIN; any other
    VIN (known or not) gets the same 404."""
    state = _state(request)
    session = await _session(request)
    try:
        await service.require_vehicle(state.database.reader, session, vin)
    except service.NotYours:
        raise PageError("not_found", 404) from None
    return state, session, vin


@router.get(BASE + "/vehicles/{vin}")
async def vehicle_page(request: Request, vin: str) -> Response:
    state, session, vin = await _vehicle(request, vin)
    env = environment_of(request)
    reader = state.database.reader
    grants = await service.with_commands(reader, env, vin, await _grants(state, env, vin))
    applications = service.by_application(grants)
    words = pages.request_locale(request, session)
    vins = await service.vehicles_of(reader, session)
    return pages.render(
        request,
        "vehicle.html",
        session,
        vin=vin,
        applications=applications,
        live_count=sum(1 for application in applications if application.live),
        several=len(vins) > 1,
        done=request.query_params.get("done"),
        groups=lambda properties: pages.grouped(properties, words),
        command_label=lambda scope: pages.command_label(scope, words),
        sent_label=lambda command: command.label(words),
        withdraw_url=lambda grant: (
            _url(request, f"vehicles/{vin}/withdraw")
            + (f"?{urlencode({'grant': grant})}" if grant else "")
        ),
        download_url=lambda name: _url(request, f"vehicles/{vin}/{name}"),
    )


@router.get(BASE + "/vehicles/{vin}/withdraw")
async def withdraw_page(request: Request, vin: str) -> Response:
    """The confirmation page: nothing is withdrawn by a GET. `grant` names the
    application's entry (any of its grants for the vehicle), or `all`."""
    state, session, vin = await _vehicle(request, vin)
    env = environment_of(request)
    wanted = request.query_params.get("grant", "")
    applications = service.by_application(await _grants(state, env, vin))
    live = [application for application in applications if application.live]
    application = next(
        (a for a in applications if any(grant.id == wanted for grant in a.grants)), None
    )
    if wanted != "all" and application is None:
        raise PageError("not_found", 404)
    if application is not None and not application.live:
        return _see_other(_url(request, f"vehicles/{vin}") + "?done=already")
    if wanted == "all" and not live:
        return _see_other(_url(request, f"vehicles/{vin}") + "?done=none")
    return pages.render(
        request,
        "confirm.html",
        session,
        vin=vin,
        application=application,
        live=live,
        vehicle_url=_vehicle_url(request),
        withdraw_url=lambda _: _url(request, f"vehicles/{vin}/withdraw"),
    )


@router.post(BASE + "/vehicles/{vin}/withdraw")
async def withdraw_submit(request: Request, vin: str) -> Response:
    """Withdraw an application (every grant it holds for the vehicle), or `all`."""
    state, _, vin = await _vehicle(request, vin)
    form = await _checked_form(request)
    env = environment_of(request)
    wanted = form.get("grant", "")
    back = _url(request, f"vehicles/{vin}")
    if wanted == "all":
        outcomes = await flows.withdraw_all(state, env, vin)
        withdrawn = any(outcome is service.Outcome.withdrawn for outcome in outcomes.values())
        return _see_other(f"{back}?done={'withdrawn' if withdrawn else 'none'}")
    outcome = await flows.withdraw_application(state, env, vin, wanted)
    if outcome is service.Outcome.not_found:
        raise PageError("not_found", 404)
    log.info("owner withdrew an application", authorization_id=wanted, outcome=str(outcome))
    return _see_other(f"{back}?done={outcome}")


# ------------------------------------------------------------------------ your data


@router.get(BASE + "/vehicles/{vin}/data.json")
async def export_json(request: Request, vin: str) -> Response:
    state, _, vin = await _vehicle(request, vin)
    body = service.export_json(
        state.database.reader, environment_of(request), vin, now_us=state.clock.now_us()
    )
    return http.download(body, filename=f"{vin}-data.json", media_type="application/json")


@router.get(BASE + "/vehicles/{vin}/data.csv")
async def export_csv(request: Request, vin: str) -> Response:
    state, _, vin = await _vehicle(request, vin)
    body = service.export_csv(state.database.reader, environment_of(request), vin)
    return http.download(body, filename=f"{vin}-data.csv", media_type="text/csv; charset=utf-8")


@router.get(BASE + "/vehicles/{vin}/access.json")
async def export_access(request: Request, vin: str) -> Response:
    state, _, vin = await _vehicle(request, vin)
    await reads.flush(state)  # this process's unflushed reads show too
    body = await service.access_record(
        state.database.reader, environment_of(request), vin, now_us=state.clock.now_us()
    )
    return http.download(body, filename=f"{vin}-access.json", media_type="application/json")


# ------------------------------------------------------------------------ admin API


@admin_router.post(
    "/admin/v1/consent/authorizations/{authorization_id}/revoke",
    responses={200: {"model": RevokeResult}},
)
async def revoke_authorization(request: Request, authorization_id: str, _: AdminDep) -> Response:
    """End an owner's grant (approved or pending) on the owner's behalf: every token of it
    stops working at once and `authorization_changed` (`revoked`) is emitted; the same
    as a withdrawal in the owner portal. 409 when it was already revoked or rejected."""
    outcomes = await flows.withdraw(
        _state(request),
        environment_of(request),
        [authorization_id],
        detail="revoked through the admin API",
    )
    outcome = outcomes[authorization_id]
    if outcome is service.Outcome.not_found:
        raise ApiError(404, f"no authorization {authorization_id!r}", source="authorization_id")
    if outcome is service.Outcome.already:
        raise ApiError(
            409, f"authorization {authorization_id} was already revoked or rejected",
            source="authorization_id",
        )  # fmt: skip
    return json_response(
        RevokeResult(authorization_id=authorization_id, status="revoked").model_dump()
    )


owner_router = APIRouter()
owner_router.include_router(router)
owner_router.include_router(admin_router)
