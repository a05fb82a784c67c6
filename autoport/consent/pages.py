"""The consent pages' surface (autoport.web): their templates, catalogue and stylesheet,
what every consent page's template sees, and their error page.

The sandbox's simulated carmaker login (autoport.sandbox.oem_login) is drawn with these
templates too, and answers its problems with this error page.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from autoport.catalog.brands import brand_name
from autoport.catalog.labels import group_for_consent
from autoport.proof.pages import PROOF_TEMPLATES
from autoport.web import locale
from autoport.web.csrf import Csrf
from autoport.web.errors import PageError, PageRoute, page_router
from autoport.web.http import prefix
from autoport.web.surface import Surface

SURFACE = Surface(
    "consent", Path(__file__).parent, templates=(PROOF_TEMPLATES,), stylesheets=("consent.css",)
)
CSRF = Csrf("consent")
COOKIE = "autoport_consent"
PAGES = "/oauth/consent"
STYLESHEET = "static/consent.css"


def page_url(request: Request, step: str) -> str:
    """A consent page's (or its static file's) path under the environment's prefix."""
    return f"{prefix(request)}{PAGES}/{step}"


def request_locale(request: Request) -> str:
    """The language of a page no session speaks for: `lang` or `locale`, else the
    browser's."""
    query = request.query_params
    accept_language = request.headers.get("accept-language")
    return locale.negotiate(query.get("lang"), query.get("locale"), accept_language=accept_language)


brand_label = brand_name


@lru_cache(maxsize=512)
def consent_groups(properties: tuple[str, ...], locale: str) -> tuple[Any, ...]:
    """Cached: an application's list is the same for every owner (catalog is immutable)."""
    return tuple(group_for_consent(properties, locale))


@lru_cache(maxsize=512)
def consent_commands(commands: tuple[str, ...], locale: str) -> tuple[str, ...]:
    """The plain-word names of the vehicle commands an application asks for."""
    from autoport.catalog.commands import COMMANDS

    found = (COMMANDS.by_key(key) for key in COMMANDS.ordered(commands))
    return tuple(command.label(locale) for command in found if command is not None)


def error_page(request: Request, problem: PageError) -> Response:
    """The error page of `problem`, in the request's language (`lang`/`locale`, else the
    browser's). A finished consent's cookie is forgotten."""
    response = SURFACE.render(
        "error.html",
        request_locale(request),
        status=problem.status,
        kind=problem.kind,
        retry_after=problem.retry_after,
        switch=None,
        stylesheet=page_url(request, STYLESHEET),
    )
    if problem.kind == "finished":
        response.delete_cookie(COOKIE, path=prefix(request) + "/oauth")
    return response


class ConsentRoute(PageRoute):
    def error_page(self, request: Request, problem: PageError) -> Response:
        return error_page(request, problem)


def router(**kwargs: Any) -> APIRouter:
    """A router of consent pages (problems answered with `error_page`)."""
    return page_router(ConsentRoute, **kwargs)
