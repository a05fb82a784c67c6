"""The request pipeline, as one pure-ASGI layer outside the framework (each layer costs
microseconds on the hot paths, and BaseHTTPMiddleware far more): environment, request
id, metrics, access log, and a last-resort 500 in our error shape that still carries
X-Request-Id.

It also answers the hot routes itself (the vehicle data pull): plain Starlette routes
whose endpoint takes a Request and returns a Response, with ApiError rendered in the
errors shape. Everything else goes on to FastAPI, whose middleware layers and router
cost more than the whole pull (architecture.md); FastAPI keeps documenting the hot
routes in the OpenAPI description.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from os import urandom
from time import perf_counter
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from autoport.kit.environments import EnvironmentRouter
from autoport.kit.errors import (
    OAUTH_CONTENT_TOO_LARGE_BODY,
    OAUTH_NO_STORE,
    ApiError,
    content_too_large_body,
    error_response,
    internal_error_body,
    is_oauth_path,
)
from autoport.kit.logging import REQUEST_ID
from autoport.kit.metrics import request_counter, request_timer

log = structlog.get_logger("autoport.http")

# An incoming X-Request-Id is kept (so ids follow a request across proxies) only when it
# is short and plain; anything else is replaced, never echoed.
_SAFE_REQUEST_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,128}$")


class RequestPipeline:
    def __init__(
        self,
        app: ASGIApp,
        *,
        environments: EnvironmentRouter,
        access_log: bool,
        max_body_bytes: int,
        hot_routes: Sequence[Route] = (),
    ) -> None:
        self.app = app
        self.environments = environments
        self.access_log = access_log
        self.hot_routes = tuple(hot_routes)
        # A declared Content-Length over the limit is answered before any reading. A body
        # without one (chunked) is read here up to the limit, then handed on.
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, _freeze_after_startup(send))
                return
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        request_id, length = _scan_headers(scope["headers"])
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        environment = state["environment"] = self.environments.route(scope)  # type: ignore[arg-type]
        header = (b"x-request-id", request_id.encode())
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        # A plain ContextVar (read by kit.logging only when a line is logged), not
        # structlog's bind/unbind_contextvars: those cost several µs per request.
        token = REQUEST_ID.set(request_id)
        method = scope["method"]
        try:
            if length is None and method in _BODY_METHODS:
                receive = await self._buffered(receive)
            if (length is not None and length > self.max_body_bytes) or receive is _TOO_LARGE:
                status = 413
                if is_oauth_path(scope["path"]):  # RFC 6749 shape on the OAuth endpoints
                    await _send_error(
                        send_with_id, 413, OAUTH_CONTENT_TOO_LARGE_BODY, _OAUTH_HEADERS
                    )
                else:
                    await _send_error(send_with_id, 413, content_too_large_body(request_id))
            elif (route := self._hot_route(scope)) is not None:
                await _serve(route, scope, receive, send_with_id)
            else:
                await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("unhandled error", path=scope["path"], method=method)
            if not response_started:
                await _send_error(send_with_id, 500, internal_error_body(request_id))
        finally:
            elapsed = perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            request_counter(method, template, _status_text(status)).inc()
            request_timer(method, template).observe(elapsed)
            if self.access_log:
                log.info(
                    "request",
                    method=method,
                    path=scope["path"],
                    environment=str(environment),
                    status=status,
                    ms=round(elapsed * 1000, 2),
                )
            REQUEST_ID.reset(token)

    def _hot_route(self, scope: Scope) -> Route | None:
        # A hot route matches its methods (GET also means HEAD); another method on its
        # path is a partial match, left to FastAPI's 405.
        for route in self.hot_routes:
            match, child_scope = route.matches(scope)
            if match is Match.FULL:
                scope.update(child_scope)
                scope["route"] = route
                return route
        return None

    async def _buffered(self, receive: Receive) -> Receive:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return _TOO_LARGE
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()  # then only http.disconnect can come
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


async def _serve(route: Route, scope: Scope, receive: Receive, send: Send) -> None:
    request = Request(scope, receive)
    response: Response
    try:
        response = await route.endpoint(request)
    except ApiError as error:
        response = error_response(request, error.status, error.items(), error.headers)
    await response(scope, receive, send)


async def _TOO_LARGE() -> Message:
    raise RuntimeError("body over the limit")


def _scan_headers(headers: list[tuple[bytes, bytes]]) -> tuple[str, int | None]:
    """The request id (the incoming one when plain, else a new one) and the declared
    Content-Length, in one pass over the headers."""
    incoming: bytes | None = None
    declared: bytes | None = None
    for name, value in headers:
        # The first of each counts.
        if name == b"x-request-id" and incoming is None:
            incoming = value
        elif name == b"content-length" and declared is None:
            declared = value
    length = int(declared) if declared is not None and declared.isdigit() else None
    request_id = (
        incoming.decode() if incoming is not None and _SAFE_REQUEST_ID.match(incoming) else None
    )
    # 32 hex digits like uuid4().hex, at a third of its cost.
    return request_id or urandom(16).hex(), length


_STATUS_TEXT = {code: str(code) for code in range(100, 600)}


def _status_text(status: int) -> str:
    return _STATUS_TEXT.get(status) or str(status)


_frozen = False


def _freeze_after_startup(send: Send) -> Send:
    """Once the app has started (routes, catalog, schemas, connections: ~160k objects),
    move everything alive into the collector's permanent generation (gc.freeze). A full
    collection then scans only what requests allocated since; without it, each one walks
    the whole heap for ~100-250 ms, every request waiting meanwhile (the p99 at load).
    Done once per process: test runs start many apps in one."""

    async def wrapped(message: Message) -> None:
        global _frozen
        if message["type"] == "lifespan.startup.complete" and not _frozen:
            _frozen = True
            gc.collect()
            gc.freeze()
        await send(message)

    return wrapped


_OAUTH_HEADERS = tuple((k.lower().encode(), v.encode()) for k, v in OAUTH_NO_STORE.items())


async def _send_error(
    send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
