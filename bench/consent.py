"""Consent pages: what one page costs, beside floors measured in the same run.

    python -m bench.consent [--quick]

In-process ASGI calls (no sockets, one core): the review page (session lookup by token
hash, application lookup, catalog grouping, gettext, Jinja2, security headers) and the
entry point (checks + session INSERT on SQLite), beside `GET /healthz` through the same
app (the framework's floor) and a bare Jinja2 render of the same template (the
rendering share). Figures drift on shared machines; compare within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson

from autoport.app import create_app
from autoport.config import Settings
from autoport.consent import pages
from autoport.kit.migrate import upgrade
from autoport.oauth import pkce
from bench._serve import Changed, in_process_logging

VIN = "SBXTEST0000000001"
PROPERTIES = [
    "charging.battery_level",
    "charging.estimated_range",
    "charging.status",
    "diagnostics.odometer",
    "diagnostics.fuel_level",
    "vehicle_location.coordinates",
    "vehicle_location.heading",
    "doors.locks_state",
]


async def call(
    app: Any, method: str, path: str, query: str = "", cookie: str | None = None
) -> tuple[int, dict[bytes, bytes]]:
    headers = [(b"host", b"127.0.0.1:8080")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query.encode(),
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8080),
    }  # fmt: skip
    status = 0
    response_headers: dict[bytes, bytes] = {}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            response_headers.update(dict(message["headers"]))

    await app(scope, receive, send)
    return status, response_headers


async def measure(name: str, work: Callable[[], Awaitable[None]], rounds: int) -> tuple[str, float]:
    for _ in range(max(rounds // 10, 3)):
        await work()
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(rounds):
            await work()
        samples.append((time.perf_counter() - started) / rounds * 1e6)
    return name, statistics.median(samples)


async def main(quick: bool) -> None:
    rounds = 30 if quick else 500
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        await upgrade(f"sqlite:///{data / 'autoport.db'}")
        # One browser entering again and again: the entry's limits would answer 429s.
        raised = "one browser enters again and again: the limiter runs but never refuses"
        changed = (
            Changed("AUTOPORT_CONSENT_ENTRY_IP_RATE_LIMIT", "100000000/minute", raised),
            Changed("AUTOPORT_CONSENT_ENTRY_CLIENT_RATE_LIMIT", "100000000/minute", raised),
        )
        settings = Settings(
            data_dir=data,
            consent_entry_ip_rate_limit=changed[0].value,
            consent_entry_client_rate_limit=changed[1].value,
        )
        app = create_app(settings, run_background=False)
        async with in_process_logging(changed), app.router.lifespan_context(app):
            db = app.state.autoport.database
            app_id, client_id = secrets.token_hex(12).upper(), "bench-client"
            async with db.transaction() as conn:
                await conn.execute("INSERT INTO accounts VALUES ('acc', 'sandbox', 'Bench', 1)")
                await conn.execute(
                    "INSERT INTO applications (id, environment, account_id, client_id, name, "
                    "client_type, redirect_uris, properties, brands, created_at) VALUES "
                    "(:id, 'sandbox', 'acc', :client, 'Bench app', 'confidential', :uris, "
                    ":props, '[\"sandbox\"]', 1)",
                    {
                        "id": app_id,
                        "client": client_id,
                        "uris": orjson.dumps(["https://app.example/cb"]).decode(),
                        "props": orjson.dumps(PROPERTIES).decode(),
                    },
                )
            query = urlencode({
                "client_id": client_id, "app_id": app_id, "vin": VIN,
                "redirect_uri": "https://app.example/cb", "state": "s",
                "code_challenge": pkce.s256(secrets.token_urlsafe(48)),
            })  # fmt: skip
            status, headers = await call(app, "GET", "/sandbox/oauth/new", query)
            assert status == 303, status
            cookie = headers[b"set-cookie"].decode().split(";", 1)[0]
            await db.execute("UPDATE consent_sessions SET method = 'instant', verified_at = 1, "
                             "subject = 's'")  # fmt: skip

            async def review() -> None:
                status, _ = await call(app, "GET", "/sandbox/oauth/consent/review", cookie=cookie)
                assert status == 200, status

            async def entry() -> None:
                status, _ = await call(app, "GET", "/sandbox/oauth/new", query)
                assert status == 303, status

            async def healthz() -> None:
                await call(app, "GET", "/healthz")

            template = pages.SURFACE.environment("de-DE").get_template("error.html")

            async def bare_render() -> None:
                template.render(kind="expired", stylesheet="/x.css", switch=None)

            results = [
                await measure("floor: GET /healthz (same app)", healthz, rounds),
                await measure("floor: bare Jinja2 render (error page)", bare_render, rounds),
                await measure("GET review page (de-DE, 8 properties)", review, rounds),
                await measure("GET entry point (checks + session INSERT)", entry, rounds),
            ]
    print(f"consent pages, in-process ASGI, {rounds} calls x 5 rounds (median)")
    for name, micros in results:
        print(f"  {name:<45} {micros:8.1f} µs/request  {1e6 / micros:8.0f} req/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="consent page costs")
    parser.add_argument("--quick", action="store_true", help="a few seconds, for CI")
    asyncio.run(main(parser.parse_args().quick))
