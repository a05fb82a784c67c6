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


def configure_logging(level: str = "info", fmt: str = "console") -> None:
    numeric = logging.getLevelName(level.upper())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_request_id,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    # Libraries that use the standard logging module (uvicorn, alembic) at the same level.
    logging.basicConfig(
        level=numeric, stream=sys.stderr, format="%(levelname)s %(name)s %(message)s"
    )
