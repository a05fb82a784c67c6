"""Who is looking at a console page, and what they may do: the session cookie, the
principal it stands for, CSRF, the account a URL names, role checks, and the route
class that turns a refusal into a page.

- The cookie (`autoport_console`, `HttpOnly; SameSite=Lax`, `Secure` on https, path
  `/console` of its environment) holds a random token; only its keyed hash is stored.
  Before sign-in it holds an anonymous token that is nowhere stored (it only anchors
  the sign-in form's CSRF token); a sign-in always issues a new token (rotation).
- CSRF tokens are derived from the cookie's token (autoport.web.csrf, over the live
  session key ring): nothing to store, useless without the cookie, checked on every
  POST.
- The role is read from the database on every request, so a change applies at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError
from starlette.responses import Response

from autoport.apps import service as apps_service
from autoport.apps.schemas import Account, Application
from autoport.console import pages, service
from autoport.console.pages import DEVELOPER, OPERATOR, OWNER
from autoport.kit.crypto import new_token
from autoport.kit.db import Connection
from autoport.kit.environments import Environment, environment_of
from autoport.kit.errors import ApiError
from autoport.kit.ratelimit import client_address
from autoport.kit.state import AppState
from autoport.web import forms
from autoport.web import locale as locales
from autoport.web.csrf import Csrf
from autoport.web.errors import PageError, PageRoute, page_router
from autoport.web.http import prefix, security_headers

PREFIX = "/console"
COOKIE = "autoport_console"
LANG_COOKIE = "autoport_console_lang"
ANONYMOUS_PREFIX = "ap_anon_"
# A change's form (a pasted VIN list or CSV upload is the largest): far above 1,000 lines
# of VIN, brand and a few tags.
MAX_UPLOAD_BYTES = 512 * 1024


@dataclass(frozen=True, slots=True)
class Principal:
    """The signed-in person: the operator (`user_id` None, any account of the
    environment) or an account user with a role."""

    session_id: str
    environment: Environment
    role: str  # operator | owner | developer | viewer
    user_id: str | None
    email: str | None
    account_id: str | None  # the user's account; None for the operator
    csrf_token: str
    locale: str
    # A flash (console_flashes) waits for one of this session's pages.
    has_flash: bool = False

    @property
    def is_operator(self) -> bool:
        return self.role == OPERATOR

    @property
    def actor(self) -> str:
        """How the audit log names who did something."""
        return self.user_id or OPERATOR

    @property
    def label(self) -> str:
        return self.email or OPERATOR

    @property
    def may_change(self) -> bool:
        return self.role in (OPERATOR, OWNER, DEVELOPER)

    @property
    def may_manage_users(self) -> bool:
        return self.role in (OPERATOR, OWNER)

    def home(self) -> str:
        return f"{PREFIX}/a/{self.account_id}/applications" if self.account_id else PREFIX + "/"


class ConsoleRoute(PageRoute):
    """Console routes answer a PageError (and an ApiError a route did not handle, a 404
    of a service, say, with the API's message) with the console's error page, and
    remember a language chosen with `?lang=` on any page."""

    async def error_page(self, request: Request, problem: PageError) -> Response:
        return await error_page(request, problem)

    def finish(self, request: Request, response: Response) -> Response:
        chosen = locales.supported(request.query_params.get("lang"))
        if chosen and request.method == "GET":
            response.set_cookie(
                LANG_COOKIE, chosen, max_age=365 * 86_400, path=cookie_path(request),
                httponly=True, samesite="lax", secure=is_https(*where(request)),
            )  # fmt: skip
        return response


def console_router(**kwargs: Any) -> APIRouter:
    """The router of a console page module: under /console, out of the OpenAPI
    document, with ConsoleRoute."""
    return page_router(ConsoleRoute, prefix=PREFIX, **kwargs)


# ------------------------------------------------------------------------ helpers


def where(request: Request) -> tuple[AppState, Environment]:
    state: AppState = request.app.state.autoport
    return state, environment_of(request)


CSRF = Csrf("console")


def csrf_for(state: AppState, cookie_token: str) -> str:
    return CSRF.token(state.session_key, cookie_token)


def request_locale(request: Request) -> str:
    return locales.negotiate(
        request.query_params.get("lang"),
        request.cookies.get(LANG_COOKIE),
        accept_language=request.headers.get("accept-language"),
    )


def address_of(request: Request) -> str:
    return client_address(request)


def cookie_path(request: Request) -> str:
    return prefix(request) + PREFIX


def is_https(state: AppState, environment: Environment) -> bool:
    from autoport.kit.environments import public_base_url

    return public_base_url(state.settings, environment).startswith("https://")


def set_cookie(request: Request, response: Response, token: str, max_age: int | None) -> None:
    state, environment = where(request)
    response.set_cookie(
        COOKIE,
        token,
        max_age=max_age,
        path=cookie_path(request),
        httponly=True,
        secure=is_https(state, environment),
        samesite="lax",
    )


def anonymous_token(request: Request) -> tuple[str, bool]:
    """The cookie's token for the sign-in form's CSRF; (token, whether it is new)."""
    token = request.cookies.get(COOKIE, "")
    if token.startswith(ANONYMOUS_PREFIX) and len(token) < 100:
        return token, False
    return new_token(ANONYMOUS_PREFIX), True


async def principal_of(request: Request) -> Principal | None:
    """The principal of the request's session cookie, or None."""
    token = request.cookies.get(COOKIE, "")
    if not token or token.startswith(ANONYMOUS_PREFIX) or len(token) > 200:
        return None
    state, environment = where(request)
    row = await service.get_live_session(
        state.database.reader, environment, state.token_key, token, state.clock.now_us()
    )
    if row is None:
        return None
    return Principal(
        session_id=row.id,
        environment=environment,
        role=row.role or OPERATOR,
        user_id=row.user_id,
        email=row.email,
        account_id=row.account_id,
        csrf_token=csrf_for(state, token),
        locale=request_locale(request),
        has_flash=row.has_flash,
    )


def sign_in_redirect(request: Request) -> Response:
    target = quote(request.url.path, safe="/")
    return pages.see_other(pages.url(request, f"{PREFIX}/sign-in?next={target}"))


async def signed_in(request: Request) -> Principal:
    """The principal, or the sign-in page (PageError `signed_out`)."""
    principal = await principal_of(request)
    if principal is None:
        raise PageError("signed_out", 401)
    return principal


async def error_page(request: Request, problem: PageError) -> Response:
    """The console's answer to `problem`: nobody signed in goes to the sign-in page (an
    event stream, which cannot follow a redirect, gets a plain 401); anything else is
    the error page, in the frame of whoever is signed in."""
    if problem.kind == "signed_out":
        return sign_in_redirect(request)
    if problem.kind == "no_stream":
        plain = Response("sign in first", status_code=401, media_type="text/plain")
        return security_headers(plain, scripts=True)
    return pages.render(
        request,
        await principal_of(request),
        "error.html",
        status=problem.status,
        kind=problem.kind,
        detail=problem.detail,
        title=str(problem.status),
    )


def not_found() -> PageError:
    return PageError("not_found", 404)


async def account_events(request: Request, account_id: str) -> AccountPage:
    """Like `account_page`, for an event stream (live.py): without a session the answer
    is 401 (an EventSource cannot follow a redirect to a sign-in form; it stops)."""
    principal = await principal_of(request)
    if principal is None:
        raise PageError("no_stream", 401)
    state, environment = where(request)
    principal, account = await _account_of(request, principal, account_id)
    page = AccountPage(request, state, environment, principal, account)
    app_id = request.path_params.get("app_id")
    if app_id is not None:
        page.named = await page.find_application(str(app_id))
    return page


async def still_sees(request: Request, account_id: str) -> bool:
    """Whether the request's session is still live and still sees the account (an open
    event stream asks again and again)."""
    principal = await principal_of(request)
    return principal is not None and (principal.is_operator or principal.account_id == account_id)


async def _account_of(
    request: Request, principal: Principal, account_id: str
) -> tuple[Principal, Account]:
    state, environment = where(request)
    if not principal.is_operator and principal.account_id != account_id:
        raise not_found()
    account = await apps_service.find_account(state.database.reader, environment, account_id)
    if account is None:
        raise not_found()
    return principal, account


def check_csrf(request: Request, sent: str | None, principal: Principal | None) -> None:
    """The form's token must be this browser's cookie's, under the live session key
    ring (a key rotated away within its window still counts)."""
    state, _ = where(request)
    if not CSRF.valid(state.session_key, request.cookies.get(COOKIE, ""), sent):
        raise PageError("csrf", 403)


async def checked_form(request: Request, principal: Principal | None) -> dict[str, str]:
    """A POST's form after its CSRF token was checked (403 page otherwise)."""
    form = await forms.form(request)
    check_csrf(request, form.get("csrf_token"), principal)
    return form


async def checked_lists(request: Request, principal: Principal | None) -> dict[str, list[str]]:
    """Like `checked_form`, keeping every value of each field (checkbox groups)."""
    form = await forms.form_lists(request)
    check_csrf(request, (form.get("csrf_token") or [""])[-1], principal)
    return form


def require_change(request: Request, principal: Principal) -> None:
    """Owners, developers and the operator change things; a viewer only looks."""
    if not principal.may_change:
        raise PageError("read_only", 403)


def require_owner(request: Request, principal: Principal) -> None:
    """Users, invitations and the audit log: the account's owners and the operator."""
    if not principal.may_manage_users:
        raise PageError("owners_only", 403)


# ------------------------------------------------------------- an account's page


@dataclass
class AccountPage:
    """What every page of one account starts with, in one place: who looks (the
    principal, who may see the account), the account, the app state and environment;
    and what its routes do with them: render, redirect, read a checked form, look up an
    application of the account, write the audit log, leave a flash for the next page.

        @router.get("/a/{account_id}/fleet/{app_id}")
        async def fleet_page(page: AccountPageDep) -> Response:
            return page.render("fleet.html", application=page.application)

        @router.post("/a/{account_id}/fleet/{app_id}/remove")
        async def fleet_remove(page: ChangeDep) -> Response:
            ...  # page.form: the checked form; the role may change things
            await page.audit(action="fleet.remove", target=...)
            return page.see_other(f"fleet/{page.application.id}")

    An application the URL names (`{app_id}`) is looked up through the account before
    anything else: another account's is the same 404 page as one that does not exist,
    for every role, before the form or the role is looked at.
    """

    request: Request
    state: AppState
    environment: Environment
    principal: Principal
    account: Account
    named: Application | None = None  # the application the URL names (`{app_id}`)
    form: dict[str, str] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)

    @property
    def application(self) -> Application:
        """The account's application the URL names."""
        if self.named is None:
            raise not_found()
        return self.named

    @property
    def account_id(self) -> str:
        return self.account.id

    def path(self, relative: str = "") -> str:
        """The console path of this account's page `relative` (`fleet/APP`)."""
        return f"{PREFIX}/a/{self.account.id}/{relative}".rstrip("/")

    def url(self, relative: str = "") -> str:
        """The browser's address of this account's page `relative`."""
        return pages.url(self.request, self.path(relative))

    def render(self, template: str, *, status: int = 200, **context: Any) -> Response:
        return pages.render(
            self.request,
            self.principal,
            template,
            status=status,
            account=self.account,
            account_id=self.account.id,
            **context,
        )

    def see_other(self, relative: str = "") -> Response:
        return pages.see_other(self.url(relative))

    def errors(self, error: ApiError | ValidationError) -> dict[str, str]:
        """A service's refusal or a request model's validation error as the form's field
        errors, in the reader's language (autoport.web.forms.field_errors)."""
        locale = self.principal.locale
        return forms.field_errors(error, lambda message: pages.gettext(locale, message))

    async def find_application(self, app_id: str) -> Application:
        """The account's application `app_id`; another account's is the same 404 page as
        one that does not exist."""
        found = await apps_service.get_application_of_account(
            self.state.database.reader, self.environment, self.account.id, app_id.strip().upper()
        )
        if found is None:
            raise not_found()
        return found

    async def audit(
        self,
        conn: Connection | None = None,
        *,
        action: str,
        target: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Record the change in the account's audit log: in the caller's transaction
        (`conn`), or in one of its own after a change that had its own."""
        if conn is None:
            async with self.state.database.transaction() as own:
                await self.audit(own, action=action, target=target, detail=detail)
            return
        await service.audit(
            conn,
            environment=self.environment,
            account_id=self.account.id,
            actor=self.principal.actor,
            actor_label=self.principal.label,
            action=action,
            target=target,
            detail=detail,
            address=address_of(self.request),
            now_us=self.state.clock.now_us(),
        )

    async def flash(self, relative: str, data: dict[str, Any]) -> Response:
        """Leave `data` for the page `relative` to show once, and go there (what the
        answer to a change must show: a new secret, a link, an upload's results)."""
        async with self.state.database.transaction() as conn:
            await service.set_flash(
                conn, key=self.state.session_key, session_id=self.principal.session_id,
                page=self.path(relative), data=data, now_us=self.state.clock.now_us(),
            )  # fmt: skip
        return self.see_other(relative)

    async def flashed(self) -> dict[str, Any]:
        """What a change left for this page (empty: nothing, or it was shown already)."""
        if not self.principal.has_flash:
            return {}
        async with self.state.database.transaction() as conn:
            found = await service.take_flash(
                conn, key=self.state.session_key, session_id=self.principal.session_id,
                page=self.request.url.path,
            )  # fmt: skip
        return found or {}


async def account_page(request: Request, account_id: str) -> AccountPage:
    """The page of one account, when the signed-in principal may see it (the operator:
    any account of this environment; a user: their own). Anything else is the same 404
    as an account that does not exist; nobody signed in goes to the sign-in page."""
    state, environment = where(request)
    principal = await signed_in(request)
    principal, account = await _account_of(request, principal, account_id)
    page = AccountPage(request, state, environment, principal, account)
    app_id = request.path_params.get("app_id")
    if app_id is not None:
        page.named = await page.find_application(str(app_id))
    return page


async def changing_page(page: Annotated[AccountPage, Depends(account_page)]) -> AccountPage:
    """A change: the form read with its CSRF token checked (403 page), then the role
    (a viewer only looks: 403 page)."""
    await _read_form(page)
    require_change(page.request, page.principal)
    return page


async def owners_page(page: Annotated[AccountPage, Depends(account_page)]) -> AccountPage:
    """A change only the account's owners and the operator make (users, invitations)."""
    await _read_form(page)
    require_owner(page.request, page.principal)
    return page


async def _read_form(page: AccountPage) -> None:
    page.lists = await forms.form_lists(page.request, limit=MAX_UPLOAD_BYTES)
    page.form = {name: values[-1] for name, values in page.lists.items()}
    check_csrf(page.request, page.form.get("csrf_token"), page.principal)


AccountPageDep = Annotated[AccountPage, Depends(account_page)]
ChangeDep = Annotated[AccountPage, Depends(changing_page)]
OwnerChangeDep = Annotated[AccountPage, Depends(owners_page)]
