"""Benchmark: GET /v1/vehicle-data/autoapi-13/{vin} of a vehicle with ~100 properties.

One uvicorn process pinned to core 0 (no access log), wrk pinned to core 1, 64
connections, after a warm-up; beside it the floor (bench._pull_apps.floor): a minimal
Starlette + sqlite3 app serving the same bytes from the same table.

    python -m bench.vehicle_data_pull            # 10 s per server
    python -m bench.vehicle_data_pull --quick    # 2 s, a smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from bench._pull_apps import BENCH_KEY

VIN = "WBABENCH000000001"
PROPERTIES = 100
TARGET_SHARE = 0.60
TARGET_P99_MS = 50.0
CONNECTIONS = 64


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def prepare(data_dir: Path) -> tuple[str, int]:
    """A migrated SQLite file with one vehicle of ~100 properties and a grant for all."""
    from autoport.catalog import CATALOG
    from autoport.catalog.schemas import example_value
    from autoport.config import Settings, ensure_secrets
    from autoport.db.migrate import upgrade
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.clock import now_us
    from autoport.kit.crypto import token_hash
    from autoport.kit.db import create_database
    from autoport.kit.environments import Environment

    # The secrets file the subject app will load: its token key hashes the access token.
    settings, _ = ensure_secrets(Settings(data_dir=data_dir))
    assert settings.token_hmac_key is not None
    token_key = settings.token_hmac_key.get_secret_value().encode()
    url = f"sqlite:///{data_dir / 'autoport.db'}"
    await upgrade(url)
    db = create_database(url)
    await db.connect()
    props = list(CATALOG.properties())[:: max(1, len(CATALOG) // PROPERTIES)][:PROPERTIES]
    data: dict[str, dict[str, object]] = {}
    for prop in props:
        data.setdefault(prop.capability, {})[prop.name] = example_value(prop)
    now = now_us()
    report = await ingest_vehicle_data(
        db, environment=Environment.production, vin=VIN, brand="bmw", data=data, now_us=now
    )
    assert not report.rejected, report.rejected
    keys = orjson.dumps([p.key for p in props]).decode()
    token = "bench-token"  # noqa: S105 - a test credential
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO accounts (id, environment, name, created_at) "
            "VALUES ('acc', 'production', 'bench', :now)",
            {"now": now},
        )
        await conn.execute(
            "INSERT INTO applications (id, environment, account_id, client_id, name, "
            "client_type, redirect_uris, properties, brands, created_at) VALUES ('APP', "
            "'production', 'acc', 'client', 'bench', 'confidential', '[]', :props, '[\"bmw\"]', "
            ":now)",
            {"props": keys, "now": now},
        )
        await conn.execute(
            "INSERT INTO authorizations (id, environment, application_id, vin, brand, "
            "properties, status, subject, valid_from, valid_until, created_at, updated_at) "
            "VALUES (:id, 'production', 'APP', :vin, 'bmw', :props, 'approved', 'owner', 0, "
            "NULL, :now, :now)",
            {"id": token_hash(BENCH_KEY, token)[:32], "vin": VIN, "props": keys, "now": now},
        )
        # A real access token of that grant, so the subject runs the real authenticator.
        await conn.execute(
            "INSERT INTO oauth_tokens (token_hash, environment, kind, application_id, "
            "authorization_id, family_id, scopes, created_at, expires_at) VALUES (:hash, "
            "'production', 'access', 'APP', :auth, 'fam', 'vehicle:data', :now, :expires)",
            {
                "hash": token_hash(token_key, token),
                "auth": token_hash(BENCH_KEY, token)[:32],
                "now": now,
                "expires": now + 86_400_000_000,
            },
        )
    await db.close()
    return token, len(props)


def _wait_ready(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
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
    return {"rps": rps, "p50_ms": p50, "p99_ms": p99, "non_2xx": errors}


def measure(
    factory: str, data_dir: Path, token: str, seconds: int, warmup: int, path: str = ""
) -> tuple[dict[str, float], int]:
    port = _free_port()
    env = {**os.environ, "BENCH_DATA_DIR": str(data_dir), "PYTHONPATH": os.getcwd()}
    server = subprocess.Popen(
        [
            "taskset",
            "-c",
            "0",
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            f"bench._pull_apps:{factory}",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        env=env,
    )
    try:
        _wait_ready(port, server)
        url = f"http://127.0.0.1:{port}{path or f'/v1/vehicle-data/autoapi-13/{VIN}'}"
        headers = {"Authorization": f"Bearer {token}"}
        probe = httpx.get(url, headers=headers)
        probe.raise_for_status()
        wrk = [
            "taskset", "-c", "1", "wrk", "-t1", f"-c{CONNECTIONS}", "--latency",
            "-H", f"Authorization: Bearer {token}",
        ]  # fmt: skip
        if warmup:
            subprocess.run([*wrk, f"-d{warmup}s", url], check=True, capture_output=True)
        run = subprocess.run(
            [*wrk, f"-d{seconds}s", url], check=True, capture_output=True, text=True
        )
        return _parse_wrk(run.stdout), len(probe.content)
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s per server, no warm-up")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument(
        "--rounds", type=int, default=2, help="alternate floor/subject runs; best of each"
    )
    args = parser.parse_args()
    global CONNECTIONS
    CONNECTIONS = args.connections
    if shutil.which("wrk") is None or shutil.which("taskset") is None:
        sys.exit("needs wrk and taskset (apt-get install -y wrk util-linux)")
    seconds, warmup = (2, 0) if args.quick else (args.seconds, 3)
    with tempfile.TemporaryDirectory(prefix="autoport-bench-") as tmp:
        data_dir = Path(tmp)
        token, count = asyncio.run(prepare(data_dir))
        # Alternated and best-of, because the machine is shared and its load drifts.
        floors, subjects, stacks = [], [], []
        for _ in range(1 if args.quick else args.rounds):
            floors.append(measure("floor", data_dir, token, seconds, warmup))
            subjects.append(measure("subject", data_dir, token, seconds, warmup))
            # The same app's /healthz: what its framework and request pipeline cost alone.
            stacks.append(measure("subject", data_dir, token, seconds, warmup, "/healthz"))
        floor, floor_size = max(floors, key=lambda run: run[0]["rps"])
        subject, size = max(subjects, key=lambda run: run[0]["rps"])
        stack, _ = max(stacks, key=lambda run: run[0]["rps"])
    share = subject["rps"] / floor["rps"]
    print(f"vehicle data pull: {count} properties, {size} bytes (floor {floor_size}), "
          f"{CONNECTIONS} connections, {seconds} s")  # fmt: skip
    runs = (
        ("floor (Starlette+sqlite3)", floor),
        ("autoport", subject),
        ("autoport /healthz (stack)", stack),
    )
    for name, figures in runs:
        print(
            f"  {name:<26} {figures['rps']:>9.0f} req/s   p50 {figures['p50_ms']:6.2f} ms   "
            f"p99 {figures['p99_ms']:6.2f} ms   non-2xx {figures['non_2xx']:.0f}"
        )
    verdict = share >= TARGET_SHARE and subject["p99_ms"] < TARGET_P99_MS
    print(
        f"  autoport/floor = {share:.0%} (target >= {TARGET_SHARE:.0%}; the stack alone: "
        f"{stack['rps'] / floor['rps']:.0%}), "
        f"p99 target < {TARGET_P99_MS:.0f} ms: {'met' if verdict else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
