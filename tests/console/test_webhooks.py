"""The Webhooks page against a real local receiver (an HTTP server on a loopback port):
save shows the ping's outcome and the secret once, the delivery log shows request and
response, redeliver, send test event; the API's messages for bad input."""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from autoport.config import Settings

from .conftest import Console, World


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"webhook_allow_loopback": True})


class Receiver:
    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.requests.append((dict(self.headers.items()), body))
                answer = b'{"received":true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Receiver", "test")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.server.shutdown()


SECRET_SHOWN = re.compile(r'id="hook-secret">([^<]+)<')


async def test_save_pings_and_shows_the_secret_once(
    console: Console, world: World, receiver: Receiver
) -> None:
    browser = await console.signed_in(world.a.developer)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}/webhook"
    assert (await browser.get(page)).status_code == 200
    saved = await browser.post(
        page, {"url": receiver.url, "events": ["ping", "fleet_clearance_changed"]}, follow=True
    )
    assert saved.status_code == 200, saved.text
    assert "Ping: succeeded" in saved.text and "HTTP 200" in saved.text
    secret = SECRET_SHOWN.search(saved.text)
    assert secret
    assert len(receiver.requests) == 1
    headers, body = receiver.requests[0]
    expected = hmac.new(secret.group(1).encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Svc-Signature-256"] == f"sha256={expected}"
    # The log shows request and response, the secret never again.
    again = await browser.get(page)
    assert secret.group(1) not in again.text
    assert "X-Svc-Signature-256" in again.text and "X-Receiver: test" in again.text
    assert "{&#34;received&#34;:true}" in again.text or '{"received":true}' in again.text
    overview = await browser.get(f"/console/a/{world.a.id}/webhooks")
    assert receiver.url in overview.text
    fragment = await browser.get(page + "/deliveries")
    assert fragment.status_code == 200 and "<html" not in fragment.text
    # Send test event: another ping, same secret.
    tested = await browser.post(page + "/test", {}, follow=True)
    assert tested.status_code == 200 and "Ping: succeeded" in tested.text
    assert not SECRET_SHOWN.search(tested.text)
    assert len(receiver.requests) == 2
    # Redeliver the first ping.
    delivery = re.search(r"/webhook/deliveries/([0-9a-f-]{36})/redeliver", tested.text)
    assert delivery
    queued = await browser.post(page + f"/deliveries/{delivery.group(1)}/redeliver", {})
    assert queued.status_code == 303
    unknown = await browser.post(page + "/deliveries/nope/redeliver", {})
    assert unknown.status_code == 404


async def test_bad_input_gets_the_api_message(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.owner)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}/webhook"
    await browser.get(page)
    private = await browser.post(page, {"url": "https://10.0.0.1/hook", "events": ["ping"]})
    assert private.status_code == 422 and "url:" in private.text
    short = await browser.post(page, {"url": "https://example.com/h", "secret": "short"})
    assert short.status_code == 422 and "secret:" in short.text
    event = await browser.post(page, {"url": "https://example.com/h", "events": ["nope"]})
    assert event.status_code == 422 and "events:" in event.text
    assert "https://example.com/h" in event.text  # input kept


async def test_remove(console: Console, world: World, receiver: Receiver) -> None:
    browser = await console.signed_in(world.a.developer)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}/webhook"
    await browser.get(page)
    await browser.post(page, {"url": receiver.url, "events": ["ping"]})
    assert (await browser.post(page + "/remove", {})).status_code == 303
    assert (await browser.post(page + "/test", {})).status_code == 404
