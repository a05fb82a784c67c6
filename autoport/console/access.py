"""Who is looking at a console page, and what they may do: the session cookie, the
principal it stands for, CSRF, the account a URL names, role checks, and the route
class that turns a refusal into a page.

- The cookie (`autoport_console`, `HttpOnly; SameSite=Lax`, `Secure` on https, path
  `/console` of its environment) holds a random token; only its keyed hash is stored.
  Before sign-in it holds an anonymous token that is nowhere stored (it only anchors
  the sign-in form's CSRF token); a sign-in always issues a new token (rotation).
- CSRF tokens are derived from the cookie's token (HMAC with `session_secret`): nothing
  to store, useless without the cookie, checked on every POST.
- The role is read from the database on every request, so a change applies at once.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, Request
from fastapi.routing import APIRoute
from starlette.responses import Response

from autoport.apps.schemas import Account
from autoport.console import pages, service
from autoport.console.pages import DEVELOPER, OPERATOR, OWNER
from autoport.kit.crypto import new_token, same, token_hash
from autoport.kit.environments import Environment, environment_of
from autoport.kit.errors import ApiError
from autoport.kit.ratelimit import client_address
from autoport.kit.state import AppState

PREFIX = "/console"
COOKIE = "autoport_console"
LANG_COOKIE = "autoport_console_lang"
ANONYMOUS_PREFIX = "ap_anon_"
MAX_FORM_BYTES = 256 * 1024


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


class Refusal(Exception):
    """Raised anywhere in a console route: answered with `response` (ConsoleRoute)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


class ConsoleRoute(APIRoute):
    """Console routes answer a `Refusal` with its page, and an `ApiError` a route did
    not handle (a 404 of a service, say) with the error page and the API's message."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                response = await handler(request)
            except Refusal as refusal:
                response = refusal.response
            except ApiError as error:
                response = error_page(request, error.status, detail=error.detail)
            chosen = pages.supported_locale(request.query_params.get("lang"))
            if chosen and request.method == "GET":
                # The language link of any page: remembered for the next pages.
                response.set_cookie(
                    LANG_COOKIE, chosen, max_age=365 * 86_400, path=cookie_path(request),
                    httponly=True, samesite="lax", secure=is_https(*where(request)),
                )  # fmt: skip
            return response

        return guarded


def console_router(**kwargs: Any) -> APIRouter:
    """The router of a console page module: under /console, out of the OpenAPI
    document, with ConsoleRoute."""
    return APIRouter(prefix=PREFIX, include_in_schema=False, route_class=ConsoleRoute, **kwargs)


# ------------------------------------------------------------------------ helpers


def where(request: Request) -> tuple[AppState, Environment]:
    state: AppState = request.app.state.autoport
    return state, environment_of(request)


def secret_of(state: AppState) -> bytes:
    secret = state.settings.session_secret
    if secret is None:
        raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
    return secret.get_secret_value().encode()


def csrf_for(state: AppState, cookie_token: str) -> str:
    return token_hash(secret_of(state), f"console-csrf:{cookie_token}")


def request_locale(request: Request) -> str:
    return (
        pages.supported_locale(request.query_params.get("lang"))
        or pages.supported_locale(request.cookies.get(LANG_COOKIE))
        or pages.locale_from(request.headers.get("accept-language"))
    )


def address_of(request: Request) -> str:
    return client_address(request)


def cookie_path(request: Request) -> str:
    return pages.prefix(request) + PREFIX


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
    """The principal, or the sign-in page (as a Refusal)."""
    principal = await principal_of(request)
    if principal is None:
        raise Refusal(sign_in_redirect(request))
    return principal


def error_page(
    request: Request,
    status: int,
    *,
    kind: str = "error",
    detail: str | None = None,
    principal: Principal | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    return pages.render(
        request,
        principal,
        "error.html",
        status=status,
        kind=kind,
        detail=detail,
        headers=headers,
        title=str(status),
    )


def not_found(request: Request, principal: Principal | None) -> Refusal:
    return Refusal(error_page(request, 404, kind="not_found", principal=principal))


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
        raise Refusal(
            pages.security_headers(
                Response("sign in first", status_code=401, media_type="text/plain")
            )
        )
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
        raise not_found(request, principal)
    account = await service.get_account(state.database.reader, environment, account_id)
    if account is None:
        raise not_found(request, principal)
    return principal, account


async def form_of(request: Request) -> dict[str, str]:
    """The url-encoded form (the last value of each field)."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise Refusal(error_page(request, 413, kind="too_large"))
    text = body.decode("utf-8", errors="replace")
    return {k: v[-1] for k, v in parse_qs(text, keep_blank_values=True).items()}


async def form_lists(request: Request) -> dict[str, list[str]]:
    """The url-encoded form with every value of each field (checkbox groups)."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise Refusal(error_page(request, 413, kind="too_large"))
    return parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)


def check_csrf(request: Request, sent: str | None, principal: Principal | None) -> None:
    state, _ = where(request)
    cookie = request.cookies.get(COOKIE, "")
    expected = principal.csrf_token if principal else (csrf_for(state, cookie) if cookie else "")
    if not sent or not expected or not same(expected, sent):
        raise Refusal(error_page(request, 403, kind="csrf", principal=principal))


async def checked_form(request: Request, principal: Principal | None) -> dict[str, str]:
    """A POST's form after its CSRF token was checked (403 page otherwise)."""
    form = await form_of(request)
    check_csrf(request, form.get("csrf_token"), principal)
    return form


async def checked_lists(request: Request, principal: Principal | None) -> dict[str, list[str]]:
    """Like `checked_form`, keeping every value of each field (checkbox groups)."""
    form = await form_lists(request)
    check_csrf(request, (form.get("csrf_token") or [""])[-1], principal)
    return form


def require_change(request: Request, principal: Principal) -> None:
    """Owners, developers and the operator change things; a viewer only looks."""
    if not principal.may_change:
        raise Refusal(error_page(request, 403, kind="read_only", principal=principal))


def require_owner(request: Request, principal: Principal) -> None:
    """Users, invitations and the audit log: the account's owners and the operator."""
    if not principal.may_manage_users:
        raise Refusal(error_page(request, 403, kind="owners_only", principal=principal))
