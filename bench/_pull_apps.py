"""The two servers `bench.vehicle_data_pull` measures, as uvicorn factories.

- `subject`: the real autoport app with its real bearer authenticator and the access
  token `bench.vehicle_data_pull` stores (BENCH_AUTH=bench swaps in the older stand-in:
  an HMAC of the token and one indexed query for the grant).
- `floor`: a minimal Starlette app reading the same row of the same table with sqlite3
  and answering the same bytes: what one Python process can do at best here.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from functools import lru_cache
from pathlib import Path

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

DATA_DIR = Path(os.environ.get("BENCH_DATA_DIR", "bench-data"))
BENCH_KEY = b"bench-key"


def subject() -> object:
    from fastapi import FastAPI

    from autoport.app import create_app
    from autoport.config import Settings
    from autoport.kit.auth import Caller, CallerKind, Grant, GrantStatus
    from autoport.kit.crypto import token_hash
    from autoport.kit.environments import Environment
    from autoport.kit.errors import ApiError

    settings = Settings(
        data_dir=DATA_DIR,
        access_log=False,
        log_level="warning",
        vehicle_data_rate_limit="100000000/minute",
    )
    app: FastAPI = create_app(settings, run_background=False)
    # The real bearer authenticator (autoport.oauth.bearer) checks the access token that
    # bench.vehicle_data_pull stored; set BENCH_AUTH=bench for the old stand-in.
    if os.environ.get("BENCH_AUTH") != "bench":
        return app
    db = app.state.autoport.database

    async def authenticate(request: Request, environment: Environment) -> Caller:
        _, _, token = request.headers.get("authorization", "").partition(" ")
        row = await db.fetch_one(
            "SELECT a.id, a.application_id, a.vin, a.properties, a.status, a.valid_from, "
            "a.valid_until, p.client_id, p.properties AS app_properties "
            "FROM authorizations a JOIN applications p ON p.id = a.application_id "
            "WHERE a.id = :id AND a.environment = :environment",
            {"id": token_hash(BENCH_KEY, token)[:32], "environment": str(environment)},
        )
        if row is None:
            raise ApiError(401, "unknown token")
        return Caller(
            environment=environment,
            kind=CallerKind.vehicle,
            application_id=row["application_id"],
            client_id=row["client_id"],
            scopes=frozenset({"vehicle:data"}),
            application_properties=_property_set(row["app_properties"]),
            grant=Grant(
                authorization_id=row["id"],
                vin=row["vin"],
                properties=_property_set(row["properties"]),
                status=GrantStatus(row["status"]),
                valid_from_us=row["valid_from"],
                valid_until_us=row["valid_until"],
            ),
        )

    app.state.authenticator = authenticate
    return app


@lru_cache(maxsize=1024)
def _property_set(text: str) -> frozenset[str]:
    return frozenset(orjson.loads(text))


def floor() -> object:
    conn = sqlite3.connect(str(DATA_DIR / "autoport.db"), check_same_thread=False)

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
