"""The request pipeline, as one pure-ASGI middleware (each layer costs microseconds on
the hot paths, and BaseHTTPMiddleware far more): environment, request id, metrics,
access log, and a last-resort 500 in our error shape that still carries X-Request-Id.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from autoport.kit.environments import EnvironmentRouter
from autoport.kit.errors import content_too_large_body, internal_error_body
from autoport.kit.metrics import REQUEST_LATENCY, REQUESTS

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
    ) -> None:
        self.app = app
        self.environments = environments
        self.access_log = access_log
        # A declared Content-Length over the limit is answered before any reading. A body
        # without one (chunked) is read here up to the limit, then handed on.
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _incoming_request_id(scope) or uuid.uuid4().hex
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["environment"] = self.environments.route(scope)  # type: ignore[arg-type]
        header = (b"x-request-id", request_id.encode())
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                message["headers"] = [*message.get("headers", []), header]
            await send(message)

        structlog.contextvars.bind_contextvars(request_id=request_id)
        try:
            length = _declared_length(scope)
            if length is None and scope["method"] in _BODY_METHODS:
                receive = await self._buffered(receive)
            if (length is not None and length > self.max_body_bytes) or receive is _TOO_LARGE:
                status = 413
                await _send_error(send_with_id, 413, content_too_large_body(request_id))
            else:
                await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("unhandled error", path=scope["path"], method=scope["method"])
            if not response_started:
                await _send_error(send_with_id, 500, internal_error_body(request_id))
        finally:
            elapsed = time.perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            REQUESTS.labels(scope["method"], template, str(status)).inc()
            REQUEST_LATENCY.labels(scope["method"], template).observe(elapsed)
            if self.access_log:
                log.info(
                    "request",
                    method=scope["method"],
                    path=scope["path"],
                    environment=str(state["environment"]),
                    status=status,
                    ms=round(elapsed * 1000, 2),
                )
            structlog.contextvars.unbind_contextvars("request_id")

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


def _incoming_request_id(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            return value.decode() if _SAFE_REQUEST_ID.match(value) else None
    return None


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


async def _TOO_LARGE() -> Message:
    raise RuntimeError("body over the limit")


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


async def _send_error(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
