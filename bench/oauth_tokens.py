"""Token endpoint throughput: client_credentials (secret and private_key_jwt assertion)
and refresh-token rotation, per second, one server process, SQLite and PostgreSQL.

    python -m bench.oauth_tokens [--quick] [--postgres URL] [--seconds N]

The real `autoport serve` with `make run`'s settings (bench._serve: logging on, the
background work and the demo sandbox on; changed, and printed: the token key given, the
token endpoint's rate limits raised so that they run but never refuse) pinned to core 0,
load from `wrk` (Debian package) pinned to core 1 in a second process, over loopback;
beside each rate, the server's CPU per request (its processes, background work included).
Beside the subjects, in the same run and server, the baseline `GET /healthz` (the
framework's floor: routing, middleware, a JSON body, no database) so figures can be
compared across runs on a shared machine. Targets (SQLite, one process): >= 6,000
client_credentials/s (issue #33) and >= 800 refreshes/s.

Every refresh uses a distinct refresh token (each is single use), prepared in the
database beforehand; every assertion is signed beforehand with a distinct `jti`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

import orjson
from joserfc import jwt
from joserfc.jwk import ECKey

from autoport.apps import service as apps_service
from autoport.kit.clock import now_us
from autoport.kit.crypto import token_hash
from autoport.kit.db import create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from autoport.oauth.client_auth import JWT_BEARER
from autoport.oauth.tokens import vehicle_scope
from bench import _serve
from bench._figures import keep
from bench._serve import Changed, Served

TOKEN_KEY = "bench-token-key-" + "k" * 32
TARGET_CLIENT_CREDENTIALS = 6_000
TARGET_REFRESH = 800
PROPERTIES = ["charging.battery_level", "diagnostics.odometer"]

LUA = """
local lines = {}
for line in io.lines("%(file)s") do lines[#lines + 1] = line end
local i = 0
request = function()
  i = i + 1
  if i > #lines then i = 1 end
  return wrk.format("POST", "%(path)s",
    {["Content-Type"] = "application/x-www-form-urlencoded"}, lines[i])
end
"""


def pinned(command: list[str], core: int) -> list[str]:
    if shutil.which("taskset") and (os.cpu_count() or 1) > 1:
        return ["taskset", "-c", str(core), *command]
    return command


TOKEN_KEY_SET = Changed(
    "AUTOPORT_TOKEN_HMAC_KEY",
    "bench-token-key-...",
    "given, not generated: the refresh tokens are stored beforehand, hashed with it",
)
LIMITS_RAISED = (
    Changed(
        "AUTOPORT_OAUTH_TOKEN_IP_RATE_LIMIT",
        "100000000/minute",
        "one address, one client: the limiters run on every request but never refuse",
    ),
    Changed("AUTOPORT_OAUTH_TOKEN_CLIENT_RATE_LIMIT", "100000000/minute", "as above"),
)


def start_server(
    data_dir: Path, database_url: str, schema: str | None, changed: tuple[Changed, ...]
) -> Served:
    env = {"AUTOPORT_DATABASE_URL": database_url, "AUTOPORT_TOKEN_HMAC_KEY": TOKEN_KEY}
    if schema:
        env["AUTOPORT_DATABASE_SCHEMA"] = schema
    # The key's printed value is shortened; the server gets the whole key.
    return _serve.serve(data_dir, [c for c in changed if c is not TOKEN_KEY_SET], env=env)


Measured = tuple[float, int, float]  # req/s, non-2xx responses, server CPU µs per request


def run_wrk(
    url: str, seconds: float, script: str | None, connections: int, server: Served
) -> Measured:
    """(requests per second, non-2xx responses, the server's CPU per request: on a
    shared machine the rate follows what else runs, the CPU a request costs much less;
    its background work included)."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s"]
    if script:
        command += ["-s", script]
    cpu_before = server.group_cpu_seconds()
    output = subprocess.run(
        pinned([*command, url], 1), capture_output=True, text=True, check=True
    ).stdout
    used = server.group_cpu_seconds() - cpu_before
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    answered = re.search(r"(\d+) requests in", output)
    if rate is None or answered is None:
        raise RuntimeError(output)
    cpu_us = used / max(1, int(answered.group(1))) * 1e6
    return float(rate.group(1)), int(bad.group(1)) if bad else 0, cpu_us


async def prepare(database_url: str, schema: str | None, refresh_count: int) -> dict[str, object]:
    """An application with a secret and a key, and `refresh_count` live refresh tokens
    (one token family each) on one approved authorization."""
    db = create_database(database_url, schema=schema)
    await db.connect()
    now = now_us()
    try:
        async with db.transaction() as conn:
            account = await apps_service.create_account(
                conn, environment=Environment.production, name="bench", now_us=now
            )
            application, secret = await apps_service.create_application(
                conn,
                environment=Environment.production,
                account_id=account.id,
                name="bench",
                redirect_uris=["https://bench.example/cb"],
                properties=PROPERTIES,
                brands=["honda"],
                client_type="confidential",
                now_us=now,
            )
            key = await apps_service.add_key(
                conn, environment=Environment.production, app_id=application.id, now_us=now
            )
            authorization_id = str(uuid.uuid4())
            await conn.execute(
                "INSERT INTO authorizations (id, environment, application_id, vin, brand, "
                "properties, status, subject, valid_from, valid_until, created_at, updated_at) "
                "VALUES (:id, 'production', :app, '1HGCM82633A004352', 'honda', :props, "
                "'approved', 'bench-owner', :now, NULL, :now, :now)",
                {
                    "id": authorization_id,
                    "app": application.id,
                    "props": orjson.dumps(PROPERTIES).decode(),
                    "now": now,
                },
            )
        refresh_tokens = [f"ap_rt_bench{i:08d}_{uuid.uuid4().hex}" for i in range(refresh_count)]
        rows = [
            {
                "token_hash": token_hash(TOKEN_KEY.encode(), token),
                "environment": "production",
                "kind": "refresh",
                "application_id": application.id,
                "authorization_id": authorization_id,
                "family_id": str(uuid.uuid4()),
                "scopes": vehicle_scope(PROPERTIES),
                "created_at": now,
                "expires_at": now + 86_400 * 1_000_000,
            }
            for token in refresh_tokens
        ]
        from autoport.oauth.repository import create_tokens

        for start in range(0, len(rows), 5000):
            async with db.transaction() as conn:
                await create_tokens(conn, rows[start : start + 5000])
    finally:
        await db.close()
    return {
        "client_id": application.client_id,
        "client_secret": secret,
        "private_jwk": key.private_jwk,
        "refresh_tokens": refresh_tokens,
    }


def assertions(private_jwk: dict[str, object], audience: str, count: int) -> list[str]:
    key = ECKey.import_key(private_jwk)  # type: ignore[arg-type]
    kid = str(private_jwk["kid"])
    issued = int(time.time())
    return [
        jwt.encode(
            {"alg": "ES256"},
            {"iss": kid, "aud": audience, "iat": issued, "jti": uuid.uuid4().hex},
            key,
        )
        for _ in range(count)
    ]


def bench_backend(
    name: str,
    database_url: str,
    schema: str | None,
    data_dir: Path,
    seconds: float,
    quick: bool,
    changed: tuple[Changed, ...],
) -> dict[str, Measured]:
    # Enough single-use material for the fastest plausible rate.
    material = int(8000 * seconds) + 2000
    setup = asyncio.run(prepare(database_url, schema, material))
    server = start_server(data_dir, database_url, schema, changed)
    results: dict[str, Measured] = {}
    connections = 16 if quick else 32
    try:
        token_url = f"{server.base}/v1/access_tokens"
        results["baseline GET /healthz"] = run_wrk(
            f"{server.base}/healthz", seconds, None, connections, server
        )
        secret_body = urlencode(
            {
                "grant_type": "client_credentials",
                "client_id": setup["client_id"],
                "client_secret": setup["client_secret"],
            }
        )
        scripts = Path(tempfile.mkdtemp(prefix="bench-oauth-"))
        bodies = {
            "client_credentials (secret)": [secret_body],
            "refresh_token": [
                urlencode(
                    {
                        "grant_type": "refresh_token",
                        "refresh_token": token,
                        "client_id": setup["client_id"],
                        "client_secret": setup["client_secret"],
                    }
                )
                for token in setup["refresh_tokens"]  # type: ignore[attr-defined]
            ],
        }
        # Warm-up (not measured): first requests pay imports, caches and pool growth.
        warm = write_script(scripts, "warm-up", [secret_body])
        run_wrk(token_url, 1, warm, connections, server)
        for label, lines in bodies.items():
            results[label] = run_wrk(
                token_url, seconds, write_script(scripts, label, lines), connections, server
            )
        # Signed just before the run: each assertion's iat must be within 30 s.
        signed = assertions(setup["private_jwk"], f"{server.base}/v1", material)  # type: ignore[arg-type]
        lines = [
            urlencode(
                {
                    "grant_type": "client_credentials",
                    "client_assertion_type": JWT_BEARER,
                    "client_assertion": assertion,
                }
            )
            for assertion in signed
        ]
        label = "client_credentials (private_key_jwt)"
        results[label] = run_wrk(
            token_url, seconds, write_script(scripts, label, lines), connections, server
        )
        shutil.rmtree(scripts, ignore_errors=True)
    finally:
        server.stop()
    print(f"\n{name}")
    for label, (rate, bad, cpu_us) in results.items():
        note = f"  ({bad} non-2xx!)" if bad else ""
        print(f"  {label:<40} {rate:>9,.0f} req/s   CPU {cpu_us:5.0f} µs/request{note}")
    return results


def write_script(directory: Path, label: str, lines: list[str]) -> str:
    slug = base64.urlsafe_b64encode(label.encode()).decode().rstrip("=")
    data = directory / f"{slug}.txt"
    data.write_text("\n".join(lines) + "\n")
    script = directory / f"{slug}.lua"
    script.write_text(LUA % {"file": data, "path": "/v1/access_tokens"})
    return str(script)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a few seconds in all (smoke)")
    parser.add_argument("--seconds", type=float, default=None, help="per measurement")
    parser.add_argument(
        "--postgres",
        default=os.environ.get("AUTOPORT_TEST_POSTGRES_URL", ""),
        help="PostgreSQL URL (default AUTOPORT_TEST_POSTGRES_URL); empty skips that leg",
    )
    _serve.add_arguments(parser)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is missing: apt-get install -y wrk")
    seconds = args.seconds or (1.0 if args.quick else 5.0)
    changed = _serve.changes(args, TOKEN_KEY_SET, *LIMITS_RAISED)
    _serve.announce(changed)
    _serve.pin()
    print(f"token endpoint throughput, one server process, wrk -t1, {seconds:.0f} s each")
    with tempfile.TemporaryDirectory(prefix="bench-oauth-") as tmp:
        data_dir = Path(tmp)
        sqlite_url = f"sqlite:///{data_dir / 'autoport.db'}"
        upgrade_sync(sqlite_url)
        postgres: dict[str, Measured] = {}
        sqlite = bench_backend("SQLite", sqlite_url, None, data_dir, seconds, args.quick, changed)
        if args.postgres:
            schema = f"bench_oauth_{uuid.uuid4().hex[:8]}"
            upgrade_sync(args.postgres, schema=schema)
            try:
                postgres = bench_backend(
                    "PostgreSQL", args.postgres, schema, data_dir, seconds, args.quick, changed
                )
            finally:
                asyncio.run(drop_schema(args.postgres, schema))
    labels = {
        "baseline GET /healthz": "healthz",
        "client_credentials (secret)": "client_credentials",
        "refresh_token": "refresh_token",
        "client_credentials (private_key_jwt)": "private_key_jwt",
    }
    figures: dict[str, float] = {}
    for backend, measured in (("sqlite", sqlite), ("postgresql", postgres)):
        for label, (rate, _, cpu_us) in measured.items():
            figures[f"{backend}.{labels[label]}_rps"] = rate
            figures[f"{backend}.{labels[label]}_cpu_us"] = cpu_us
    keep(figures)
    cc = sqlite["client_credentials (secret)"][0]
    refresh = sqlite["refresh_token"][0]
    cc_met = "met" if cc >= TARGET_CLIENT_CREDENTIALS else "NOT met"
    refresh_met = "met" if refresh >= TARGET_REFRESH else "NOT met"
    print(
        f"\nSQLite targets: client_credentials {cc:,.0f}/s (>= {TARGET_CLIENT_CREDENTIALS:,}: "
        f"{cc_met}), refresh {refresh:,.0f}/s (>= {TARGET_REFRESH}: {refresh_met})"
    )
    print(f"load: {_serve.load_text()}")


async def drop_schema(url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


if __name__ == "__main__":
    main()
