"""Routes and responses every feature uses.

`HotRoute` is a route answered before FastAPI (autoport.app composes them).
`api_router()` gives routers whose JSON-body routes refuse other content types with a
415 in our error shape (FastAPI would otherwise try to parse them and answer a confusing
422), and complain about bodies only after authentication. `json_response` writes
bytes with orjson: FastAPI's encoder costs 2.6x on hot paths.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import orjson
from fastapi import APIRouter, Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.requests import Request as StarletteRequest
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from autoport.kit.auth import current_caller, require_admin
from autoport.kit.errors import ApiError, OAuthError, error_response, oauth_error_response

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def is_json_content_type(value: str) -> bool:
    media_type = value.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


class JsonApiRoute(APIRoute):
    """Bodies of JSON routes: a body of another content type is a 415, an empty one a
    400 (kit.errors.validation_items), malformed JSON a 400. Each only after the
    caller is authenticated: FastAPI reads the body before it resolves dependencies, so
    a caller without a token would otherwise learn about the body before the 401."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler
        authenticators = _authenticators(self.dependant)

        async def authenticate(request: Request) -> None:
            for authenticator in authenticators:
                await authenticator(request)

        async def checked(request: Request) -> Response:
            if request.method in _BODY_METHODS:
                content_type = request.headers.get("content-type", "")
                has_body = request.headers.get("content-length", "0") != "0" or (
                    "transfer-encoding" in request.headers
                )
                if has_body and not is_json_content_type(content_type):
                    await authenticate(request)
                    raise ApiError(
                        415,
                        f"Content-Type must be application/json, got {content_type or 'none'}",
                        source="Content-Type",
                    )
            try:
                return await handler(request)
            except RequestValidationError as error:
                if any(item.get("type") == "json_invalid" for item in error.errors()):
                    await authenticate(request)  # raised before the dependencies ran
                raise

        return checked


def _authenticators(dependant: Dependant) -> list[Callable[[Request], Awaitable[Any]]]:
    """The authentication dependencies of a route (caller or admin token), however deep
    they are declared."""
    found: list[Callable[[Request], Awaitable[Any]]] = []
    stack = [dependant]
    while stack:
        current = stack.pop()
        if current.call in _AUTHENTICATORS and current.call not in found:
            found.append(current.call)
        stack.extend(current.dependencies)
    return found


_AUTHENTICATORS: tuple[Callable[[Request], Awaitable[Any]], ...] = (current_caller, require_admin)


def api_router(**kwargs: Any) -> APIRouter:
    return APIRouter(route_class=JsonApiRoute, **kwargs)


def json_response(
    content: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(
        orjson.dumps(content),
        status_code=status_code,
        headers=headers,
        media_type="application/json",
    )


class JsonBytes(Response):
    """A 200 whose JSON body is serialized already, with extra headers as raw pairs:
    the bytes `Response(body, media_type="application/json")` with those headers added
    sends (content-length, content-type, then the extra ones), without Starlette's
    header assembly (~1 µs of every pull)."""

    media_type = "application/json"

    def __init__(self, body: bytes, raw_headers: list[tuple[bytes, bytes]]) -> None:
        self.status_code = 200
        self.background = None
        self.body = body
        self.raw_headers = [
            (b"content-length", b"%d" % len(body)),
            (b"content-type", b"application/json"),
            *raw_headers,
        ]


Endpoint = Callable[[StarletteRequest], Awaitable[Response]]


class HotRoute(Route):
    """A plain Starlette route for the hottest paths (the vehicle data pull, the token
    endpoint, commands): its endpoint takes a Request and returns a Response, without
    FastAPI's dependency resolution, validation and middleware (together they cost more
    than the whole pull: architecture.md). An ApiError it raises is answered in the
    errors shape, an OAuthError in RFC 6749's, as FastAPI's handlers would. The same
    endpoint is also declared on a FastAPI router, which documents it in the OpenAPI
    description (tests/vehicle_data/test_hot_route_twin.py and
    tests/oauth/test_token_hot_route_twin.py hold the two to the same answers)."""

    def __init__(self, path: str, endpoint: Endpoint, *, methods: list[str]) -> None:
        super().__init__(path, _Answering(endpoint), methods=methods, name=endpoint.__name__)


class _Answering:
    """The ASGI app of a HotRoute (a class, so Starlette does not wrap it again)."""

    __slots__ = ("endpoint",)

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = StarletteRequest(scope, receive)
        response: Response
        try:
            response = await self.endpoint(request)
        except ApiError as error:
            response = error_response(request, error.status, error.items(), error.headers)
        except OAuthError as error:
            response = oauth_error_response(error)
        await response(scope, receive, send)


_Endpoint = TypeVar("_Endpoint", bound=Callable[..., Any])


def documented(extra: str) -> Callable[[_Endpoint], _Endpoint]:
    """Append `extra` (markdown, a shared rule) to a route's docstring, which FastAPI
    makes its API description. Put it below the router's decorator: it must run first
    (a `__doc__` changed after the route is registered never reaches the description)."""

    def add(endpoint: _Endpoint) -> _Endpoint:
        endpoint.__doc__ = f"{inspect.cleandoc(endpoint.__doc__ or '')}\n\n{extra.strip()}"
        return endpoint

    return add
