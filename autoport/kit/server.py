"""Running the app under uvicorn, as `autoport serve` does: one process, or several
worker processes on PostgreSQL.

uvicorn's shutdown stops accepting connections, then waits (up to the grace period) for
open requests to finish before the lifespan ends. An SSE stream never finishes by
itself, so each open stream would hold the shutdown for the whole grace period. The
single-process server here first tells its app that it is stopping
(`AppState.begin_shutdown`): streams end at once, and their clients reconnect with
Last-Event-ID. uvicorn's worker processes run its own server class, so there the
streams still end only when the grace period does.
"""

from __future__ import annotations

import os
import socket

import uvicorn
from fastapi import FastAPI
from uvicorn.supervisors import Multiprocess

from autoport.config import Settings, ensure_secrets
from autoport.kit.logging import configure_logging
from autoport.kit.state import begin_shutdown_of_served_apps

GRACE_SECONDS = 10


class Server(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        begin_shutdown_of_served_apps()
        await super().shutdown(sockets)


def app_from_environment() -> FastAPI:
    """The factory uvicorn calls, in this process or in each worker process: settings
    from the environment (and config file), secrets from the data directory."""
    from autoport.app import create_app

    settings, _ = ensure_secrets(Settings())
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings)


def run(settings: Settings, *, workers: int = 1) -> None:
    """Serve the app on `settings.host:settings.port` (also passed on to worker
    processes through the environment: the command line may have set them)."""
    os.environ["AUTOPORT_HOST"] = settings.host
    os.environ["AUTOPORT_PORT"] = str(settings.port)
    config = uvicorn.Config(
        f"{__name__}:app_from_environment",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_level=settings.log_level,
        access_log=False,
        proxy_headers=True,
        timeout_graceful_shutdown=GRACE_SECONDS,
    )
    if workers == 1:
        Server(config).run()
    else:
        Multiprocess(config, sockets=[config.bind_socket()]).run()
