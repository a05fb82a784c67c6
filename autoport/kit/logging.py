"""Structured logs (structlog): JSON for machines, console for people; the request id of
the current request is added to every line logged while serving it. The format `auto`
(the default) is JSON when stderr, where every line goes, is not a terminal (systemd,
Docker, a pipe, a file) and the console renderer on a terminal.

The access log (one line per request, `AccessLog`) does not go through structlog or the
standard logging module: it is the one line written for every request, so it is rendered
once (orjson) and held for a few milliseconds, then written with the others held meanwhile
in one write. Any other line flushes what is held first, so the order of lines is kept,
and the server flushes when it stops (`flush_access_log`).

A database outage (kit.db.DatabaseUnavailable) is logged once per outage, without a
traceback: a restart otherwise fails hundreds of requests and every background worker's
rounds, each with its own traceback.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import random
import sys
import time
from collections.abc import MutableMapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

import orjson
import structlog

from autoport.kit.db import DatabaseUnavailable

# Set by the request pipeline for each request: one ContextVar.set per request is far
# cheaper than structlog's bind/unbind_contextvars, and only lines logged read it.
REQUEST_ID: ContextVar[str | None] = ContextVar("autoport_request_id", default=None)


def add_request_id(
    _logger: Any, _method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    request_id = REQUEST_ID.get()
    if request_id is not None:
        event.setdefault("request_id", request_id)
    return event


# Lines about the same outage within this many seconds of the last one logged are dropped.
OUTAGE_LOG_INTERVAL_SECONDS = 10.0


class OutageGate:
    """Lets one line about a database outage through per interval, counting the rest."""

    def __init__(self) -> None:
        self.logged_at = -OUTAGE_LOG_INTERVAL_SECONDS
        self.dropped = 0

    def __call__(
        self, _logger: Any, _method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        outage = _outage_in(event.get("exc_info"))
        if outage is None:
            return event
        now = time.monotonic()
        if now - self.logged_at < OUTAGE_LOG_INTERVAL_SECONDS:
            self.dropped += 1
            raise structlog.DropEvent
        del event["exc_info"]  # the cause, in one line, says all a traceback would
        event["error"] = str(outage)
        event["similar_lines_dropped"] = self.dropped
        self.logged_at, self.dropped = now, 0
        return event


def _outage_in(exc_info: Any) -> DatabaseUnavailable | None:
    if exc_info is True:
        error = sys.exc_info()[1]
    elif isinstance(exc_info, tuple):
        error = exc_info[1]
    else:
        error = exc_info if isinstance(exc_info, BaseException) else None
    seen = 0
    while error is not None and seen < 8:  # also when wrapped by a caller
        if isinstance(error, DatabaseUnavailable):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


quiet_outages = OutageGate()


_HANDLER_NAME = "autoport"


class _CurrentStderr:
    """sys.stderr as it is when a line is written: a command run in-process (Typer's
    test runner) replaces it for a while, and a logger bound to that stream would
    write to a closed file afterwards. The access lines held are written first."""

    def write(self, text: str) -> int:
        if ACCESS_LOG.held:
            ACCESS_LOG.flush()
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


STDERR = _CurrentStderr()


# Probes (load balancers, Kubernetes) and metric scrapes arrive every few seconds; their
# access lines would drown the log at info, so they are written at debug only.
QUIET_PATHS = frozenset({"/healthz", "/metrics"})


LogFormat = Literal["auto", "console", "json"]


def resolve_format(fmt: str) -> Literal["console", "json"]:
    """`auto`: JSON unless stderr (where the lines go) is a terminal."""
    if fmt == "auto":
        return "console" if sys.stderr.isatty() else "json"
    return "json" if fmt == "json" else "console"


def _orjson_text(event: Any, **_options: Any) -> str:
    return orjson.dumps(event, default=str).decode()


class AccessLog:
    """The access log: one line per request, written by the request pipeline
    (kit.middleware) at level info, without structlog's processors or a LogRecord.

    A line is rendered at once (orjson, or the console renderer on a terminal) and held;
    the first line held schedules a flush `FLUSH_SECONDS` later on the running event
    loop, so under load the lines of many requests leave in one write. Lines also leave
    when `FLUSH_BYTES` are held, before any other log line, when the server stops
    (`autoport.kit.server`, the app's lifespan) and at exit. Measured by `python -m bench
    pull_live`: logging each request through structlog's console renderer and the stdlib
    handler took ~38 % of the server's CPU at 8k req/s; this line costs a few µs."""

    FLUSH_SECONDS = 0.005
    FLUSH_BYTES = 64 * 1024

    def __init__(self) -> None:
        self.held: list[bytes] = []
        self.held_bytes = 0
        self.enabled = True
        self.quiet_paths: frozenset[str] = QUIET_PATHS
        self.console: structlog.typing.Processor | None = None

    def configure(self, level: int, fmt: Literal["console", "json"]) -> None:
        self.flush()
        self.enabled = level <= logging.INFO
        # Probes and scrapes at debug only (QUIET_PATHS).
        self.quiet_paths = frozenset() if level <= logging.DEBUG else QUIET_PATHS
        self.console = (
            None if fmt == "json" else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        )

    def request(
        self,
        request_id: str,
        method: str,
        path: str,
        environment: str,
        status: int,
        ms: float,
        application: str | None,
    ) -> None:
        if not self.enabled or path in self.quiet_paths:
            return
        now = datetime.now(UTC)
        event: dict[str, Any] = {
            "timestamp": now,
            "level": "info",
            "event": "request",
            "request_id": request_id,
            "method": method,
            "path": path,
            "status": status,
            "ms": ms,
            "environment": environment,
            "application": application,
        }
        if self.console is None:
            line = orjson.dumps(event, option=orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE)
        else:
            event["timestamp"] = now.isoformat().replace("+00:00", "Z")
            line = (str(self.console(None, "info", event)) + "\n").encode()
        held = self.held
        held.append(line)
        self.held_bytes += len(line)
        if self.held_bytes >= self.FLUSH_BYTES:
            self.flush()
        elif len(held) == 1:
            try:
                asyncio.get_running_loop().call_later(self.FLUSH_SECONDS, self.flush)
            except RuntimeError:  # no event loop (a test calling the pipeline by hand)
                self.flush()

    def flush(self) -> None:
        if not self.held:
            return
        held, self.held, self.held_bytes = self.held, [], 0
        data = b"".join(held)
        stream = sys.stderr
        binary = getattr(stream, "buffer", None)
        try:
            if binary is None:
                stream.write(data.decode())
            else:
                stream.flush()  # text written before, still in its buffer, first
                binary.write(data)
                binary.flush()
        except (OSError, ValueError):
            pass  # stderr closed or gone (a pipe whose reader left): as a print would


ACCESS_LOG = AccessLog()
access_line = ACCESS_LOG.request
flush_access_log = ACCESS_LOG.flush
atexit.register(flush_access_log)


def sampled(share: float) -> bool:
    """Whether this request's access line is written, for `access_log_sample` < 1."""
    return share >= 1.0 or random.random() < share


def configure_logging(level: str = "info", fmt: str = "auto") -> None:
    """structlog's lines and those of libraries using the standard logging module
    (uvicorn, alembic) through one renderer: with `json` (and `auto` when stderr is not a
    terminal), every line is one JSON object. The access log (`AccessLog`) the same way."""
    numeric = logging.getLevelName(level.upper())
    resolved = resolve_format(fmt)
    ACCESS_LOG.configure(numeric, resolved)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer(serializer=_orjson_text)
        if resolved == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_request_id,
            quiet_outages,
            structlog.processors.add_log_level,
            timestamper,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=STDERR),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(STDERR)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.stdlib.add_log_level,
                structlog.stdlib.add_logger_name,
                timestamper,
            ],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    # Replaces the handler of an earlier call only: others (pytest's capture) stay.
    root.handlers = [h for h in root.handlers if h.get_name() != _HANDLER_NAME] + [handler]
    root.setLevel(numeric)
    # uvicorn's own loggers keep their handlers unless told otherwise (it is started
    # with log_config=None, see autoport.kit.server): they log through the root's.
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
    # Except its access log: the pipeline writes autoport's own line per request. uvicorn's
    # httptools protocol writes its line whenever this logger has a handler, its own or
    # the root's it propagates to (access_log=False is not enough; kit.server's protocol
    # also turns it off).
    access = logging.getLogger("uvicorn.access")
    access.handlers = []
    access.propagate = False
    access.disabled = True
