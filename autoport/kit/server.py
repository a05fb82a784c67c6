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
from collections.abc import Callable

import uvicorn
from fastapi import FastAPI
from uvicorn.supervisors import Multiprocess

from autoport.config import Settings, ensure_secrets
from autoport.kit.logging import configure_logging
from autoport.kit.state import begin_shutdown_of_served_apps

GRACE_SECONDS = 10


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stop = on_stop

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        begin_shutdown_of_served_apps()
        await super().shutdown(sockets)
        # Here, not after `run`: uvicorn ends the process by re-raising the signal.
        self.on_stop()


def app_from_environment() -> FastAPI:
    """The factory uvicorn calls, in this process or in each worker process: settings
    from the environment (and config file), secrets from the data directory."""
    from autoport.app import create_app

    settings, _ = ensure_secrets(Settings())
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings)


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
    workers: int = 1,
    on_stop: Callable[[], None] = lambda: None,
) -> None:
    """Serve the app on `sock` (from `bind`); `on_stop` runs once it stopped serving.
    The host and port are passed on to worker processes through the environment: the
    command line may have set them."""
    os.environ["AUTOPORT_HOST"] = settings.host
    os.environ["AUTOPORT_PORT"] = str(sock.getsockname()[1])
    config = uvicorn.Config(
        f"{__name__}:app_from_environment",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_level=settings.log_level,
        # Our handler renders uvicorn's lines like every other (JSON with
        # AUTOPORT_LOG_FORMAT=json); uvicorn's own configuration would print plain text.
        log_config=None,
        access_log=False,
        proxy_headers=True,
        timeout_graceful_shutdown=GRACE_SECONDS,
    )
    if workers == 1:
        Server(config, on_stop).run(sockets=[sock])
    else:
        try:
            Multiprocess(config, sockets=[sock]).run()
        finally:
            on_stop()
