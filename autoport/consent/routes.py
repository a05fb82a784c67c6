"""The consent pages (server-rendered, no JavaScript) and the admin call through which a
carmaker reports an owner's decision. The sandbox's simulated carmaker login, where the
`oem_login` pages send owners of sandbox brands, is autoport.sandbox.oem_login.

Routes stay thin: parse the form, check the CSRF token, call the service, render or
redirect (303 after every POST). A problem the owner sees is raised as
`autoport.web.errors.PageError` and answered with the consent error page
(`pages.error_page`, through the pages' router).
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urlsplit

import structlog
from fastapi import APIRouter, Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import Scope

from autoport.consent import flows, pages, service
from autoport.consent.schemas import OwnerDecision, OwnerDecisionResult
from autoport.consent.service import Context, FormProblem
from autoport.kit import environments, uris
from autoport.kit.auth import AdminDep
from autoport.kit.environments import Environment, environment_of, public_base_url
from autoport.kit.errors import ApiError
from autoport.kit.ratelimit import RateLimiter, Verdict, client_address
from autoport.kit.routing import api_router, json_response
from autoport.kit.state import AppState, parts_of
from autoport.proof.flows import Step
from autoport.proof.service import Method, grant_starts_pending
from autoport.web import forms, http, locale
from autoport.web.errors import PageError
from autoport.web.http import prefix, see_other

log = structlog.get_logger("autoport.consent")

DEFAULT_ENTRY = "/oauth/new"


def entry_path(state: AppState) -> str:
    return urlsplit(state.settings.auth_url).path.rstrip("/") or DEFAULT_ENTRY


router = pages.router()
admin_router = api_router(tags=["admin"])


class AuthUrlRoute(pages.ConsentRoute):
    """Matches the configured `auth_url`'s path (read at request time, so the operator's
    setting decides where the entry point lives)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return Match.NONE, {}
        state: AppState = scope["app"].state.autoport
        if scope["path"].rstrip("/") != entry_path(state):
            return Match.NONE, {}
        return super().matches({**scope, "path": self.path})


entry_router = APIRouter(include_in_schema=False, route_class=AuthUrlRoute)


# ----------------------------------------------------------------------- helpers


def _where_am_i(request: Request) -> tuple[AppState, Environment]:
    # Read directly rather than through the kit's sync dependencies, which FastAPI runs
    # in a thread pool: a thread hop per dependency doubled these pages' cost.
    state: AppState = request.app.state.autoport
    return state, environment_of(request)


def _keys(state: AppState) -> tuple[bytes, bytes]:
    # The current keys; what they verify also opens under the previous ones during a
    # rotation window (autoport.kit.keyring.accepted).
    return state.token_key, state.session_key


page_url = pages.page_url
PAGES = pages.PAGES
brand_label = pages.brand_label


async def _context(request: Request, state: AppState, env: Environment) -> Context:
    return await flows.load(state, env, request.cookies.get(pages.COOKIE))


def _where(ctx: Context) -> str:
    """The first step the session still needs."""
    session = ctx.session
    if session.brand is None:
        return "brand"
    if session.vin is None or session.method is None:
        return "vehicle"
    if service.requires_verification(ctx):
        return "verify"
    return "review"


_ORDER = ("brand", "vehicle", "verify", "review")


def _skips_proof(ctx: Context) -> bool:
    method = ctx.session.method
    return method is not None and Method(method) in (Method.instant, Method.owner_portal)


def _common(request: Request, ctx: Context, step: str) -> dict[str, Any]:
    state: AppState = request.app.state.autoport
    _, secret = _keys(state)
    token = request.cookies.get(pages.COOKIE, "")
    return {
        "application": ctx.application,
        "session": ctx.session,
        "csrf_token": pages.CSRF.token(secret, token),
        "step": step,
        "steps": _ORDER,
        # Instant proves nothing more and owner_portal asks the carmaker after the
        # decision: the ownership step is not done, it is not needed here.
        "skipped": ("verify",) if _skips_proof(ctx) else (),
        "url": lambda name: page_url(request, name),
        "switch": locale.language_links(page_url(request, step)),
        "stylesheet": page_url(request, pages.STYLESHEET),
        "brand_label": brand_label,
        # Where the owner withdraws later (autoport.owner): linked from every page.
        "owner_portal": f"{public_base_url(state.settings, ctx.session.environment)}/owner",
    }


async def _page(
    request: Request, state: AppState, env: Environment, step: str
) -> tuple[Context, Response | None]:
    """Load the session for a page GET; handle `?lang=` and steps taken out of order."""
    ctx = await _context(request, state, env)
    lang = request.query_params.get("lang")
    if lang:
        async with state.database.transaction() as conn:
            await service.set_locale(conn, ctx, wanted=lang, now_us=state.clock.now_us())
        return ctx, see_other(page_url(request, step))
    reached = _where(ctx)
    if _ORDER.index(step) > _ORDER.index(reached):
        return ctx, see_other(page_url(request, reached))
    return ctx, None


async def _post(
    request: Request, state: AppState, env: Environment
) -> tuple[Context, dict[str, str]]:
    ctx = await _context(request, state, env)
    form = await forms.form(request)
    _, secret = _keys(state)
    if not pages.CSRF.valid(secret, request.cookies.get(pages.COOKIE, ""), form.get("csrf_token")):
        raise PageError("csrf", 403)
    return ctx, form


# -------------------------------------------------------------------- entry point


class ConsentParts(Protocol):
    """The parts the consent entry takes (autoport.state.Parts; mypy checks it has
    them): its limiters per address and per client_id."""

    @property
    def consent_ip_limit(self) -> RateLimiter: ...
    @property
    def consent_client_limit(self) -> RateLimiter: ...


async def _entry_rate_limit(request: Request, state: AppState) -> Verdict | None:
    """Each entry opens a session row: counted per address first, then per client_id
    (as sent: an unknown one costs the same lookup). The refusing verdict, or None."""
    parts: ConsentParts = parts_of(state)
    checks = (
        (parts.consent_ip_limit, client_address(request)),
        (parts.consent_client_limit, request.query_params.get("client_id", "")[:200]),
    )
    for limiter, key in checks:
        verdict = await limiter.hit(key)
        if not verdict.allowed:
            return verdict
    return None


@entry_router.get(DEFAULT_ENTRY)
async def consent_entry(request: Request) -> Response:
    """The consent entry point (`auth_url`): checks the application's request, opens a
    session and sends the browser to the first page."""
    state, env = _where_am_i(request)
    refused = await _entry_rate_limit(request, state)
    if refused is not None:
        raise PageError("busy", 429, refused.headers())
    query = request.query_params
    entry = service.EntryRequest(
        **{name: query.get(name) for name in service.EntryRequest.__dataclass_fields__}
    )
    key, _ = _keys(state)
    entry_checked = await service.check_entry(
        state.database.reader,
        settings=state.settings,
        environment=env,
        request=entry,
        accept_language=request.headers.get("accept-language"),
        now_us=state.clock.now_us(),
    )
    if isinstance(entry_checked, service.RedirectError):
        return see_other(entry_checked.url)
    try:
        async with state.database.transaction() as conn:
            started = await service.open_session(conn, entry_checked, key=key)
    except Exception:
        # The database is busy or away: the application learns it may retry.
        log.exception("consent session could not be stored")
        return see_other(entry_checked.failure.url)
    response = see_other(page_url(request, "brand"))
    response.set_cookie(
        pages.COOKIE,
        started.session_token,
        max_age=state.settings.consent_session_seconds,
        path=prefix(request) + "/oauth",
        httponly=True,
        # Secure whenever this environment is served over https (behind a TLS proxy too:
        # the public base URL says so, not the proxy-to-app hop).
        secure=public_base_url(state.settings, env).startswith("https://"),
        samesite="lax",
    )
    return response


# ------------------------------------------------------------------------- pages


@router.get(PAGES + "/" + pages.STYLESHEET)
async def consent_stylesheet() -> Response:
    return http.static(pages.SURFACE.stylesheet, pages.STYLESHEET)


@router.get(PAGES + "/brand")
async def brand_page(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, early = await _page(request, state, env, "brand")
    if early:
        return early
    return pages.SURFACE.render("brand.html", ctx.session.locale, **_common(request, ctx, "brand"))


@router.post(PAGES + "/brand")
async def brand_submit(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, form = await _post(request, state, env)
    try:
        async with state.database.transaction() as conn:
            await service.choose_brand(
                conn, ctx, brand=form.get("brand"), now_us=state.clock.now_us()
            )
    except FormProblem as problem:
        return pages.SURFACE.render(
            "brand.html",
            ctx.session.locale,
            status=problem.status,
            problem=problem,
            **_common(request, ctx, "brand"),
        )
    return see_other(page_url(request, "vehicle"))


@router.get(PAGES + "/vehicle")
async def vehicle_page(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, early = await _page(request, state, env, "vehicle")
    if early:
        return early
    return pages.SURFACE.render(
        "vehicle.html",
        ctx.session.locale,
        vin=ctx.session.vin or "",
        **_common(request, ctx, "vehicle"),
    )


@router.post(PAGES + "/vehicle")
async def vehicle_submit(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, form = await _post(request, state, env)
    try:
        ctx, shown = await flows.enter_vin(
            state,
            ctx,
            form.get("vin"),
            token=request.cookies.get(pages.COOKIE, ""),
            address=client_address(request),
        )
    except FormProblem as problem:
        return pages.SURFACE.render(
            "vehicle.html",
            ctx.session.locale,
            status=problem.status,
            problem=problem,
            vin=problem.values.get("vin", ""),
            **_common(request, ctx, "vehicle"),
        )
    if shown is not None and shown.notice == "unreachable":
        return see_other(page_url(request, "verify") + "?unreachable=1")
    return see_other(page_url(request, _where(ctx)))


@router.get(PAGES + "/verify")
async def verify_page(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, early = await _page(request, state, env, "verify")
    if early:
        return early
    # Say so at once rather than after the owner typed a code in vain.
    refused = await flows.refusal(state, ctx, address=client_address(request))
    if request.query_params.get("unreachable"):
        # A code the vehicle could not be reached for (vehicle page -> here).
        refused = Step(notice="unreachable", refused=refused.refused)
    return _verify_render(request, state, ctx, refused)


def _verify_render(request: Request, state: AppState, ctx: Context, step: Step) -> Response:
    return pages.SURFACE.render(
        "verify.html",
        ctx.session.locale,
        status=step.status,
        headers=step.headers(state.clock.now_us()),
        method=str(Method(ctx.session.method or Method.instant)),
        verified=not service.requires_verification(ctx),
        **{**step.page(), "request_sent": request.query_params.get("sent") == "1"},
        **_common(request, ctx, "verify"),
    )


@router.post(PAGES + "/verify")
async def verify_submit(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, form = await _post(request, state, env)
    action = form.get("action", "")
    address = client_address(request)
    if action == "new_code":
        step = await flows.new_code(state, ctx, address=address)
        if step.sent:
            return see_other(page_url(request, "verify") + "?sent=1")
    elif action == "oem_login":
        step = await flows.carmaker_login(state, ctx, prefix=prefix(request))
        if step.go_to is not None:
            return see_other(step.go_to)
    elif action == "code":
        step = await flows.check_code(state, ctx, form.get("code"), address=address)
        if step.proven:
            return see_other(page_url(request, "review"))
    else:
        step = Step(status=400, notice="unknown_action")
    return _verify_render(request, state, ctx, step)


@router.get(PAGES + "/oem-callback")
async def oem_callback(request: Request) -> Response:
    """Where the carmaker's login sends the owner back."""
    state, env = _where_am_i(request)
    ctx = await _context(request, state, env)
    step = await flows.carmaker_returned(state, ctx, dict(request.query_params))
    if not step.proven:
        return _verify_render(request, state, ctx, step)
    return see_other(page_url(request, "review"))


@router.get(PAGES + "/review")
async def review_page(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, early = await _page(request, state, env, "review")
    if early:
        return early
    return _review_render(request, ctx)


def _review_render(request: Request, ctx: Context, status: int = 200) -> Response:
    locale = ctx.session.locale
    groups = pages.consent_groups(ctx.application.properties, locale)
    return pages.SURFACE.render(
        "review.html",
        locale,
        status=status,
        # Rebuilt from the parsed URI (autoport.kit.uris), never copied into the header;
        # a URI that does not pass (registered before the check) is left out, so the
        # decision's redirect is blocked rather than the policy rewritten.
        form_targets=tuple(filter(None, [uris.origin(ctx.session.redirect_uri)])),
        groups=groups,
        item_count=sum(len(group.items) for group in groups),
        commands=pages.consent_commands(ctx.application.commands, locale),
        pending=grant_starts_pending(Method(ctx.session.method or Method.instant)),
        **_common(request, ctx, "review"),
    )


@router.post(PAGES + "/review")
async def review_submit(request: Request) -> Response:
    state, env = _where_am_i(request)
    ctx, form = await _post(request, state, env)
    decision = form.get("decision")
    if decision not in ("approve", "deny"):
        return _review_render(request, ctx, status=400)
    issuer = environments.issuer(state.settings, ctx.session.environment)
    try:
        async with state.database.transaction() as conn:
            result = await service.decide(
                conn,
                ctx,
                approve=decision == "approve",
                issuer=issuer,
                now_us=state.clock.now_us(),
            )
    except PageError:
        raise
    except Exception:
        # The owner still goes back to the application, which learns to retry.
        log.exception("consent decision failed", session_id=ctx.session.id)
        return see_other(service.server_error_url(ctx, issuer))
    response = see_other(result.redirect_url)
    response.delete_cookie(pages.COOKIE, path=prefix(request) + "/oauth")
    return response


# ---------------------------------------------------------------------- admin API


async def _owner_decision(
    request: Request,
    state: AppState,
    env: Environment,
    authorization_id: str,
    approved: bool,
) -> Response:
    body = await request.body()
    detail = None
    if body:
        try:
            detail = OwnerDecision.model_validate_json(body).detail
        except ValueError as error:
            raise ApiError(422, f"body: {error}", source="detail") from None
    try:
        async with state.database.transaction() as conn:
            status = await service.report_owner_decision(
                conn,
                environment=env,
                authorization_id=authorization_id,
                approved=approved,
                now_us=state.clock.now_us(),
                detail=detail,
            )
    except service.StatusProblem as problem:
        raise ApiError(problem.status, problem.detail, source="authorization_id") from None
    result = OwnerDecisionResult(authorization_id=authorization_id, status=status)
    return json_response(result.model_dump())


@admin_router.post(
    "/admin/v1/consent/authorizations/{authorization_id}/approve",
    responses={200: {"model": OwnerDecisionResult}},
)
async def approve_pending_authorization(
    request: Request, authorization_id: str, _: AdminDep
) -> Response:
    """The carmaker reports that the owner approved a pending (owner_portal) grant:
    its status becomes `approved` and `authorization_changed` is emitted."""
    state, env = _where_am_i(request)
    return await _owner_decision(request, state, env, authorization_id, True)


@admin_router.post(
    "/admin/v1/consent/authorizations/{authorization_id}/reject",
    responses={200: {"model": OwnerDecisionResult}},
)
async def reject_pending_authorization(
    request: Request, authorization_id: str, _: AdminDep
) -> Response:
    """The carmaker reports that the owner rejected a pending (owner_portal) grant."""
    state, env = _where_am_i(request)
    return await _owner_decision(request, state, env, authorization_id, False)


consent_router = APIRouter()
consent_router.include_router(entry_router)
consent_router.include_router(router)
consent_router.include_router(admin_router)
