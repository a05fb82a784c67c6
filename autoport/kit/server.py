"""Running the app under uvicorn, as `autoport serve` does: one process, or several
worker processes on PostgreSQL.

uvicorn's shutdown stops accepting connections, then waits (up to the grace period) for
open requests to finish before the lifespan ends. An SSE stream never finishes by
itself, so each open stream would hold the shutdown for the whole grace period. The
single-process server here first tells its app that it is stopping
(`AppState.begin_shutdown`): streams end at once, and their clients reconnect with
Last-Event-ID. uvicorn's worker processes run its own server class, so there the
streams still end only when the grace period does.

The server's protocol (`HttpProtocol`) is uvicorn's httptools protocol with three changes:

- the request line and headers are limited to `max_header_bytes` in the server itself:
  httptools, uvicorn's fast parser, has no limit and would buffer megabytes of headers
  before the app could refuse them;
- a response leaves in one send (`CoalescedWrites`), not two;
- uvicorn's own access line is never written: the request pipeline writes autoport's
  (kit.logging.AccessLog), one per request.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.supervisors import Multiprocess

from autoport.config import Settings
from autoport.kit import metrics
from autoport.kit.errors import refusal_body
from autoport.kit.logging import flush_access_log
from autoport.kit.state import begin_shutdown_of_served_apps

GRACE_SECONDS = 10
# How long a refused connection is still read (and what arrives dropped) before closing.
LINGER_SECONDS = 2.0
# uvicorn's (and h11's) default for the h11 parser's limit, used when none is given.
DEFAULT_MAX_HEADER_BYTES = 16 * 1024


class CoalescedWrites(asyncio.Transport):
    """A connection's transport whose writes made in one turn of the event loop leave
    together at the end of that turn: one send, one TCP segment for a small response.

    uvicorn writes a response's status line and headers, then its body, as two writes.
    With TCP_NODELAY (uvloop sets it) each is a send and a segment of its own, and the
    client wakes for each. aiohttp's server and Bun send a small response's head and
    body together for the same reason. uvicorn offers no option for it, hence this
    wrapper. Measured by `python -m bench pull_live`, runs with and without it taken
    in turn on one 2-core machine: PostgreSQL with 2 workers, push 8,126 and 8,601 ->
    13,250 and 14,034 req/s; SQLite, one process, push 66 % and 68 % of the floor ->
    93 % and 92 % (the floor, plain uvicorn, writes twice).

    A response whose body comes later (an SSE stream's first event) still gets its
    head at the end of the turn that wrote it, not when the body comes. Writes leave at
    once when `FLUSH_BYTES` are held, so a long streamed body (an owner's data export)
    meets the transport's flow control as before. Closing, a half-close and the write
    buffer size see the writes still held."""

    # The transport's default high-water mark (asyncio's and uvloop's).
    FLUSH_BYTES = 64 * 1024

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.transport = transport
        self.loop = loop
        self.held: list[bytes] = []
        self.held_bytes = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.held:
            self.loop.call_soon(self.flush)
        self.held.append(bytes(data))
        self.held_bytes += len(data)
        if self.held_bytes >= self.FLUSH_BYTES:
            self.flush()

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        for data in list_of_data:
            self.write(data)

    def flush(self) -> None:
        if not self.held:
            return
        held, self.held, self.held_bytes = self.held, [], 0
        if self.transport.is_closing():
            return  # the client went: what it was sent goes nowhere, as with a write
        if len(held) == 1:
            self.transport.write(held[0])
        else:
            self.transport.writelines(held)  # uvloop: one writev

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def write_eof(self) -> None:
        self.flush()
        self.transport.write_eof()

    def abort(self) -> None:
        self.held, self.held_bytes = [], 0
        self.transport.abort()

    def get_write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size() + self.held_bytes

    def can_write_eof(self) -> bool:
        return self.transport.can_write_eof()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self.transport.pause_reading()

    def resume_reading(self) -> None:
        self.transport.resume_reading()

    def is_reading(self) -> bool:
        return self.transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.transport.get_protocol()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self.transport.get_write_buffer_limits()


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, writing through `CoalescedWrites`, and refusing a
    request whose request line and headers pass the limit with 431 (in the errors
    shape), then closing the connection. The limit is uvicorn's
    `h11_max_incomplete_event_size`, so that the same setting bounds the headers
    whichever parser runs.

    Counted per read: every byte received while a request's headers are still
    incomplete. A read that also carries the end of the previous request (pipelining)
    counts whole; the app's own check (kit.middleware) is exact."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        # uvicorn decides by whether its `uvicorn.access` logger has a handler (the root's
        # counts), not by access_log=False: every request was logged twice.
        self.access_log = False
        self.max_header_bytes = config.h11_max_incomplete_event_size or DEFAULT_MAX_HEADER_BYTES
        self.reading_headers = False
        self.header_bytes = 0
        self.refused = False

    # uvicorn's own override narrows the transport the same way.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CoalescedWrites(transport, self.loop))

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading_headers = True
        self.header_bytes = 0

    def on_headers_complete(self) -> None:
        self.reading_headers = False
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return  # what the client still sends after the 431 is dropped unread
        super().data_received(data)
        if not self.reading_headers or self.transport.is_closing():
            return
        self.header_bytes += len(data)
        if self.header_bytes > self.max_header_bytes:
            self.reading_headers = False
            self.send_431_response()

    def send_431_response(self) -> None:
        detail = f"the request line and headers are larger than {self.max_header_bytes} bytes"
        body = refusal_body(os.urandom(16).hex(), 431, detail, None, oauth=False)
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n"
            b"connection: close\r\n\r\n" + body
        )
        # A lingering close: closing while the client is still sending would reset the
        # connection, and a reset can destroy the 431 before the client reads it. So
        # the answer is sent and our side shut, the rest of the request read and
        # dropped, and the connection closed when the client closes it, or after a while.
        self.refused = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
        asyncio.get_running_loop().call_later(LINGER_SECONDS, self.transport.close)


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stop = on_stop

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        begin_shutdown_of_served_apps()
        await super().shutdown(sockets)
        flush_access_log()  # uvicorn then ends the process by its signal: no exit handler
        # Here, not after `run`: uvicorn ends the process by re-raising the signal.
        self.on_stop()


def bind(settings: Settings) -> socket.socket:
    """The listening socket, bound before anything else happens (secrets, the demo), so
    that a busy port fails the start before it has shown anything once. OSError when
    the address cannot be bound."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((settings.host, settings.port))
        sock.listen(2048)  # uvicorn's backlog
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)  # worker processes serve from it
    return sock


def run(
    settings: Settings,
    sock: socket.socket,
    *,
    factory: str,
    workers: int = 1,
    on_stop: Callable[[], None] = lambda: None,
) -> None:
    """Serve the app `factory` makes (`module:function`, called with no argument in this
    process or in each worker process) on `sock` (from `bind`); `on_stop` runs once it
    stopped serving. A name, not the function: worker processes import it themselves, and
    the kit does not import the app it serves.
    The host and port are passed on to worker processes through the environment: the
    command line may have set them."""
    os.environ["AUTOPORT_HOST"] = settings.host
    os.environ["AUTOPORT_PORT"] = str(sock.getsockname()[1])
    # `--no-workers` reaches uvicorn's worker processes the same way.
    os.environ["AUTOPORT_BACKGROUND_WORKERS"] = str(settings.background_workers).lower()
    own_metrics_dir = None
    if workers > 1 and not metrics.multiprocess_dir():
        # The worker processes sum their metrics in one /metrics (kit.metrics); a
        # directory of this server's own, set before they start.
        own_metrics_dir = tempfile.mkdtemp(prefix="autoport-metrics-")
        os.environ[metrics.MULTIPROC_ENV] = own_metrics_dir
    config = uvicorn.Config(
        factory,
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_level=settings.log_level,
        # Our handler renders uvicorn's lines like every other (JSON when stderr is not a
        # terminal); uvicorn's own configuration would print plain text.
        log_config=None,
        access_log=False,  # HttpProtocol makes sure; the pipeline writes the access line
        # X-Forwarded-For/-Proto are believed from these proxies only (docs/operations.md).
        proxy_headers=True,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        http=HttpProtocol,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        timeout_graceful_shutdown=GRACE_SECONDS,
    )
    if workers == 1:
        Server(config, on_stop).run(sockets=[sock])
    else:
        try:
            Multiprocess(config, sockets=[sock]).run()
        finally:
            on_stop()
            if own_metrics_dir is not None:
                shutil.rmtree(own_metrics_dir, ignore_errors=True)
