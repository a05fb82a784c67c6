"""The data model is ready to be sharded by VIN (docs/scaling.md, "Past one PostgreSQL
server").

The design: Citus, with `vin` as the distribution column of the tables that grow with
the fleet and its data, co-located (`DISTRIBUTION` below says which; every table has a
decided place). A query that names the VIN runs on one shard; one that does not runs on
every shard, which is fine for background sweeps and ruinous on a hot path. So:

- every table of the schema has a decided distribution (a new table must choose one);
- a table distributed by VIN has the column, in its primary key and every unique
  constraint (Citus enforces uniqueness per shard only through the distribution column);
- the SQL the hot paths issue, captured at `autoport.kit.db` while the real app runs them
  on both backends (ingestion over HTTP, the pull, a history page, fleet clearances and
  their worker, the stream builder, webhook events and their delivery, a vehicle command
  and its worker), filters every VIN-distributed table by the VIN. The statements the
  design runs on every shard on purpose (queue claims, retention) are listed in
  `MULTI_SHARD` with the reason; anything else fails here, naming the statement;
- the checker flags a query that does not name the VIN (`test_the_checker_flags_...`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
from aiohttp import web
from pydantic import SecretStr
from sqlalchemy import UniqueConstraint

import autoport.db.tables  # noqa: F401 - every table on the metadata
from autoport.app import create_app
from autoport.config import Settings
from autoport.db import metadata
from autoport.ingestion.providers import create_provider
from autoport.kit import db as kit_db
from autoport.kit.clock import now_us
from autoport.kit.environments import Environment
from autoport.vehicles.vin import generate_vin
from tests.conftest import service_missing
from tests.factories import bearer, client_credentials_token, create_app_credentials

# Where each table lives in the sharded design (docs/scaling.md): the column a table is
# distributed by, or "reference" (small, on every node: Citus reference tables) or
# "coordinator" (on the coordinator only: low volume, looked up by their own ids).
# - "vin": co-located, so a vehicle's row, its fetches, clearances and queue events are
#   on one node and its ingestion is a single-shard transaction there;
# - the history by its series (the series id is a hash of environment, VIN, capability
#   and property; history_series calls it `id`): co-located with each other, not yet
#   with the vehicle (docs/scaling.md, "What must change before the switch");
# - "application_id": read and written per application (its stream log, deliveries).
# The old row-per-point history table (`vehicle_data_history`) is in no MetaData and in no
# distribution: migration 0023 drops it where nothing was stored, and elsewhere the
# history worker moves its rows into chunks and drops it, before any switch to Citus
# (docs/scaling.md).
DISTRIBUTION: dict[str, str] = {
    "vehicles": "vin",
    "vehicle_fetches": "vin",
    "fleet_vehicles": "vin",
    "outbox": "vin",
    "history_series": "id",
    "history_hot": "series_id",
    "history_chunks": "series_id",
    "stream_messages": "application_id",
    "stream_cursors": "application_id",
    "stream_connections": "application_id",
    "stream_mqtt_credentials": "application_id",
    "webhooks": "application_id",
    "webhook_deliveries": "application_id",
    "usage_daily": "application_id",
    "applications": "reference",
    "accounts": "reference",
    "client_secrets": "reference",
    "client_keys": "reference",
    "ingest_providers": "reference",
    "stream_leases": "reference",
    "history_state": "reference",
    "authorizations": "coordinator",
    "oauth_tokens": "coordinator",
    "authorization_codes": "coordinator",
    "assertion_jtis": "coordinator",
    "grant_reads": "coordinator",
    "consent_sessions": "coordinator",
    "consent_vehicle_codes": "coordinator",
    "consent_throttles": "coordinator",
    "owner_sessions": "coordinator",
    "vehicle_commands": "coordinator",
    "sandbox_vehicles": "coordinator",
    "console_users": "coordinator",
    "console_sessions": "coordinator",
    "console_invitations": "coordinator",
    "console_audit": "coordinator",
    "console_flashes": "coordinator",
}
# The vehicle tables: distributed by the vehicle (its VIN, or its series' id). Every hot
# statement on them names that key.
VEHICLE_TABLES = {
    name: column
    for name, column in DISTRIBUTION.items()
    if column == "vin" or name in ("history_series", "history_hot", "history_chunks")
}

# Uniqueness that Citus could not enforce on a distributed table (it checks a unique key
# per shard only when the key holds the distribution column), with what the distributed
# schema does instead.
UNIQUE_WITHOUT_KEY: dict[tuple[str, tuple[str, ...]], str] = {
    ("outbox", ("id",)): "the event id becomes (vin, id) when distributed",
    ("history_hot", ("id",)): "the row id becomes (series_id, id) when distributed",
    ("history_series", ("environment", "vin", "capability", "property")): (
        "the series id is a hash of exactly these: one series, one shard"
    ),
}

# Statements on vehicle tables that run on every shard by design, with why.
MULTI_SHARD: dict[str, str] = {
    r"from outbox where consumer = \S+ and available_at": (
        "a queue consumer's claim and its cheap look first: per lane of VINs on Citus "
        "(docs/scaling.md, Queues)"
    ),
    r"delete from outbox where outbox\.id in": "completing claimed events by their ids",
    r"update outbox set claimed_until = null": "an event given back by its id",
    r"from fleet_vehicles where .*next_check_at": (
        "the fleet worker's claim of due clearances (a background sweep)"
    ),
    r"from vehicle_fetches where .*lease_until <": "expired fetch leases swept",
    r"select distinct series_id from history_hot where received_at <": (
        "the sealer's sweep for series to seal"
    ),
    r"delete from history_hot where id in \( select id from history_hot where received_at <": (
        "retention of points not sealed yet (a sweep)"
    ),
    r"delete from history_chunks where .* from history_chunks where received_max <": (
        "retention: whole chunks on SQLite (PostgreSQL drops partitions)"
    ),
}

ADMIN_TOKEN = "shard-key-test-admin-token-0123456789"
TABLE_REFERENCE = re.compile(r"\b(from|join|update|into)\s+\"?(\w+)\"?", re.I)
INSERT_COLUMNS = re.compile(r"\binsert\s+into\s+\"?(\w+)\"?\s*\(([^)]*)\)", re.I)


def normalized(sql: str) -> str:
    return " ".join(sql.split()).lower()


def tables_of(sql: str) -> set[str]:
    return {table for _, table in TABLE_REFERENCE.findall(normalized(sql))}


def names_key(text: str, column: str) -> bool:
    """Whether `text` constrains `column` to given values (=, IN, = ANY)."""
    return re.search(rf"(?<!\w){column}\s*(?:=|in\b)", text) is not None


def vin_problems(sql: str) -> list[str]:
    """Why `sql` would run on every shard of a vehicle table it touches (empty when each
    one is reached by its key, or the statement is a listed multi-shard one). A table
    only inserted into needs its key among the inserted columns (each row is routed by
    it); one read, updated or deleted needs its key in the conditions."""
    text = normalized(sql)
    if any(re.search(pattern, text) for pattern in MULTI_SHARD):
        return []
    problems = []
    for table, columns in INSERT_COLUMNS.findall(text):
        key = VEHICLE_TABLES.get(table)
        if key and key not in {c.strip().strip('"') for c in columns.split(",")}:
            problems.append(f"INSERT INTO {table} without its {key}")
    read = {t for verb, t in TABLE_REFERENCE.findall(text) if verb != "into"}
    for table in sorted(read & set(VEHICLE_TABLES)):
        if not names_key(text, VEHICLE_TABLES[table]):
            problems.append(f"{table} reached without its {VEHICLE_TABLES[table]}")
    return problems


# ------------------------------------------------------------------ the schema


def test_every_table_has_a_decided_distribution() -> None:
    tables = set(metadata.tables)
    undecided = sorted(tables - set(DISTRIBUTION))
    assert not undecided, (
        f"tables without a place in the sharded design: {undecided}; add each to "
        "DISTRIBUTION here and to docs/scaling.md"
    )
    assert not set(DISTRIBUTION) - tables, sorted(set(DISTRIBUTION) - tables)


def test_vehicle_tables_hold_their_key_in_every_unique_key() -> None:
    problems = []
    for name, key in VEHICLE_TABLES.items():
        table = metadata.tables[name]
        assert key in table.c, f"{name} is distributed by {key} but has no such column"
        keys = [tuple(c.name for c in table.primary_key.columns)]
        keys += [
            tuple(c.name for c in constraint.columns)
            for constraint in table.constraints
            if isinstance(constraint, UniqueConstraint)
        ]
        keys += [tuple(c.name for c in index.columns) for index in table.indexes if index.unique]
        for unique in keys:
            if key not in unique and (name, unique) not in UNIQUE_WITHOUT_KEY:
                problems.append(f"{name}: unique {unique} without {key}")
    assert not problems, problems


# ------------------------------------------------------------------ the checker itself


def test_the_checker_flags_a_query_without_the_vin() -> None:
    probes = [
        "SELECT document FROM vehicles WHERE environment = :environment",
        "UPDATE fleet_vehicles SET status = 'x' WHERE application_id = $1",
        "INSERT INTO outbox (environment, consumer, payload) VALUES (:e, :c, :p)",
        "SELECT v.document FROM applications a JOIN vehicles v ON v.brand = a.id",
        "SELECT data FROM history_chunks WHERE received_max < :before",
        "INSERT INTO history_hot (timestamp, digest, value) VALUES (:t, :d, :v)",
    ]
    for probe in probes:
        assert vin_problems(probe), probe
    fine = [
        "SELECT brand, document FROM vehicles WHERE environment = :environment AND vin = :vin",
        "SELECT * FROM fleet_vehicles WHERE environment = $1 AND vin IN ($2, $3)",
        "INSERT INTO vehicles (environment, vin, brand) VALUES (:e, :v, :b)",
        "SELECT id FROM applications WHERE id = :id",
        "SELECT 1 FROM outbox WHERE consumer = :consumer AND available_at <= :now LIMIT 1",
        "SELECT id, value FROM history_hot WHERE series_id = :series_id AND timestamp < :t",
        "UPDATE history_series SET sealing_until = 0 WHERE id = :id",
    ]
    for statement in fine:
        assert not vin_problems(statement), statement


# ------------------------------------------------------------------ the hot paths


@contextlib.contextmanager
def captured_sql() -> Iterator[list[str]]:
    """Every statement `autoport.kit.db` sends, in order (compiled Core statements and
    plain strings, executemany included), on both backends."""
    seen: list[str] = []
    original = kit_db._compile
    many = {cls: cls.execute_many for cls in (kit_db.SqliteConnection, kit_db.PostgresConnection)}

    def compile_and_note(statement: Any, params: Any, dialect: Any) -> tuple[str, Any]:
        sql, merged = original(statement, params, dialect)
        seen.append(sql)
        return sql, merged

    def noting(method: Callable[..., Any]) -> Callable[..., Any]:
        async def execute_many(self: Any, sql: str, rows: Any) -> None:
            seen.append(sql)
            await method(self, sql, rows)

        return execute_many

    kit_db._compile = compile_and_note
    for cls, method in many.items():
        cls.execute_many = noting(method)  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        kit_db._compile = original
        for cls, method in many.items():
            cls.execute_many = method  # type: ignore[method-assign]


@contextlib.asynccontextmanager
async def receiver() -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    import orjson

    from tests.helpers.ports import free_port

    got: list[dict[str, Any]] = []

    async def hook(request: web.Request) -> web.Response:
        got.append(orjson.loads(await request.read()))
        return web.Response(status=204)

    server = web.Application()
    server.router.add_post("/hook", hook)
    runner = web.AppRunner(server, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/hook", got
    finally:
        await runner.cleanup()


async def until(what: str, check: Callable[[], Any], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds} s")
        await asyncio.sleep(0.1)


@pytest.fixture
def hot_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "webhook_allow_loopback": True,
            "fleet_worker_interval_seconds": 0.1,
            "admin_token": SecretStr(ADMIN_TOKEN),
        }
    )


async def run_hot_paths(settings: Settings, seen: list[str]) -> None:
    """The request and background paths a fleet keeps busy, once each, in one app with
    its background work running."""
    app = create_app(settings, run_background=True)
    async with (
        app.router.lifespan_context(app),
        receiver() as (hook_url, hooks),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8080"
        ) as client,
    ):
        state = app.state.autoport
        db = state.database
        creds = await create_app_credentials(
            db,
            properties=("charging.battery_level", "diagnostics.odometer", "doors.locks_state"),
        )
        async with db.transaction() as conn:
            await conn.execute(
                "UPDATE applications SET commands = :commands WHERE id = :id",
                {"commands": '["doors.lock_unlock_doors"]', "id": creds.app_id},
            )
            _, secret = await create_provider(
                conn, key=state.token_key, environment=Environment.production,
                name="feed", now_us=now_us(), brands=["bmw"], auto_approve_clearances=True,
            )  # fmt: skip
        admin = bearer(ADMIN_TOKEN)
        answer = await client.put(
            f"/admin/v1/applications/{creds.app_id}/webhook",
            headers=admin,
            json={"url": hook_url, "events": ["fleet_clearance_changed", "command_changed"]},
        )
        assert answer.status_code in (200, 201), answer.text
        token = await client_credentials_token(client, creds)
        vins = [generate_vin(__import__("random").Random(n), "WBA") for n in range(3)]
        answer = await client.post(
            "/v1/fleets/vehicles",
            headers=bearer(token),
            json={"vehicles": [{"vin": vin, "brand": "bmw"} for vin in vins]},
        )
        assert answer.status_code == 200, answer.text

        async def approved() -> bool:
            return sum(1 for h in hooks if h["event"].get("action") == "approved") == len(vins)

        await until("the clearances' approval", approved)
        stamp = "2026-01-01T00:00:0{}.000Z"
        for second in range(2):
            body = [
                {
                    "vin": vin,
                    "brand": "bmw",
                    "charging": {"battery_level": {"data": 0.5, "timestamp": stamp.format(second)}},
                    "diagnostics": {
                        "odometer": {
                            "data": {"unit": "kilometers", "value": 10.0 + second},
                            "timestamp": stamp.format(second),
                        }
                    },
                }
                for vin in vins
            ]
            answer = await client.post("/v1/ingest", headers=bearer(secret), json=body)
            assert answer.status_code == 200, answer.text

        async def streamed() -> bool:
            return any("insert into stream_messages" in normalized(s) for s in seen)

        await until("the stream messages", streamed)
        for vin in vins:
            answer = await client.get(f"/v1/vehicle-data/autoapi-13/{vin}", headers=bearer(token))
            assert answer.status_code == 200, answer.text
        answer = await client.get(
            f"/v1/vehicle-data/autoapi-13/{vins[0]}/history",
            params={"property": "charging.battery_level"},
            headers=bearer(token),
        )
        assert answer.status_code == 200, answer.text
        assert len(answer.json()["values"]) == 2
        answer = await client.post(
            f"/v1/vehicle-commands/autoapi-13/{vins[0]}",
            headers={**bearer(token), "Prefer": "wait=10"},
            json={"capability": "doors", "command": "lock_unlock_doors",
                  "arguments": {"locks_state": "locked"}},
        )  # fmt: skip
        assert answer.status_code in (200, 202), answer.text
        command = answer.json()["id"]

        async def command_hooks() -> bool:
            return any(
                h["event"].get("command", {}).get("id") == command
                and h["event"]["command"]["status"] in ("executed", "failed", "timed_out")
                for h in hooks
            )

        await until("the command's final webhook", command_hooks)


@pytest.mark.timeout(120)
async def test_the_hot_paths_reach_vin_tables_by_the_vin(
    hot_settings: Settings, backend: str
) -> None:
    if backend == "postgresql" and not hot_settings.database_url:
        service_missing("AUTOPORT_TEST_POSTGRES_URL is not set")
    with captured_sql() as seen:
        await run_hot_paths(hot_settings, seen)
    touched = {t for s in seen for t in tables_of(s)}
    # The scenario reached what it claims to cover.
    covered = {"vehicles", "history_series", "history_hot", "fleet_vehicles", "outbox"}
    assert covered <= touched, covered - touched
    problems = {normalized(s): vin_problems(s) for s in seen}
    bad = {sql: why for sql, why in problems.items() if why}
    assert not bad, "\n".join(f"{'; '.join(why)}:\n    {sql}" for sql, why in bad.items())
