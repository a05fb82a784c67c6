"""The server's protocol (kit.server.HttpProtocol) under uvicorn on a real socket and
uvloop, as `autoport serve` runs it: a response leaves in one send, and holding writes
until the end of the event loop's turn loses, reorders and delays nothing a client
waits for.

What reaches the connection's real transport is seen through `Seen`, which records each
call and passes it on unchanged."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn
import uvloop

from autoport.kit.server import CoalescedWrites, HttpProtocol

Scope = dict[str, Any]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Any, Send], Awaitable[None]]

BODY = b"x" * 11_500  # about the size of a pulled vehicle


class Seen:
    """The real transport, passed every call; keeps what was written, one entry a call."""

    def __init__(self, transport: asyncio.Transport, sends: list[bytes]) -> None:
        self.transport = transport
        self.sends = sends

    def write(self, data: bytes) -> None:
        self.sends.append(bytes(data))
        self.transport.write(data)

    def writelines(self, list_of_data: list[bytes]) -> None:
        self.sends.append(b"".join(list_of_data))
        self.transport.writelines(list_of_data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


def serve_and_run(app: ASGIApp, client: Callable[[int], Awaitable[None]]) -> list[bytes]:
    """Serve `app` with HttpProtocol on a free port under uvloop, run `client(port)`
    against it; what reached the real transports, one entry per call."""
    sends: list[bytes] = []

    class SeenProtocol(HttpProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(Seen(transport, sends))  # type: ignore[arg-type]

    async def scenario() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        config = uvicorn.Config(
            app, http=SeenProtocol, log_config=None, lifespan="off", timeout_graceful_shutdown=1
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        try:
            await asyncio.wait_for(client(sock.getsockname()[1]), 10)
        finally:
            server.should_exit = True
            await task

    uvloop.run(scenario())
    return sends


async def answer_of(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One response with a Content-Length: its head and its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.startswith(b"content-length")
    )
    return head, await reader.readexactly(length)


async def small(scope: Scope, receive: Any, send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", b"%d" % len(BODY))],
        }
    )
    await send({"type": "http.response.body", "body": BODY})


def test_a_response_leaves_in_one_send() -> None:
    async def client(port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(3):
            writer.write(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            head, body = await answer_of(reader)
            assert head.startswith(b"HTTP/1.1 200 ") and body == BODY
        writer.close()

    sends = serve_and_run(small, client)
    # Without CoalescedWrites: six sends, each head apart from its body.
    assert len(sends) == 3
    assert all(send.startswith(b"HTTP/1.1 200 ") and send.endswith(BODY) for send in sends)


def test_pipelined_requests_are_answered_in_order() -> None:
    async def numbered(scope: Scope, receive: Any, send: Send) -> None:
        body = scope["path"].encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-length", b"%d" % len(body))],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def client(port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"".join(b"GET /%d HTTP/1.1\r\nHost: a\r\n\r\n" % n for n in range(5)))
        assert [(await answer_of(reader))[1] for _ in range(5)] == [b"/%d" % n for n in range(5)]
        writer.close()

    serve_and_run(numbered, client)


def test_the_head_of_a_stream_is_not_held_until_its_first_event() -> None:
    # An SSE stream sends its head and then waits for an event, possibly for minutes:
    # the client must see the head at once.
    first_event = asyncio.Event()

    async def stream(scope: Scope, receive: Any, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        await first_event.wait()
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": False})

    async def client(port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 2)
        assert head.startswith(b"HTTP/1.1 200 ")
        first_event.set()
        assert b"data: 1" in await reader.readuntil(b"0\r\n\r\n")
        writer.close()

    serve_and_run(stream, client)


def test_a_long_streamed_body_is_not_held_whole() -> None:
    # An app that writes a long body without yielding (an export from memory): the
    # writes leave as they pass FLUSH_BYTES, so the transport's flow control sees them.
    chunk = b"y" * 16 * 1024
    count = 64

    async def export(scope: Scope, receive: Any, send: Send) -> None:
        size = b"%d" % (len(chunk) * count)
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", size)]}
        )
        for n in range(count):
            await send({"type": "http.response.body", "body": chunk, "more_body": n < count - 1})

    async def client(port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        _, body = await answer_of(reader)
        assert body == chunk * count
        writer.close()

    sends = serve_and_run(export, client)
    assert len(sends) >= len(chunk) * count // CoalescedWrites.FLUSH_BYTES
    assert max(map(len, sends)) < CoalescedWrites.FLUSH_BYTES + len(chunk) + 1024


def test_a_response_before_close_is_delivered_whole() -> None:
    # `Connection: close`: uvicorn closes the transport right after the body's write;
    # what is held must leave first.
    async def client(port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        answer = await reader.read()  # to the end: the server closed
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(BODY)
        writer.close()

    serve_and_run(small, client)
