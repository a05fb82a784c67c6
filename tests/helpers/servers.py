"""Servers the tests start: an ASGI app under uvicorn in the test's own event loop or in
a thread, and `autoport serve` as a child process.

Start-up never races another test worker for a port: an in-process server listens on a
socket bound before it starts (`ports.bound_socket`), and a child process that lost its
port (it exits at once, "address already in use") is started again on a new one. A
server that fails to start is an AssertionError naming why, never uvicorn's
`SystemExit(3)`, which escapes a fixture as a BaseException and takes the xdist worker
down with an INTERNALERROR."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from tests.helpers.ports import bound_socket, free_port, port_of


@dataclass(frozen=True)
class Served:
    server: uvicorn.Server
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _config(app: Any, **options: Any) -> uvicorn.Config:
    options.setdefault("log_level", "warning")
    return uvicorn.Config(app, **options)


@contextlib.asynccontextmanager
async def uvicorn_in_loop(
    app: Any,
    sock: socket.socket | None = None,
    *,
    start_timeout: float = 30,
    stop_timeout: float = 15,
    **options: Any,
) -> AsyncIterator[Served]:
    """`app` served in this event loop on `sock` (a new bound socket when None);
    `options` are uvicorn.Config's (log_level warning unless given)."""
    sock = sock or bound_socket()
    server = uvicorn.Server(_config(app, **options))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    deadline = time.monotonic() + start_timeout
    try:
        while not server.started:
            if task.done():
                _raise_start_failure(task)
            assert time.monotonic() < deadline, f"uvicorn did not start in {start_timeout} s"
            await asyncio.sleep(0.01)
    except BaseException:
        server.should_exit = True
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        sock.close()
        raise
    try:
        yield Served(server, port_of(sock))
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(task, stop_timeout)
        finally:
            sock.close()


def _raise_start_failure(task: asyncio.Task[None]) -> None:
    try:
        task.result()
    except SystemExit as error:  # uvicorn's start-up failure: not a BaseException here
        raise AssertionError(f"uvicorn failed to start (exit {error.code})") from None
    raise AssertionError("uvicorn stopped before it started")


@contextlib.contextmanager
def uvicorn_in_thread(
    app: Any,
    sock: socket.socket | None = None,
    *,
    start_timeout: float = 30,
    stop_timeout: float = 10,
    **options: Any,
) -> Iterator[Served]:
    """`app` served by uvicorn in a thread of its own (its own event loop): for tests
    that block, a browser's above all."""
    sock = sock or bound_socket()
    server = uvicorn.Server(_config(app, **options))
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as error:  # SystemExit(3) included: reported below
            failure.append(error)

    thread = threading.Thread(target=run, daemon=True, name="uvicorn")
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        if not thread.is_alive():
            sock.close()
            raise AssertionError(f"uvicorn failed to start: {failure[:1]!r}")
        if time.monotonic() >= deadline:
            server.should_exit = True
            thread.join(stop_timeout)
            sock.close()
            raise AssertionError(f"uvicorn did not start in {start_timeout} s")
        time.sleep(0.02)
    try:
        yield Served(server, port_of(sock))
    finally:
        server.should_exit = True
        thread.join(timeout=stop_timeout)
        sock.close()


# ---------------------------------------------------------------- `autoport serve`


class PortTaken(AssertionError):
    """The child process could not bind its port (another process took it first)."""


# A process's start-up is a few seconds of CPU: on two cores shared with other test
# workers (and other suites) 30 s were seen to pass before it answered.
def wait_until_up(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stderr = b""
            if process.stderr is not None:
                with contextlib.suppress(ValueError, OSError):
                    stderr = process.stderr.read() or b""
            text = stderr.decode(errors="replace")
            if "address already in use" in text.lower():
                raise PortTaken(f"serve lost its port: {text[-500:]}")
            raise AssertionError(f"serve exited early with {process.returncode}: {text[-2000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer in {timeout}s")


def serve(tmp_path: Path, *args: str, **env_vars: str) -> tuple[subprocess.Popen[bytes], str]:
    """`autoport serve` on a free port with its data in `tmp_path`; the process and its
    base URL (not yet answering: `wait_until_up`, or `serve_until_up` for both)."""
    port = free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(tmp_path / "data"),
        "AUTOPORT_PORT": str(port),
        **env_vars,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "serve", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return process, f"http://127.0.0.1:{port}"


START_ATTEMPTS = 3


def serve_until_up(
    tmp_path: Path, *args: str, path: str = "/healthz", **env_vars: str
) -> tuple[subprocess.Popen[bytes], str]:
    """`serve`, answering on `path`; started again on a new port when another process
    took the first one between its choice and the server's bind."""
    for attempt in range(START_ATTEMPTS):
        process, base = serve(tmp_path, *args, **env_vars)
        try:
            wait_until_up(f"{base}{path}", process)
        except PortTaken:
            if attempt == START_ATTEMPTS - 1:
                raise
            continue
        except BaseException:
            process.kill()
            process.wait(10)
            raise
        return process, base
    raise AssertionError("unreachable")


class ApplicationCallback(BaseHTTPRequestHandler):
    """An application's redirect URI for the browser tests: a page the consent and owner
    flows land on (the tests read what arrived from the URL)."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>Application</title><h1>Back at the application</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass
