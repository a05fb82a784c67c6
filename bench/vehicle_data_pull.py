"""Benchmark: GET /v1/vehicle-data/autoapi-13/{vin} of a vehicle with ~100 properties.

`autoport serve --no-workers` (the app without background work) with `make run`'s
settings otherwise (bench._serve: logging on; the pull's rate limit raised so that the
limiter runs but never refuses, printed) pinned to core 0, wrk pinned to core 1, 64
connections, after a warm-up; beside it the floor (bench._pull_apps.floor): a minimal
Starlette + sqlite3 app serving the same bytes from the same table. Both are also timed
in process (ASGI calls without a server, the access lines written to /dev/null), the
figure to profile against.

    python -m bench.vehicle_data_pull            # 10 s per server
    python -m bench.vehicle_data_pull --quick    # 2 s, a smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import orjson

from bench import _serve
from bench._figures import keep
from bench._pull_apps import bench_settings
from bench._serve import Changed

if TYPE_CHECKING:
    from autoport.config import Settings

VIN = "WBABENCH000000001"
REDIRECT = "https://bench.example.com/callback"
PROPERTIES = 100
TARGET_SHARE = 0.60
TARGET_P99_MS = 50.0
CONNECTIONS = 64
RESULTS = Path("var/bench-results/vehicle_data_pull.json")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def prepare(data_dir: Path, settings: Settings | None = None) -> tuple[str, int]:
    """A migrated SQLite file (or the database of `settings`) with one vehicle of ~100
    properties, a real application and a real consent token for all of them
    (authorization row + code + token exchange)."""
    from autoport.app import create_app
    from autoport.apps import service as apps_service
    from autoport.catalog import CATALOG
    from autoport.catalog.schemas import example_value
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.clock import now_us
    from autoport.kit.environments import Environment
    from autoport.kit.migrate import upgrade
    from autoport.oauth import pkce
    from autoport.oauth import service as oauth_service

    settings = settings or bench_settings(data_dir)
    await upgrade(settings.resolved_database_url, schema=settings.database_schema)
    app = create_app(settings, run_background=False)
    props = list(CATALOG.properties())[:: max(1, len(CATALOG) // PROPERTIES)][:PROPERTIES]
    keys = [p.key for p in props]
    data: dict[str, dict[str, object]] = {}
    for prop in props:
        data.setdefault(prop.capability, {})[prop.name] = example_value(prop)
    async with app.router.lifespan_context(app):
        db = app.state.autoport.database
        now = now_us()
        report = await ingest_vehicle_data(
            db, environment=Environment.production, vin=VIN, brand="bmw", data=data, now_us=now
        )
        assert not report.rejected, report.rejected
        async with db.transaction() as conn:
            account = await apps_service.create_account(
                conn, environment=Environment.production, name="bench", now_us=now
            )
            application, secret = await apps_service.create_application(
                conn,
                environment=Environment.production,
                account_id=account.id,
                name="bench",
                redirect_uris=[REDIRECT],
                properties=keys,
                brands=["bmw"],
                client_type="confidential",
                now_us=now,
            )
        authorization_id = str(uuid.uuid4())
        # The row the consent pages write once the owner approved.
        await db.execute(
            "INSERT INTO authorizations (id, environment, application_id, vin, brand, "
            "properties, status, subject, valid_from, valid_until, created_at, updated_at) "
            "VALUES (:id, 'production', :app, :vin, 'bmw', :props, 'approved', 'owner', :now, "
            "NULL, :now, :now)",
            {
                "id": authorization_id,
                "app": application.id,
                "vin": VIN,
                "props": orjson.dumps(keys).decode(),
                "now": now,
            },
        )
        # PKCE, as every client must use it (autoport.oauth.pkce).
        verifier = secrets.token_urlsafe(48)
        async with db.transaction() as conn:
            code = await oauth_service.issue_authorization_code(
                conn,
                environment=Environment.production,
                application_id=application.id,
                authorization_id=authorization_id,
                redirect_uri=REDIRECT,
                code_challenge=pkce.s256(verifier),
                code_challenge_method="S256",
                now_us=now,
            )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            response = await client.post(
                "/v1/access_tokens",
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": REDIRECT,
                    "client_id": application.client_id,
                    "client_secret": secret or "",
                    "code_verifier": verifier,
                },
            )
        response.raise_for_status()
    return str(response.json()["access_token"]), len(props)


def _wait_ready(port: int, proc: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def _parse_wrk(output: str) -> dict[str, float]:
    def ms(text: str) -> float:
        value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    p50 = ms(re.search(r"\s50%\s+(\S+)", output).group(1))  # type: ignore[union-attr]
    p99 = ms(re.search(r"\s99%\s+(\S+)", output).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = float(non2xx.group(1)) if non2xx else 0.0
    figures = {"rps": rps, "p50_ms": p50, "p99_ms": p99, "non_2xx": errors}
    for percentile in ("75", "90"):  # the rest of wrk --latency's distribution
        found = re.search(rf"\s{percentile}%\s+(\S+)", output)
        if found:
            figures[f"p{percentile}_ms"] = ms(found.group(1))
    return figures


RATE_LIMIT = Changed(
    "AUTOPORT_VEHICLE_DATA_RATE_LIMIT",
    "100000000/minute",
    "one client pulls one vehicle: the limiter runs on every pull but never refuses",
)
IDLE = Changed(
    "AUTOPORT_BACKGROUND_WORKERS", "false", "`serve --no-workers`: the app without background work"
)


def measure(
    side: str,
    data_dir: Path,
    token: str,
    seconds: int,
    warmup: int,
    changed: tuple[Changed, ...],
    path: str = "",
) -> tuple[dict[str, float], int]:
    """wrk against `autoport serve --no-workers` (side "subject") or the floor."""
    if side == "subject":
        server = _serve.serve(
            data_dir, [c for c in changed if c is not IDLE], args=["--no-workers"]
        )
    else:
        server = _serve.start_app("bench._pull_apps:floor", data_dir)
    try:
        url = f"{server.base}{path or f'/v1/vehicle-data/autoapi-13/{VIN}'}"
        headers = {"Authorization": f"Bearer {token}"}
        probe = httpx.get(url, headers=headers)
        probe.raise_for_status()
        wrk = [
            "taskset", "-c", _serve.CLIENT_CPUS, "wrk", "-t1", f"-c{CONNECTIONS}", "--latency",
            "-H", f"Authorization: Bearer {token}",
        ]  # fmt: skip
        if warmup:
            subprocess.run([*wrk, f"-d{warmup}s", url], check=True, capture_output=True)
        run = subprocess.run(
            [*wrk, f"-d{seconds}s", url], check=True, capture_output=True, text=True
        )
        return _parse_wrk(run.stdout), len(probe.content)
    finally:
        server.stop()


async def in_process(data_dir: Path, token: str, requests: int) -> dict[str, float]:
    """µs per pull of each app called directly as ASGI (no server, no network, no wrk):
    the app's own cost, steadier than the HTTP figures and what a profiler should see."""
    import gc

    from starlette.types import ASGIApp, Message

    from autoport.app import create_app
    from bench._pull_apps import floor

    path = f"/v1/vehicle-data/autoapi-13/{VIN}"
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8080),
        "headers": [(b"host", b"127.0.0.1:8080"), (b"authorization", f"Bearer {token}".encode())],
    }  # fmt: skip
    statuses: list[int] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def timed(app: ASGIApp) -> float:
        for _ in range(max(1, requests // 10)):  # warm-up: caches filled
            await app(dict(scope), receive, send)
        started = time.perf_counter()
        for _ in range(requests):
            await app(dict(scope), receive, send)
        return (time.perf_counter() - started) / requests * 1e6

    from autoport.config import Settings
    from autoport.kit.logging import configure_logging

    # make run's settings but the limit (RATE_LIMIT), logging on: the access lines go to
    # /dev/null, written as they would be to a file.
    settings = Settings(data_dir=data_dir, vehicle_data_rate_limit=RATE_LIMIT.value)
    subject = create_app(settings, run_background=False)
    with open(os.devnull, "w") as sink, contextlib.redirect_stderr(sink):  # noqa: ASYNC230
        configure_logging(settings.log_level, "json")
        async with subject.router.lifespan_context(subject):
            gc.collect()
            gc.freeze()  # as the request pipeline does once a server has started
            figures = {"floor": await timed(floor(data_dir)), "autoport": await timed(subject)}
    configure_logging("warning")  # this process's own lines (httpx's) are not measured
    if set(statuses) != {200}:
        raise RuntimeError(f"in-process pulls answered {sorted(set(statuses))}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s per server, no warm-up")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument(
        "--rounds", type=int, default=2, help="alternate floor/subject runs; best of each"
    )
    _serve.add_arguments(parser)
    args = parser.parse_args()
    global CONNECTIONS
    CONNECTIONS = args.connections
    changed = _serve.changes(args, RATE_LIMIT, IDLE)
    _serve.announce(changed)
    _serve.pin()
    if shutil.which("wrk") is None or shutil.which("taskset") is None:
        sys.exit("needs wrk and taskset (apt-get install -y wrk util-linux)")
    seconds, warmup = (2, 0) if args.quick else (args.seconds, 3)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="autoport-bench-") as tmp:
        data_dir = Path(tmp)
        token, count = asyncio.run(prepare(data_dir))
        requests = 2_000 if args.quick else 20_000
        direct = asyncio.run(in_process(data_dir, token, requests))
        # Alternated and best-of, because the machine is shared and its load drifts.
        floors, subjects, stacks = [], [], []
        for _ in range(1 if args.quick else args.rounds):
            floors.append(measure("floor", data_dir, token, seconds, warmup, changed))
            subjects.append(measure("subject", data_dir, token, seconds, warmup, changed))
            # The same app's /healthz, a FastAPI route: what the pull would pay if it were
            # not a hot route answered by the request pipeline (autoport.kit.middleware).
            stacks.append(measure("subject", data_dir, token, seconds, warmup, changed, "/healthz"))
        floor, floor_size = max(floors, key=lambda run: run[0]["rps"])
        subject, size = max(subjects, key=lambda run: run[0]["rps"])
        stack, _ = max(stacks, key=lambda run: run[0]["rps"])
    share = subject["rps"] / floor["rps"]
    print(f"vehicle data pull: {count} properties, {size} bytes (floor {floor_size}), "
          f"{CONNECTIONS} connections, {seconds} s")  # fmt: skip
    runs = (
        ("floor (Starlette+sqlite3)", floor),
        ("autoport", subject),
        ("autoport /healthz (FastAPI)", stack),
    )
    for name, figures in runs:
        print(
            f"  {name:<26} {figures['rps']:>9.0f} req/s   p50 {figures['p50_ms']:6.2f} ms   "
            f"p99 {figures['p99_ms']:6.2f} ms   non-2xx {figures['non_2xx']:.0f}"
        )
    print(
        f"  in process (ASGI calls, no network, {requests} pulls): autoport "
        f"{direct['autoport']:.1f} µs per pull, floor {direct['floor']:.1f} µs"
    )
    verdict = share >= TARGET_SHARE and subject["p99_ms"] < TARGET_P99_MS
    keep(
        {
            "rps": subject["rps"],
            "p50_ms": subject["p50_ms"],
            "p99_ms": subject["p99_ms"],
            "floor_rps": floor["rps"],
            "share_of_floor": share,
            "fastapi_route_rps": stack["rps"],
            "in_process_pull_us": direct["autoport"],
            "in_process_floor_us": direct["floor"],
        }
    )
    if not args.quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(
            json.dumps(
                {
                    "command": "python -m bench vehicle_data_pull",
                    "properties": count,
                    "bytes": size,
                    "connections": CONNECTIONS,
                    "seconds": seconds,
                    "floor": floor,
                    "subject": subject,
                    "fastapi_route": stack,
                    "share": share,
                    "in_process_us": direct,
                    "met": verdict,
                    "started_at": started,
                },
                indent=2,
            )
        )
    print(
        f"  autoport/floor = {share:.0%} (a FastAPI route: {stack['rps'] / floor['rps']:.0%}); "
        f"targets >= {TARGET_SHARE:.0%} and p99 < {TARGET_P99_MS:.0f} ms: "
        f"{'met' if verdict else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
