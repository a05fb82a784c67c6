"""Structured logs (structlog): JSON for machines, console for people; the request id of
the current request is added to every line logged while serving it."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import Any

import structlog

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
