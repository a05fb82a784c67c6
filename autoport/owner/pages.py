"""The owner portal's surface (autoport.web): its templates, catalogue and stylesheet,
what every portal page's template sees, and its error page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from autoport.catalog import UnknownProperty
from autoport.catalog.catalog import CATALOG
from autoport.catalog.labels import group_for_consent, label
from autoport.consent.pages import brand_label, consent_groups
from autoport.kit.state import AppState
from autoport.owner.service import OwnerSession
from autoport.proof.pages import PROOF_TEMPLATES
from autoport.web import locale
from autoport.web.csrf import Csrf
from autoport.web.errors import PageError, PageRoute, page_router
from autoport.web.http import prefix
from autoport.web.surface import Surface

SURFACE = Surface(
    "owner portal", Path(__file__).parent, templates=(PROOF_TEMPLATES,), stylesheets=("owner.css",)
)
CSRF = Csrf("owner")
COOKIE = "autoport_owner"
# Before the sign-in: a random value only this browser holds, so that the sign-in
# form's CSRF token can be checked (login CSRF) before any session exists.
FORM_COOKIE = "autoport_owner_form"
BASE = "/owner"
STYLESHEET = "static/owner.css"


def url(request: Request, path: str) -> str:
    """A portal page's path under the environment's prefix (`/sandbox/owner/...`)."""
    return f"{prefix(request)}{BASE}{'/' + path if path else ''}"


def request_locale(request: Request, session: OwnerSession | None = None) -> str:
    """`lang` when asked for, else the session's language, else the browser's."""
    asked = request.query_params.get("lang")
    if asked or session is None:
        return locale.negotiate(asked, accept_language=request.headers.get("accept-language"))
    return session.locale


def csrf_token(request: Request, cookie: str = COOKIE) -> str:
    state: AppState = request.app.state.autoport
    return CSRF.token(state.session_key, request.cookies.get(cookie, ""))


def grouped(properties: tuple[str, ...], chosen: str) -> list[Any]:
    """The data items a grant covers, in the consent page's groups (a scope the catalog
    does not describe is not shown as data)."""
    known = []
    for item in properties:
        try:
            group_for_consent([item], chosen)
        except (UnknownProperty, KeyError, ValueError):
            continue
        known.append(item)
    return list(consent_groups(tuple(known), chosen))


def command_label(scope: str, chosen: str) -> str:
    """`charging.set.start` -> "Charging: start" (the catalog's capability label)."""
    capability, _, rest = scope.partition(".set.")
    try:
        cap_label = label(CATALOG.capability(capability), chosen)
    except (KeyError, AttributeError):
        cap_label = capability.replace("_", " ").capitalize()
    return f"{cap_label}: {rest.replace('_', ' ')}"


def common(request: Request, csrf: str, session: OwnerSession | None = None) -> dict[str, Any]:
    """What every portal page's template sees. The language links lead to this page in
    this environment; a page answering a POST (a form problem) links the sign-in page,
    where a GET is served."""
    path = url(request, "") if request.method != "GET" else prefix(request) + request.url.path
    return {
        "url": lambda name: url(request, name),
        "csrf_token": csrf,
        "switch": locale.language_links(path),
        "stylesheet": url(request, STYLESHEET),
        "brand_label": brand_label,
        "session": session,
        "signed_in": session is not None and session.signed_in,
    }


def render(
    request: Request,
    template: str,
    session: OwnerSession | None = None,
    *,
    chosen: str | None = None,
    csrf: str | None = None,
    status: int = 200,
    **context: Any,
) -> Response:
    """A portal page in the reader's language, with the common context."""
    words = chosen or request_locale(request, session)
    token = csrf if csrf is not None else csrf_token(request)
    return SURFACE.render(
        template, words, status=status, **{**common(request, token, session), **context}
    )


def drop_cookie(request: Request, response: Response, name: str = COOKIE) -> None:
    response.delete_cookie(name, path=prefix(request) + BASE)


def error_page(request: Request, problem: PageError) -> Response:
    response = render(
        request,
        "error.html",
        status=problem.status,
        csrf="",
        kind=problem.kind,
        retry_after=problem.retry_after,
        switch=None,
    )
    if problem.drop_cookie:
        drop_cookie(request, response)
    return response


class OwnerRoute(PageRoute):
    def error_page(self, request: Request, problem: PageError) -> Response:
        return error_page(request, problem)


def router(**kwargs: Any) -> APIRouter:
    """A router of portal pages (problems answered with `error_page`)."""
    return page_router(OwnerRoute, **kwargs)
