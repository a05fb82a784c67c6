"""Ports for the servers tests start."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nobody listens on now. Racy by nature (another process may take it before
    the caller binds it): for a server the test binds itself use `bound_socket`; for a
    child process, `servers.serve_until_up` starts again on a new port when it was."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bound_socket() -> socket.socket:
    """A TCP socket bound to a port of its own on 127.0.0.1, for uvicorn's
    `serve(sockets=[...])`: the port is held from here on, so starting the server
    cannot lose it to another test worker."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening at once: Linux hands the same ephemeral port to two SO_REUSEADDR sockets
    # that are bound but not listening, and the second listen() (uvicorn's) then failed
    # with EADDRINUSE (seen in a full run). A listening socket's port is its own.
    sock.listen(128)
    return sock


def port_of(sock: socket.socket) -> int:
    return int(sock.getsockname()[1])
