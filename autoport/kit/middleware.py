"""The request pipeline, as one pure-ASGI layer outside the framework (each layer costs
microseconds on the hot paths, and BaseHTTPMiddleware far more): environment, request
id, metrics, access log, input limits and hygiene, and a last-resort 500 in our error
shape that still carries X-Request-Id.

Before any route runs it refuses what no route should see: headers over the size limit
(431), bodies over the limit (413), JSON bodies nested deeper than
`kit.jsonlimit.MAX_DEPTH` (400, `body`), and control characters anywhere in the path,
query, header values or body (400, naming the field; autoport.kit.hygiene). HEAD is
answered as GET without the body, on every path.

It does only this cross-cutting work: which route answers is the app's router's
business (autoport.app: a Starlette Router with the hot pull route first and FastAPI
mounted behind it).
"""

from __future__ import annotations

import copy
import gc
import random
import re
from collections.abc import Mapping, Sequence
from operator import itemgetter
from time import perf_counter
from typing import Any, NamedTuple

import structlog
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from autoport.kit.db import DatabaseUnavailable
from autoport.kit.environments import Environment, EnvironmentRouter
from autoport.kit.errors import (
    HEAD_AS_GET,
    OAUTH_CONTENT_TOO_LARGE_BODY,
    OAUTH_NO_STORE,
    PathPredicate,
    content_too_large_body,
    internal_error_body,
    refusal_body,
    unavailable_response,
)
from autoport.kit.hygiene import HEADER_CONTROL, control_character_in
from autoport.kit.jsonlimit import depth_over_limit, looks_like_json, too_deep_detail
from autoport.kit.logging import REQUEST_ID, access_line, flush_access_log, sampled
from autoport.kit.metrics import TALLY, ApplicationCounter

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
        access_log: float,
        max_body_bytes: int,
        max_header_bytes: int,
        oauth_path: PathPredicate,
        hsts: Mapping[Environment, str] | None = None,
        count_application: ApplicationCounter | None = None,
    ) -> None:
        self.app = app
        # Each answered request that an application's token got through (kit.auth notes
        # which application on the scope), counted for usage and metrics.
        self.count_application = count_application
        # Paths whose errors are in the RFC 6749 shape (autoport.oauth.paths).
        self.oauth_path = oauth_path
        # Strict-Transport-Security per environment served over https (its base URL):
        # set here, on every answer, so that no route can forget it.
        self.hsts = {
            env: (b"strict-transport-security", value.encode())
            for env, value in (hsts or {}).items()
        }
        self.environments = environments
        # The share of requests answered below 400 whose access line is written (0: no
        # line at all, 1: every one); refusals and errors are always written.
        self.access_log = access_log
        # A declared Content-Length over the limit is answered before any reading. Other
        # bodies are read here (up to the limit: chunked ones declare nothing) and checked
        # for control characters, then handed on.
        self.max_body_bytes = max_body_bytes
        # The request line and headers together. The server (autoport.kit.server) stops
        # reading at this size; this check holds behind any other server too.
        self.max_header_bytes = max_header_bytes

    def around(self, app: ASGIApp) -> RequestPipeline:
        """The same pipeline around another app (tests compare the hot route with its
        documented FastAPI twin behind identical pipelines)."""
        twin = copy.copy(self)
        twin.app = app
        return twin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, _at_startup_and_shutdown(send))
                return
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        scan = _scan_headers(scope["headers"])
        request_id = scan.request_id
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        requested_path = scope["path"]  # for the access line: with its /sandbox prefix
        environment = state["environment"] = self.environments.route(scope)  # type: ignore[arg-type]
        header = (b"x-request-id", request_id.encode())
        hsts = self.hsts.get(environment)
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
                if hsts is not None:
                    message["headers"].append(hsts)
            await send(message)

        # A plain ContextVar (read by kit.logging only when a line is logged), not
        # structlog's bind/unbind_contextvars: those cost several µs per request.
        token = REQUEST_ID.set(request_id)
        method = scope["method"]
        path = scope["path"]
        try:
            body: bytes | None = None
            header_bytes = (
                scan.size + len(scope.get("raw_path") or b"") + len(scope["query_string"])
            )
            if header_bytes > self.max_header_bytes:
                status = 431
                detail = (
                    f"the request line and headers ({header_bytes} bytes) are larger than "
                    f"the limit of {self.max_header_bytes} bytes"
                )
                await self._refuse(send_with_id, path, request_id, 431, detail, None)
                return
            if method in _BODY_METHODS and scan.length != 0:
                if scan.length is not None and scan.length > self.max_body_bytes:
                    receive = _TOO_LARGE
                else:
                    receive, body = await self._buffered(receive)
            if receive is _TOO_LARGE:
                status = 413
                if self.oauth_path(path):  # RFC 6749 shape on the OAuth endpoints
                    await _send_error(
                        send_with_id, 413, OAUTH_CONTENT_TOO_LARGE_BODY, _OAUTH_HEADERS
                    )
                else:
                    await _send_error(send_with_id, 413, content_too_large_body(request_id))
                return
            if body and looks_like_json(body) and (depth := depth_over_limit(body)):
                # Before anything parses it (FastAPI, a hot route, the hygiene check
                # below): kit.jsonlimit.
                status = 400
                detail = f"body: {too_deep_detail(depth)}"
                await self._refuse(send_with_id, path, request_id, 400, detail, "body")
                return
            found = control_character_in(path, scope["query_string"], scan.suspect, body)
            if found is not None:
                status = 400
                await self._refuse(send_with_id, path, request_id, 400, found.detail, found.source)
                return
            reply: Send = send_with_id
            if method == "HEAD":
                # Every GET route answers HEAD too, as HTTP asks (load balancers and
                # `curl -I` use it): GET for the routers, the body left out. A copy of the
                # scope: the server reads its own "method" to frame the answer.
                scope = {**scope, "method": "GET", HEAD_AS_GET: True}
                reply = _without_body(send_with_id)
            await self.app(scope, receive, reply)
        except DatabaseUnavailable as error:
            # Raised where no exception handler runs (a hot route, a streaming body).
            if not response_started:
                response = unavailable_response(
                    Request(scope, receive), error, oauth=self.oauth_path(scope["path"])
                )
                await response(scope, receive, send_with_id)
        except Exception:
            log.exception("unhandled error", path=scope["path"], method=method)
            if not response_started:
                await _send_error(send_with_id, 500, internal_error_body(request_id))
        finally:
            elapsed = perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            count_request(method, template, status, elapsed)
            application_id = state.get("application_id")
            if application_id is not None and self.count_application is not None:
                self.count_application(environment, application_id, status)
            if self.access_log and (status >= 400 or sampled(self.access_log)):
                access_line(
                    request_id,
                    method,
                    requested_path,
                    environment.value,
                    status,
                    round(elapsed * 1000, 2),
                    application_id,
                )
            REQUEST_ID.reset(token)

    async def _refuse(
        self, send: Send, path: str, request_id: str, status: int, detail: str, source: str | None
    ) -> None:
        oauth = self.oauth_path(path)
        body = refusal_body(request_id, status, detail, source, oauth=oauth)
        await _send_error(send, status, body, _OAUTH_HEADERS if oauth else ())

    async def _buffered(self, receive: Receive) -> tuple[Receive, bytes | None]:
        """Read the whole body (up to the limit), and a receive that replays it. A body
        that arrives in one message (nearly all) costs no copy."""
        chunks: list[bytes] = []
        size = 0
        last: Message | None = None
        while True:
            message = await receive()
            if message["type"] != "http.request":
                last = message  # the client left mid-body: the app sees that, not a body
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return _TOO_LARGE, None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()  # then only http.disconnect can come
            delivered = True
            if last is not None:
                return last
            return {"type": "http.request", "body": body, "more_body": False}

        return replay, body


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_has_control = HEADER_CONTROL.search


async def _TOO_LARGE() -> Message:
    raise RuntimeError("body over the limit")


class _HeaderScan(NamedTuple):
    request_id: str
    length: int | None  # the declared Content-Length
    size: int  # bytes of names and values
    suspect: list[tuple[bytes, bytes]]  # headers for kit.hygiene to look at


def _scan_headers(headers: list[tuple[bytes, bytes]]) -> _HeaderScan:
    """The request id (the incoming one when plain, else a new one), the declared
    Content-Length, the headers' size and those kit.hygiene must check, in one pass."""
    incoming: bytes | None = None
    declared: bytes | None = None
    size = 0
    suspect: list[tuple[bytes, bytes]] = []
    for name, value in headers:
        size += len(name)
        # The first of each counts.
        if name == b"x-request-id" and incoming is None:
            incoming = value
        elif name == b"content-length" and declared is None:
            declared = value
        elif name == b"authorization" and value[:6].lower() == b"basic ":
            suspect.append((name, value))  # encoded credentials: hygiene decodes them
    # All values searched at once (joined by a tab, which values may hold): a control
    # character is rare, and only then are they looked at one by one.
    values = b"\t".join(map(_value, headers))
    size += len(values) + 3 * len(headers)  # ": " and CRLF, as on the wire
    if _has_control(values) is not None:
        suspect.extend(header for header in headers if _has_control(header[1]) is not None)
    length = int(declared) if declared is not None and declared.isdigit() else None
    request_id = (
        incoming.decode() if incoming is not None and _SAFE_REQUEST_ID.match(incoming) else None
    )
    return _HeaderScan(request_id or new_request_id(), length, size, suspect)


def new_request_id() -> str:
    """32 hex digits like uuid4().hex. An identifier, not a secret (every answer carries
    it): the process's Mersenne Twister (~0.3 µs), not the system's random source (a
    getrandom call: ~2 µs of the pull under load, os.urandom(16).hex())."""
    return f"{_random_bits(128):032x}"


_random_bits = random.getrandbits


_value = itemgetter(1)

count_request = TALLY.request


_frozen = False


def _at_startup_and_shutdown(send: Send) -> Send:
    """Once the app has started (routes, catalog, schemas, connections: ~160k objects),
    move everything alive into the collector's permanent generation (gc.freeze). A full
    collection then scans only what requests allocated since; without it, each one walks
    the whole heap for ~100-250 ms, every request waiting meanwhile (the p99 at load).
    Done once per process: test runs start many apps in one.
    Once it has stopped, the access lines still held are written (kit.logging) and the
    request counts added to the metrics (kit.metrics.RequestTally): uvicorn's worker
    processes may then end by their signal, with no exit handler run."""

    async def wrapped(message: Message) -> None:
        global _frozen
        if message["type"] == "lifespan.startup.complete" and not _frozen:
            _frozen = True
            gc.collect()
            gc.freeze()
        elif message["type"] == "lifespan.shutdown.complete":
            flush_access_log()
            TALLY.flush()
        await send(message)

    return wrapped


_OAUTH_HEADERS = tuple((k.lower().encode(), v.encode()) for k, v in OAUTH_NO_STORE.items())


def _without_body(send: Send) -> Send:
    """The answer to HEAD: status and headers (Content-Length as for GET), no body. The
    response ends at its first body message, so a stream (SSE) ends at once too: the
    server then reports a disconnect to the app."""
    ended = False

    async def headless(message: Message) -> None:
        nonlocal ended
        if message["type"] == "http.response.start":
            await send(message)
        elif message["type"] == "http.response.body" and not ended:
            ended = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    return headless


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
