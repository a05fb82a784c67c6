"""The two error shapes (docs/development.md, Errors), and the handlers that guarantee them.

- Everything but OAuth: ``{"errors": [{"title", "source"?, "detail"}], "request_id"}``.
- OAuth endpoints (token, revocation, vehicleinfo): RFC 6749 §5.2
  ``{"error", "error_description"}``.

No handler ever returns a stack trace; unexpected exceptions become a 500 in our shape
and are logged with the request id (see autoport.kit.middleware).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import orjson
import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import iter_route_contexts
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match

from autoport.kit.db import DatabaseUnavailable

log = structlog.get_logger("autoport.http")


@dataclass(frozen=True, slots=True)
class ErrorItem:
    title: str
    detail: str
    source: str | None = None

    def as_dict(self) -> dict[str, str]:
        item = {"title": self.title, "detail": self.detail}
        if self.source is not None:
            item["source"] = self.source
        return item


class ErrorItemSchema(BaseModel):
    """One item of the errors shape (the OpenAPI description of ErrorItem.as_dict)."""

    title: str
    detail: str
    source: str | None = None  # absent when the error is about no one field


class ErrorsSchema(BaseModel):
    """The errors shape, as documented for every 4xx/5xx outside the OAuth endpoints."""

    errors: list[ErrorItemSchema]
    request_id: str


class OAuthErrorSchema(BaseModel):
    """RFC 6749 §5.2, as documented for every error of the OAuth endpoints."""

    error: str
    error_description: str


@dataclass
class ApiError(Exception):
    """An error answered in the `errors` shape. Raise it from any service or route."""

    status: int
    detail: str
    title: str | None = None
    source: str | None = None
    headers: Mapping[str, str] | None = None
    more: Sequence[ErrorItem] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        super().__init__(self.detail)

    def items(self) -> list[ErrorItem]:
        title = self.title or HTTPStatus(self.status).phrase
        return [ErrorItem(title, self.detail, self.source), *self.more]


@dataclass
class OAuthError(Exception):
    """An RFC 6749 §5.2 error. `invalid_client` defaults to 401 as the RFC asks."""

    error: str
    description: str
    status: int = 400
    headers: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        super().__init__(f"{self.error}: {self.description}")


# Set in the scope the routers see when the request pipeline answers HEAD as GET.
HEAD_AS_GET = "autoport.head_as_get"


def request_id_of(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", ""))


def error_response(
    request: Request,
    status: int,
    items: Sequence[ErrorItem],
    headers: Mapping[str, str] | None = None,
) -> Response:
    body = {"errors": [item.as_dict() for item in items], "request_id": request_id_of(request)}
    return Response(
        orjson.dumps(body), status_code=status, headers=headers, media_type="application/json"
    )


# Which paths answer errors in the RFC 6749 shape is the OAuth package's knowledge
# (autoport.oauth.paths.is_oauth_path); the app hands that predicate to the error
# handlers, the request pipeline and the OpenAPI builder.
PathPredicate = Callable[[str], bool]


OAUTH_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def oauth_error_body(error: str, description: str) -> bytes:
    return orjson.dumps({"error": error, "error_description": description})


def oauth_error_response(error: OAuthError) -> Response:
    headers = {**OAUTH_NO_STORE, **(error.headers or {})}
    return Response(
        oauth_error_body(error.error, error.description),
        status_code=error.status,
        headers=headers,
        media_type="application/json",
    )


def _field_path(loc: Sequence[Any]) -> str:
    # ("body", "vehicles", 0, "vin") -> "vehicles[0].vin"; query/path params keep their name.
    parts = [p for p in loc if p not in ("body", "query", "path", "header", "cookie")]
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "body"


def validation_items(errors: Sequence[Mapping[str, Any]]) -> tuple[int, list[ErrorItem]]:
    """Pydantic errors to our items; malformed JSON is a 400, the rest 422."""
    items: list[ErrorItem] = []
    status = 422
    for error in errors:
        kind = error.get("type", "")
        if kind == "json_invalid":
            status = 400
            reason = error.get("ctx", {}).get("error", "invalid JSON")
            items.append(ErrorItem("Malformed JSON", f"the body is not valid JSON: {reason}"))
            continue
        if kind == "missing" and tuple(error.get("loc", ())) == ("body",):
            # No body at all (empty, or never sent): a malformed request like bad JSON.
            status = 400
            items.append(ErrorItem("Missing body", "the request body is empty; send a JSON object"))
            continue
        path = _field_path(error.get("loc", ()))
        message = str(error.get("msg", "invalid value"))
        if kind == "missing":
            detail = f"{path}: field required"
        else:
            detail = f"{path}: {message[0].lower() + message[1:] if message else message}"
        items.append(ErrorItem("Invalid request", detail, path))
    return status, items


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(request, exc.status, exc.items(), exc.headers)


async def _oauth_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OAuthError)
    return oauth_error_response(exc)


async def _http_error(request: Request, exc: HTTPException, oauth_path: PathPredicate) -> Response:
    status = exc.status_code
    headers = exc.headers
    # The method as the client sent it: HEAD reaches the routers as GET.
    method = "HEAD" if request.scope.get(HEAD_AS_GET) else request.method
    if status == 404 and exc.detail == "Not Found":
        detail = f"no route {method} {request.url.path}"
    elif status == 405:
        detail = f"{method} is not allowed on {request.url.path}"
        # Starlette names the methods of the first route on the path only.
        headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
    elif status == 413:
        detail = TOO_LARGE_DETAIL
    else:
        detail = str(exc.detail)
    if oauth_path(request.scope["path"]):
        # 405 (or any other router error) on an OAuth endpoint: still RFC 6749.
        return oauth_error_response(OAuthError("invalid_request", detail, status, headers))
    return error_response(request, status, [ErrorItem(HTTPStatus(status).phrase, detail)], headers)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves on the request's path (the Allow header of a 405):
    the union over all routes whose path matches, with HEAD wherever GET is served (the
    request pipeline answers HEAD as GET without the body)."""
    methods: set[str] = set()
    # Through included routers too (FastAPI nests them, with their prefixes).
    for route in iter_route_contexts(request.app.router.routes):
        route_methods = route.methods
        if route_methods and route.matches(request.scope)[0] is not Match.NONE:
            methods |= route_methods
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    status, items = validation_items(exc.errors())
    return error_response(request, status, items)


TOO_LARGE_DETAIL = "the request body is larger than the configured limit"


def content_too_large_body(request_id: str) -> bytes:
    item = ErrorItem("Content Too Large", TOO_LARGE_DETAIL)
    return orjson.dumps({"errors": [item.as_dict()], "request_id": request_id})


OAUTH_CONTENT_TOO_LARGE_BODY = oauth_error_body("invalid_request", TOO_LARGE_DETAIL)


# A database restart takes a few seconds; clients (and load balancers) retry after this.
RETRY_AFTER_SECONDS = 2
UNAVAILABLE_DETAIL = "the database is unavailable for a moment; retry after a few seconds"


def unavailable_response(request: Request, error: DatabaseUnavailable, *, oauth: bool) -> Response:
    """The 503 of DatabaseUnavailable, in the path's error shape (RFC 6749 when `oauth`;
    the FastAPI handler, and the request pipeline for the hot routes)."""
    # One line per outage, not per request (kit.logging.quiet_outages).
    log.warning("database unavailable: answering 503 with Retry-After", exc_info=error)
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if oauth:
        # RFC 6749's code for "the server is overloaded or under maintenance".
        description = oauth_error_body("temporarily_unavailable", UNAVAILABLE_DETAIL)
        return Response(
            description, 503, {**OAUTH_NO_STORE, **headers}, media_type="application/json"
        )
    item = ErrorItem("Service Unavailable", UNAVAILABLE_DETAIL, "database")
    return error_response(request, 503, [item], headers)


def refusal_body(
    request_id: str, status: int, detail: str, source: str | None, *, oauth: bool
) -> bytes:
    """An error answered by the request pipeline before any route (431, 400 for control
    characters): RFC 6749 shape on the OAuth paths (`oauth`), ours elsewhere."""
    if oauth:
        return oauth_error_body("invalid_request", detail)
    item = ErrorItem(HTTPStatus(status).phrase, detail, source)
    return orjson.dumps({"errors": [item.as_dict()], "request_id": request_id})


def internal_error_body(request_id: str) -> bytes:
    """The 500 body, of whatever nothing else handled (see _internal_error and the
    request pipeline)."""
    item = ErrorItem(
        "Internal Server Error",
        "an unexpected error occurred; quote the request_id when reporting it",
    )
    return orjson.dumps({"errors": [item.as_dict()], "request_id": request_id})


async def _internal_error(request: Request, exc: Exception) -> Response:
    # Starlette's ServerErrorMiddleware answers with this, then re-raises for the
    # request pipeline (outside it) to log with the request id.
    body = internal_error_body(request_id_of(request))
    return Response(body, status_code=500, media_type="application/json")


def install_error_handlers(app: FastAPI, *, oauth_path: PathPredicate) -> None:
    """Every error in its documented shape: RFC 6749's on the paths `oauth_path` names."""

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return await _http_error(request, exc, oauth_path)

    async def unavailable(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, DatabaseUnavailable)
        return unavailable_response(request, exc, oauth=oauth_path(request.scope["path"]))

    app.add_exception_handler(Exception, _internal_error)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(OAuthError, _oauth_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(DatabaseUnavailable, unavailable)
