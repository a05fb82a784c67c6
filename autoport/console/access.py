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

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response

from autoport.apps.schemas import Account
from autoport.console import pages, service
from autoport.console.pages import DEVELOPER, OPERATOR, OWNER
from autoport.kit.crypto import new_token
from autoport.kit.environments import Environment, environment_of
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


async def account_page(request: Request, account_id: str) -> tuple[Principal, Account]:
    """A page of one account: the signed-in principal and the account, when the
    principal may see it (the operator: any account of this environment; a user: their
    own). Anything else is the same 404 as an account that does not exist."""
    return await _account_of(request, await signed_in(request), account_id)


async def account_events(request: Request, account_id: str) -> tuple[Principal, Account]:
    """Like `account_page`, for an event stream (live.py): without a session the answer
    is 401 (an EventSource cannot follow a redirect to a sign-in form; it stops)."""
    principal = await principal_of(request)
    if principal is None:
        raise PageError("no_stream", 401)
    return await _account_of(request, principal, account_id)


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
    account = await service.get_account(state.database.reader, environment, account_id)
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
