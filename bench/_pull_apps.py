"""The floors the benchmarks measure autoport against, as uvicorn factories (autoport
itself runs as the real `autoport serve`, bench._serve), and the settings they prepare
their data with.

- `floor` (bench.vehicle_data_pull): a minimal Starlette app reading the same row of the
  same table with sqlite3 and answering the same bytes;
- `bare_floor` and `live_floor` (bench.pull_live): with a token lookup;
- `command_floor` (bench.commands): one sqlite3 insert per POST.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, cast

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

if TYPE_CHECKING:
    from autoport.config import Settings

# Under var/ (ignored by git): a benchmark leaves a database and a secrets file behind.
DATA_DIR = Path(os.environ.get("BENCH_DATA_DIR", "var/bench-data"))


def bench_settings(
    data_dir: Path = DATA_DIR, database_url: str | None = None, schema: str | None = None
) -> Settings:
    """The settings the benchmarks prepare their data with, in process (quiet: this is
    not what they measure; the server they measure runs with make run's, bench._serve).
    The database is SQLite in `data_dir` unless `database_url` (PostgreSQL) is given."""
    from autoport.config import Settings

    return Settings(
        data_dir=data_dir,
        database_url=database_url,
        database_schema=schema,
        access_log=False,
        log_level="warning",
        vehicle_data_rate_limit="100000000/minute",
    )


def floor(data_dir: Path = DATA_DIR) -> Starlette:
    conn = sqlite3.connect(str(data_dir / "autoport.db"), check_same_thread=False)

    async def vehicle_data(request: Request) -> Response:
        vin = request.path_params["vin"]
        row = conn.execute(
            "SELECT brand, document FROM vehicles WHERE environment = ? AND vin = ?",
            ("production", vin),
        ).fetchone()
        head = orjson.dumps({"request_id": uuid.uuid4().hex, "vin": vin, "brand": row[0]})
        body = head[:-1] + b"," + row[1].encode()[1:]
        return Response(body, media_type="application/json")

    return Starlette(routes=[Route("/v1/vehicle-data/autoapi-13/{vin}", vehicle_data)])


BARE_FLOOR_DB = "bare-floor.db"


def write_bare_floor(data_dir: Path, answers: list[tuple[str, str, str, bytes]]) -> None:
    """The bare floor's database: each (environment, vin, bearer token, answer body),
    the bodies being autoport's own answers, so that both serve the same bytes."""
    import time

    conn = sqlite3.connect(str(data_dir / BARE_FLOOR_DB))
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS tokens (token TEXT PRIMARY KEY, expires_at REAL)")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS answers (environment TEXT, vin TEXT, body BLOB, "
            "PRIMARY KEY (environment, vin))"
        )
        for environment, vin, token, body in answers:
            conn.execute(
                "INSERT OR REPLACE INTO tokens VALUES (?, ?)", (token, time.time() + 86_400)
            )
            conn.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?)", (environment, vin, body)
            )
        conn.commit()
    finally:
        conn.close()


def bare_floor(data_dir: Path = DATA_DIR) -> Starlette:
    """The bare floor of `bench.pull_live`: a user's quickest app serving the same bytes.
    Starlette and sqlite3; the bearer token looked up as stored (no HMAC) and checked for
    expiry, the vehicle's stored answer served as it is (no JSON assembly, no request
    id). Its database is written by `write_bare_floor`."""
    import time

    conn = sqlite3.connect(str(data_dir / BARE_FLOOR_DB), check_same_thread=False)
    unauthorized = Response(b'{"errors":[]}', status_code=401, media_type="application/json")
    missing = Response(b'{"errors":[]}', status_code=404, media_type="application/json")

    def answer(request: Request, environment: str) -> Response:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        row = conn.execute("SELECT expires_at FROM tokens WHERE token = ?", (token,)).fetchone()
        if row is None or row[0] <= time.time():
            return unauthorized
        found = conn.execute(
            "SELECT body FROM answers WHERE environment = ? AND vin = ?",
            (environment, request.path_params["vin"]),
        ).fetchone()
        if found is None:
            return missing
        return Response(found[0], media_type="application/json")

    async def production(request: Request) -> Response:
        return answer(request, "production")

    async def sandbox(request: Request) -> Response:
        return answer(request, "sandbox")

    return Starlette(
        routes=[
            Route("/v1/vehicle-data/autoapi-13/{vin}", production),
            Route("/sandbox/v1/vehicle-data/autoapi-13/{vin}", sandbox),
        ]
    )


def live_floor(data_dir: Path = DATA_DIR) -> Starlette:
    """The floor of `bench.pull_live`: checks the bearer token as a real service must
    (its HMAC looked up in the token table, not expired, not revoked) and serves the
    vehicle's stored document, in either environment, with sqlite3 and nothing else; on
    PostgreSQL (BENCH_DATABASE_URL, BENCH_DATABASE_SCHEMA) with an asyncpg pool."""
    import contextlib
    import hashlib
    import hmac
    import json
    import time
    from collections.abc import AsyncIterator

    key = json.loads((data_dir / "secrets.json").read_text())["token_hmac_key"].encode()
    url = os.environ.get("BENCH_DATABASE_URL")
    bearer_sql = (
        "SELECT expires_at, revoked_at FROM oauth_tokens WHERE token_hash = ? AND environment = ?"
    )
    vehicle_sql = "SELECT brand, document FROM vehicles WHERE environment = ? AND vin = ?"

    def token_of(request: Request) -> str:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return hmac.new(key, token.encode(), hashlib.sha256).hexdigest()

    def valid(row: object) -> bool:
        return row is not None and row[1] is None and row[0] > time.time() * 1e6  # type: ignore[index]

    def body(vin: str, row: object) -> Response:
        brand, document = cast(tuple[str, str], row)
        head = orjson.dumps({"request_id": uuid.uuid4().hex, "vin": vin, "brand": brand})
        return Response(head[:-1] + b"," + document.encode()[1:], media_type="application/json")

    unauthorized = Response(b'{"errors":[]}', status_code=401, media_type="application/json")
    lifespan = None
    if url is None:
        conn = sqlite3.connect(str(data_dir / "autoport.db"), check_same_thread=False)

        async def answer(request: Request, environment: str) -> Response:
            if not valid(conn.execute(bearer_sql, (token_of(request), environment)).fetchone()):
                return unauthorized
            vin = request.path_params["vin"]
            return body(vin, conn.execute(vehicle_sql, (environment, vin)).fetchone())

    else:
        import asyncpg

        pools: list[asyncpg.Pool] = []
        schema = os.environ.get("BENCH_DATABASE_SCHEMA")
        # asyncpg's placeholders: the first ? is $1, the second $2.
        bearer_pg, vehicle_pg = (
            sql.replace("= ?", "= $1", 1).replace("= ?", "= $2")
            for sql in (bearer_sql, vehicle_sql)
        )

        async def keep_session(connection: object) -> None:
            return None  # no reset query per release, as autoport (kit.db)

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            settings = {"search_path": schema} if schema else {}
            pools.append(
                await asyncpg.create_pool(
                    url, min_size=4, max_size=10, server_settings=settings, reset=keep_session
                )
            )
            yield
            await pools[0].close()

        async def answer(request: Request, environment: str) -> Response:
            pool = pools[0]
            if not valid(await pool.fetchrow(bearer_pg, token_of(request), environment)):
                return unauthorized
            vin = request.path_params["vin"]
            return body(vin, await pool.fetchrow(vehicle_pg, environment, vin))

    async def production(request: Request) -> Response:
        return await answer(request, "production")

    async def sandbox(request: Request) -> Response:
        return await answer(request, "sandbox")

    return Starlette(
        routes=[
            Route("/v1/vehicle-data/autoapi-13/{vin}", production),
            Route("/sandbox/v1/vehicle-data/autoapi-13/{vin}", sandbox),
        ],
        lifespan=lifespan,
    )


def command_floor(data_dir: Path = DATA_DIR) -> Starlette:
    """The floor of `bench.commands`: a minimal Starlette app that takes the same POST
    (JSON body), stores one row with sqlite3 (WAL, one commit per request, like the
    command's insert) and answers 202 with a small JSON body: what one Python process
    can accept at best here, measured in the same run as autoport."""
    path = data_dir / "floor.db"
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE IF NOT EXISTS commands (id TEXT PRIMARY KEY, vin TEXT, body TEXT)")

    async def accept(request: Request) -> Response:
        body = orjson.loads(await request.body())
        command_id = str(uuid.uuid4())
        conn.execute(
            "INSERT INTO commands (id, vin, body) VALUES (?, ?, ?)",
            (command_id, request.path_params["vin"], orjson.dumps(body).decode()),
        )
        answer = {"id": command_id, "status": "pending", **body}
        return Response(orjson.dumps(answer), status_code=202, media_type="application/json")

    async def healthz(request: Request) -> Response:
        return Response(b'{"status":"ok"}', media_type="application/json")

    # /healthz: what the bench's wrk script sends, answered 200, once every slot is
    # handed out (as it does to autoport's own /healthz).
    return Starlette(
        routes=[
            Route("/floor/{vin}", accept, methods=["POST"]),
            Route("/healthz", healthz),
        ]
    )
