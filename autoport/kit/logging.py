"""Structured logs (structlog): JSON for machines, console for people; the request id of
the current request is added to every line logged while serving it.

A database outage (kit.db.DatabaseUnavailable) is logged once per outage, without a
traceback: a restart otherwise fails hundreds of requests and every background worker's
rounds, each with its own traceback.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import Any

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
    write to a closed file afterwards."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


STDERR = _CurrentStderr()


# Probes (load balancers, Kubernetes) and metric scrapes arrive every few seconds; their
# access lines would drown the log at info, so they are logged at debug only.
QUIET_PATHS = frozenset({"/healthz", "/metrics"})


def _quiet_probes(level: int) -> structlog.typing.Processor:
    def drop(
        _logger: Any, _method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        if event.get("event") == "request" and event.get("path") in QUIET_PATHS:
            raise structlog.DropEvent
        return event

    def keep(
        _logger: Any, _method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        return event

    return drop if level > logging.DEBUG else keep


def configure_logging(level: str = "info", fmt: str = "console") -> None:
    """structlog's lines and those of libraries using the standard logging module
    (uvicorn, alembic) through one renderer: with `json`, every line is one JSON object."""
    numeric = logging.getLevelName(level.upper())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_request_id,
            quiet_outages,
            structlog.processors.add_log_level,
            _quiet_probes(numeric),
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
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
