"""The developer console: server-rendered pages at `/console` (production) and
`/sandbox/console` (the sandbox), for the deployment's operator (admin token) and the
users of each account (owner, developer, viewer).

This module holds the console's frame: static files, sign-in and sign-out, the single-use
link pages (invitations, password resets), the operator's account list, and the list of
page modules whose routers make up the rest.

How to add a page (request side; `pages.py` has the full recipe incl. templates, nav and
words):

    # autoport/console/fleet_routes.py
    from autoport.console.access import AccountPageDep, ChangeDep, console_router

    router = console_router()

    @router.get("/a/{account_id}/fleet/{app_id}")
    async def fleet_page(page: AccountPageDep, app_id: str) -> Response:
        application = await page.application(app_id)   # the account's, else the 404 page
        return page.render("fleet.html", application=application, title="fleet")

    @router.post("/a/{account_id}/fleet/{app_id}/remove")
    async def fleet_remove(page: ChangeDep, app_id: str) -> Response:
        # ChangeDep: signed in, the account theirs, the form's CSRF token checked,
        # a role that may change things; page.form holds the form.
        try:
            async with page.state.database.transaction() as conn:
                ...  # the feature's service, as the admin API calls it
                await page.record(conn, "fleet.remove", target=...)
        except ApiError as error:
            return await _page(page, ..., status=error.status, errors=page.errors(error))
        return page.see_other(f"fleet/{app_id}")   # POST -> redirect -> GET, always

then import the module's router in `console_router_with_pages` below and add a `NavEntry`
to `pages.NAV`. What the next page must show once (a new secret, an upload's results)
goes through `page.flash(path, data)` and `page.flashed()`. Raise
`autoport.web.errors.PageError` from anywhere to answer with a page; an unhandled
`ApiError` becomes the error page with the API's message (ConsoleRoute).
`?lang=de-DE` on any GET switches the language (kept in a cookie).
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response

from autoport.apps import service as apps_service
from autoport.console import (
    access,
    apps_routes,
    fleet_routes,
    pages,
    sandbox_routes,
    service,
    streaming_routes,
    usage_routes,
    users_routes,
    webhooks_routes,
)
from autoport.console.access import COOKIE, PREFIX, Principal, console_router
from autoport.console.service import SignInRefused
from autoport.kit import paging
from autoport.kit.errors import ApiError
from autoport.web import forms, http
from autoport.web.errors import PageError

router = console_router()


def _errors(request: Request, error: ApiError) -> dict[str, str]:
    """A service's refusal as the form's field errors, in the reader's language."""
    locale = access.request_locale(request)
    return forms.field_errors(error, lambda message: pages.gettext(locale, message))


# ------------------------------------------------------------------------ static


_STATIC_FILES = frozenset(
    {"base.css", "console.css", "console.js", "htmx/htmx.min.js"}
) | frozenset(
    # The Fleet/Sandbox/Usage pages' charts.
    {"sandbox_charts.js", "usage_charts.js", "vendor/uplot.iife.min.js", "vendor/uplot.min.css"}
)


@router.get("/static/{name:path}")
async def static(name: str) -> Response:
    if name not in _STATIC_FILES:
        return Response(status_code=404)
    return http.static(pages.static_file(name), name)


# ----------------------------------------------------------------------- sign-in


def _safe_next(value: str | None) -> str:
    """Only a console path of this site (never `//host` or another scheme)."""
    if value and value.startswith(PREFIX + "/") and "//" not in value and "\\" not in value:
        return value
    return PREFIX + "/"


def _sign_in_page(
    request: Request,
    *,
    status: int = 200,
    error: str | None = None,
    retry_after: int = 0,
    email: str = "",
    mode: str = "user",
) -> Response:
    token, new = access.anonymous_token(request)
    state, _ = access.where(request)
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    response = pages.render(
        request,
        None,
        "sign_in.html",
        status=status,
        headers=headers,
        csrf_token=access.csrf_for(state, token),
        error=error,
        retry_after=retry_after,
        email=email,
        mode=mode,
        next=_safe_next(request.query_params.get("next")),
        done=request.query_params.get("done"),
        title="sign-in",
    )
    if new:
        access.set_cookie(request, response, token, max_age=None)
    return response


@router.get("/sign-in")
async def sign_in_page(request: Request) -> Response:
    principal = await access.principal_of(request)
    if principal is not None:
        return pages.see_other(pages.url(request, principal.home()))
    return _sign_in_page(
        request, mode="operator" if request.query_params.get("operator") else "user"
    )


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    """Sign in as a user (email + password) or as the operator (admin_token). The
    session token is new at every sign-in (no session fixation)."""
    form = await access.checked_form(request, None)
    state, environment = access.where(request)
    operator = "admin_token" in form
    try:
        if operator:
            signed = await service.sign_in_operator(
                state.database,
                settings=state.settings,
                key=state.token_key,
                environment=environment,
                admin_token=form.get("admin_token", ""),
                address=access.address_of(request),
                now_us=state.clock.now_us(),
            )
        else:
            signed = await service.sign_in_user(
                state.database,
                settings=state.settings,
                key=state.token_key,
                environment=environment,
                email=form.get("email", ""),
                password=form.get("password", ""),
                address=access.address_of(request),
                now_us=state.clock.now_us(),
            )
    except SignInRefused as refused:
        return _sign_in_page(
            request,
            status=429 if refused.kind == "throttled" else 401,
            error=refused.kind,
            retry_after=refused.retry_after,
            email=form.get("email", "")[:320],
            mode="operator" if operator else "user",
        )
    if signed.user is None:
        target = _safe_next(form.get("next"))
    else:
        home = f"{PREFIX}/a/{signed.user.account_id}/applications"
        wanted = _safe_next(form.get("next"))
        target = wanted if wanted.startswith(f"{PREFIX}/a/{signed.user.account_id}/") else home
    response = pages.see_other(pages.url(request, target))
    access.set_cookie(
        request, response, signed.token, max_age=state.settings.console_session_seconds
    )
    return response


@router.post("/sign-out")
async def sign_out(request: Request) -> Response:
    principal = await access.principal_of(request)
    await access.checked_form(request, principal)
    state, environment = access.where(request)
    if principal is not None:
        async with state.database.transaction() as conn:
            await service.end_session(conn, principal.session_id, state.clock.now_us())
            await service.audit(
                conn,
                environment=environment,
                account_id=principal.account_id,
                actor=principal.actor,
                actor_label=principal.label,
                action="signout",
                address=access.address_of(request),
                now_us=state.clock.now_us(),
            )
    response = pages.see_other(pages.url(request, PREFIX + "/sign-in"))
    response.delete_cookie(COOKIE, path=access.cookie_path(request))
    return response


# ----------------------------------------------------------- single-use links


@router.get("/link/{token}")
async def link_page(request: Request, token: str) -> Response:
    state, environment = access.where(request)
    invitation = await service.open_link(
        state.database.reader,
        key=state.token_key,
        environment=environment,
        token=token,
        now_us=state.clock.now_us(),
    )
    if invitation is None:
        raise PageError("link", 404)
    anonymous, new = access.anonymous_token(request)
    response = pages.render(
        request,
        None,
        "link.html",
        csrf_token=access.csrf_for(state, anonymous),
        invitation=invitation,
        action=pages.url(request, f"{PREFIX}/link/{quote(token)}"),
        errors={},
        title="link",
    )
    if new:
        access.set_cookie(request, response, anonymous, max_age=None)
    return response


@router.post("/link/{token}")
async def use_link(request: Request, token: str) -> Response:
    form = await access.checked_form(request, None)
    state, environment = access.where(request)
    try:
        await service.use_link(
            state.database,
            key=state.token_key,
            environment=environment,
            token=token,
            password=form.get("password", ""),
            confirm=form.get("password_confirm", ""),
            address=access.address_of(request),
            now_us=state.clock.now_us(),
        )
    except ApiError as error:
        invitation = await service.open_link(
            state.database.reader, key=state.token_key, environment=environment, token=token,
            now_us=state.clock.now_us(),
        )  # fmt: skip
        if invitation is None:
            raise PageError("link", 404) from error
        return pages.render(
            request,
            None,
            "link.html",
            status=error.status,
            csrf_token=form.get("csrf_token", ""),
            invitation=invitation,
            action=pages.url(request, f"{PREFIX}/link/{quote(token)}"),
            errors=_errors(request, error),
            title="link",
        )
    return pages.see_other(pages.url(request, f"{PREFIX}/sign-in?done=password"))


# ------------------------------------------------------------------ the operator


@router.get("")
@router.get("/")
async def home(request: Request) -> Response:
    """The operator's accounts (paged, by name); a user goes to their account."""
    principal = await access.signed_in(request)
    if not principal.is_operator:
        return pages.see_other(pages.url(request, principal.home()))
    return await _accounts_page(request, principal)


async def _accounts_page(
    request: Request,
    principal: Principal,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    name: str = "",
) -> Response:
    state, environment = access.where(request)
    size = state.settings.console_page_size
    scope = ("console-accounts", str(environment))
    cursor = request.query_params.get("cursor")
    after = None
    if cursor:
        after = paging.decode_cursor(state.token_key, scope, cursor, (str, str))
    accounts = await apps_service.list_accounts_page(
        state.database.reader, environment, limit=size + 1, after=after
    )
    next_url = None
    if len(accounts) > size:
        accounts = accounts[:size]
        last = accounts[-1]
        cursor = paging.encode_cursor(state.token_key, scope, (last.name, last.id))
        next_url = pages.url(request, f"{PREFIX}/?cursor={cursor}")
    return pages.render(
        request,
        principal,
        "accounts.html",
        status=status,
        accounts=accounts,
        next_url=next_url,
        errors=errors or {},
        name=name,
        title="accounts",
    )


@router.post("/accounts")
async def create_account(request: Request) -> Response:
    principal = await access.signed_in(request)
    form = await access.checked_form(request, principal)
    if not principal.is_operator:
        raise access.not_found()
    state, environment = access.where(request)
    now = state.clock.now_us()
    try:
        async with state.database.transaction() as conn:
            account = await apps_service.create_account(
                conn, environment=environment, name=form.get("name", ""), now_us=now
            )
            await service.audit(
                conn,
                environment=environment,
                account_id=account.id,
                actor=principal.actor,
                actor_label=principal.label,
                action="account_created",
                target=account.id,
                detail={"name": account.name},
                address=access.address_of(request),
                now_us=now,
            )
    except ApiError as error:
        return await _accounts_page(
            request,
            principal,
            status=error.status,
            errors=_errors(request, error),
            name=form.get("name", ""),
        )
    return pages.see_other(pages.url(request, f"{PREFIX}/a/{account.id}/applications"))


def console_router_with_pages() -> APIRouter:
    """The console's frame and every page module's routes, as one router for app.py."""
    combined = APIRouter(include_in_schema=False)
    for part in (
        router,
        apps_routes.router,
        webhooks_routes.router,
        users_routes.router,
        fleet_routes.router,
        sandbox_routes.router,
        streaming_routes.router,
        usage_routes.router,
    ):
        combined.include_router(part)
    return combined
