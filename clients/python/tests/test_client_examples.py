"""The examples, run as a developer runs them, against the real server: the consent web
app (in process, the owner on the real consent pages), the webhook receiver (a uvicorn
process the server delivers to) and the stream consumer (a process, twice: the second run
resumes after the first one's cursor)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from conftest import CLIENT_SRC, CSRF, EXAMPLES, LiveServer

from tests.helpers.ports import free_port

sys.path.insert(0, str(EXAMPLES))

import consent_app


def example_env(server: LiveServer, **extra: str) -> dict[str, str]:
    assert server.demo is not None
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(CLIENT_SRC), os.environ.get("PYTHONPATH", "")]),
        "AUTOPORT_URL": server.root,
        "CLIENT_ID": server.demo.client_id,
        "CLIENT_SECRET": server.demo.client_secret,
        **extra,
    }


async def test_consent_app(server: LiveServer, tmp_path: Path) -> None:
    assert server.demo is not None
    vin = server.demo.vins["charging"]
    settings = consent_app.Settings(
        autoport_url=server.root,
        client_id=server.demo.client_id,
        client_secret=server.demo.client_secret,
        app_id=server.demo.application_id,
        tokens_file=tmp_path / "tokens.json",
    )
    app = consent_app.create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://localhost:3000") as web,
        httpx.AsyncClient(timeout=20) as browser,
    ):
        start = await web.get("/")
        assert start.status_code == 303
        # The owner's browser on autoport's consent pages.
        entry = await browser.get(start.headers["location"])
        assert entry.status_code == 303
        for step, form in (("brand", {"brand": "sandbox"}), ("vehicle", {"vin": vin})):
            page = await browser.get(f"{server.sandbox}/oauth/consent/{step}")
            match = CSRF.search(page.text)
            assert match
            await browser.post(
                f"{server.sandbox}/oauth/consent/{step}",
                data={"csrf_token": match.group(1), **form},
            )
        review = await browser.get(f"{server.sandbox}/oauth/consent/review")
        match = CSRF.search(review.text)
        assert match
        decided = await browser.post(
            f"{server.sandbox}/oauth/consent/review",
            data={"csrf_token": match.group(1), "decision": "approve"},
        )
        back = urlsplit(decided.headers["location"])
        assert back.path == "/callback"
        # Back in the app: the code becomes a stored token and the car's page.
        landed = await web.get("/callback", params=parse_qs(back.query))
        assert landed.status_code == 303 and landed.headers["location"] == f"/vehicles/{vin}"
        shown = await web.get(landed.headers["location"])
        assert shown.status_code == 200 and "Battery level: " in shown.text
        assert "%" in shown.text
        assert vin in (tmp_path / "tokens.json").read_text()
        # A state that was never issued (or is replayed) is refused.
        replay = await web.get("/callback", params=parse_qs(back.query))
        assert replay.status_code == 400


def test_webhook_receiver(server: LiveServer, tmp_path: Path) -> None:
    assert server.demo is not None
    port = free_port()
    secret = "whsec_example-receiver-secret-0123456789"
    receiver = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "webhook_receiver.py")],
        env=example_env(server, WEBHOOK_SECRET=secret, PORT=str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    path = f"/admin/v1/applications/{server.demo.application_id}/webhook"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the receiver did not start"
                time.sleep(0.1)
        saved = server.admin(
            "PUT", path, json={"url": f"http://127.0.0.1:{port}/hook", "secret": secret}
        )
        assert saved.status_code in (200, 201), saved.text
        # The receiver answered 204 only after verifying the signature.
        assert saved.json()["ping"]["status"] == "succeeded", saved.json()
        # A wrong secret on the server's side: the receiver refuses the delivery.
        wrong = server.admin(
            "PUT", path, json={"url": f"http://127.0.0.1:{port}/hook", "secret": secret + "x"}
        )
        assert wrong.json()["ping"]["status"] != "succeeded"
        assert wrong.json()["ping"]["response_status"] == 401
    finally:
        server.admin("DELETE", path)
        receiver.send_signal(signal.SIGINT)
        output, _ = receiver.communicate(timeout=20)
    assert output.decode().startswith("ping *")


def test_stream_consumer_resumes_from_its_cursor_file(server: LiveServer, tmp_path: Path) -> None:
    cursor = tmp_path / "cursor.txt"
    command = [
        sys.executable, str(EXAMPLES / "stream_consumer.py"), "--max", "3",
        "--cursor-file", str(cursor),
    ]  # fmt: skip
    first = subprocess.run(
        command, env=example_env(server), capture_output=True, text=True, timeout=60, check=False
    )
    assert first.returncode == 0, first.stderr
    ids = [int(line.split()[0]) for line in first.stdout.splitlines()]
    assert len(ids) == 3 and ids == list(range(ids[0], ids[0] + 3))
    assert int(cursor.read_text()) == ids[1]  # the third was handed out, not yet done
    second = subprocess.run(
        command, env=example_env(server), capture_output=True, text=True, timeout=60, check=False
    )
    assert second.returncode == 0, second.stderr
    again = [int(line.split()[0]) for line in second.stdout.splitlines()]
    assert again[0] == ids[2]  # at-least-once: the unfinished one comes again, then on
