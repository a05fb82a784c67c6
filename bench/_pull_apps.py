"""The two servers `bench.vehicle_data_pull` measures, as uvicorn factories.

- `subject`: the real autoport app with its real bearer authenticator (the token is a
  real consent token issued by `bench.vehicle_data_pull.prepare` through the token
  endpoint; the deployment key lives in the data directory, shared by both).
- `floor`: a minimal Starlette app reading the same row of the same table with sqlite3
  and answering the same bytes: what one Python process can do at best here.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

if TYPE_CHECKING:
    from autoport.config import Settings

# Under var/ (ignored by git): a benchmark leaves a database and a secrets file behind.
DATA_DIR = Path(os.environ.get("BENCH_DATA_DIR", "var/bench-data"))


def bench_settings(data_dir: Path = DATA_DIR) -> Settings:
    from autoport.config import Settings

    return Settings(
        data_dir=data_dir,
        access_log=False,
        log_level="warning",
        vehicle_data_rate_limit="100000000/minute",
    )


def subject() -> object:
    from autoport.app import create_app

    return create_app(bench_settings(), run_background=False)


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


def live_floor(data_dir: Path = DATA_DIR) -> Starlette:
    """The floor of `bench.pull_live`: checks the bearer token as a real service must
    (its HMAC looked up in the token table, not expired, not revoked) and serves the
    vehicle's stored document, in either environment, with sqlite3 and nothing else."""
    import hashlib
    import hmac
    import json
    import time

    key = json.loads((data_dir / "secrets.json").read_text())["token_hmac_key"].encode()
    conn = sqlite3.connect(str(data_dir / "autoport.db"), check_same_thread=False)

    def authorized(request: Request, environment: str) -> bool:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        digest = hmac.new(key, token.encode(), hashlib.sha256).hexdigest()
        row = conn.execute(
            "SELECT expires_at, revoked_at FROM oauth_tokens "
            "WHERE token_hash = ? AND environment = ?",
            (digest, environment),
        ).fetchone()
        return row is not None and row[1] is None and row[0] > time.time() * 1e6

    def answer(request: Request, environment: str) -> Response:
        if not authorized(request, environment):
            return Response(b'{"errors":[]}', status_code=401, media_type="application/json")
        vin = request.path_params["vin"]
        row = conn.execute(
            "SELECT brand, document FROM vehicles WHERE environment = ? AND vin = ?",
            (environment, vin),
        ).fetchone()
        head = orjson.dumps({"request_id": uuid.uuid4().hex, "vin": vin, "brand": row[0]})
        return Response(head[:-1] + b"," + row[1].encode()[1:], media_type="application/json")

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
