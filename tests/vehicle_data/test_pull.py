"""GET /v1/vehicle-data/autoapi-13/{vin}: access rules, errors, data sources, rate limit."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.brands.registry import registry_of
from autoport.brands.sources import (
    FetchResult,
    PrivacyModeActive,
    SourceTimeout,
    SourceUnavailable,
    VehicleOffline,
)
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.environments import Environment
from autoport.kit.ratelimit import RateLimiter
from autoport.state import typed_parts
from tests.vehicle_data.conftest import TestCallers

VIN = "WBA00000000000001"
OTHER_VIN = "WBA00000000000002"
TS = "2024-05-01T10:00:00.000000Z"
DATA: dict[str, Any] = {
    "charging": {
        "battery_level": {"data": 0.8, "timestamp": TS},
        "status": {"data": "charging", "timestamp": TS},
    },
    "doors": {
        "locks_state": {"data": "locked", "timestamp": TS},
        "locks": [
            {"data": {"location": "front_left", "lock_state": "locked"}, "timestamp": TS},
            {"data": {"location": "front_right", "lock_state": "unlocked"}, "timestamp": TS},
        ],
    },
    "usage": {
        "average_speed": {"data": {"unit": "kilometers_per_hour", "value": 42.0}, "timestamp": TS}
    },
}
ALL = [
    "charging.battery_level",
    "charging.status",
    "doors.locks_state",
    "doors.locks",
    "usage.average_speed",
]
URL = f"/v1/vehicle-data/autoapi-13/{VIN}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def reader(callers: TestCallers) -> dict[str, str]:
    """The headers of a consent token of a new application, reading all of VIN."""
    app_id = await callers.application(properties=ALL)
    return bearer(await callers.vehicle_token(app_id, vin=VIN, properties=ALL))


async def store(
    app: FastAPI,
    vin: str = VIN,
    env: Environment = Environment.production,
    data: dict[str, Any] | None = None,
) -> None:
    state = app.state.autoport
    await ingest_vehicle_data(
        state.database,
        environment=env,
        vin=vin,
        brand="bmw",
        data=DATA if data is None else data,
        now_us=state.clock.now_us(),
    )


async def test_a_vehicle_token_reads_only_its_granted_properties(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(
        app_id, vin=VIN, properties=["charging.battery_level", "doors.locks"]
    )
    response = await client.get(URL, headers=bearer(token))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body == {
        "request_id": response.headers["x-request-id"],
        "vin": VIN,
        "brand": "bmw",
        "charging": {"battery_level": DATA["charging"]["battery_level"]},
        "doors": {"locks": DATA["doors"]["locks"]},
    }
    assert response.headers["content-type"] == "application/json"
    assert int(response.headers["ratelimit-remaining"]) >= 0


async def test_another_vin_is_403(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app, OTHER_VIN)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    response = await client.get(f"/v1/vehicle-data/autoapi-13/{OTHER_VIN}", headers=bearer(token))
    assert response.status_code == 403
    assert "this vehicle" in response.json()["errors"][0]["detail"]


async def test_a_pending_grant_is_403_saying_approval_is_pending(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL, status="pending")
    response = await client.get(URL, headers=bearer(token))
    assert response.status_code == 403
    assert "pending" in response.json()["errors"][0]["detail"]
    await callers.set_grant_status(token, "approved")
    assert (await client.get(URL, headers=bearer(token))).status_code == 200


async def test_outside_the_validity_window_is_403(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app)
    now = app.state.autoport.clock.now_us()
    app_id = await callers.application(properties=ALL)
    later = await callers.vehicle_token(
        app_id, vin=VIN, properties=ALL, valid_from_us=now + 3_600_000_000
    )
    ended = await callers.vehicle_token(
        app_id, vin=VIN, properties=ALL, valid_from_us=now - 10, valid_until_us=now
    )
    for token, word in ((later, "not yet"), (ended, "ended")):
        response = await client.get(URL, headers=bearer(token))
        assert response.status_code == 403
        assert word in response.json()["errors"][0]["detail"]


async def test_a_token_of_the_other_environment_is_401(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app, env=Environment.sandbox)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    response = await client.get(f"/sandbox{URL}", headers=bearer(token))
    assert response.status_code == 401
    assert (await client.get(URL)).status_code == 401


async def test_a_fleet_cleared_application_reads_its_registered_properties(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app)
    app_id = await callers.application(properties=["charging.status", "usage.average_speed"])
    token = await callers.application_token(app_id)
    response = await client.get(URL, headers=bearer(token))
    assert response.status_code == 403
    assert "fleet clearance" in response.json()["errors"][0]["detail"]
    await callers.clear_fleet_vehicle(app_id, VIN, status="pending")
    assert (await client.get(URL, headers=bearer(token))).status_code == 403
    await app.state.autoport.database.execute(
        "UPDATE fleet_vehicles SET status = 'approved' WHERE application_id = :a", {"a": app_id}
    )
    response = await client.get(URL, headers=bearer(token))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"request_id", "vin", "brand", "charging", "usage"}
    assert body["charging"] == {"status": DATA["charging"]["status"]}
    assert body["usage"] == DATA["usage"]


async def test_an_unknown_vehicle_is_422_pending(
    client: httpx.AsyncClient, callers: TestCallers
) -> None:
    response = await client.get(URL, headers=await reader(callers))
    assert response.status_code == 422
    assert "pending" in response.json()["errors"][0]["detail"]


@pytest.mark.parametrize(
    ("vin", "words"),
    [
        ("WBA0000000000001", "17 characters"),
        ("WBA0000000000000O", "I, O or Q"),
        ("wba00000000000001", "upper case"),
    ],
)
async def test_a_malformed_vin_is_400_naming_the_vin(
    client: httpx.AsyncClient, callers: TestCallers, vin: str, words: str
) -> None:
    response = await client.get(f"/v1/vehicle-data/autoapi-13/{vin}", headers=await reader(callers))
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["source"] == "vin" and words in error["detail"]


async def test_the_rate_limit_answers_429_with_headers(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    # As if built from vehicle_data_rate_limit=3/minute (autoport.state).
    state = app.state.autoport
    state.parts = dataclasses.replace(
        typed_parts(state), vehicle_data_limit=RateLimiter("3/minute", namespace="vd")
    )
    await store(app)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    remaining = []
    for _ in range(3):
        response = await client.get(URL, headers=bearer(token))
        assert response.status_code == 200
        remaining.append(response.headers["ratelimit-remaining"])
    assert remaining == ["2", "1", "0"]
    response = await client.get(URL, headers=bearer(token))
    assert response.status_code == 429
    assert 1 <= int(response.headers["retry-after"]) <= 60
    assert response.headers["ratelimit-limit"] == "3"
    assert response.headers["ratelimit-remaining"] == "0"
    assert "rate limit" in response.json()["errors"][0]["detail"]
    # Another application has its own budget.
    other = await callers.application(properties=ALL)
    other_token = await callers.vehicle_token(other, vin=VIN, properties=ALL)
    assert (await client.get(URL, headers=bearer(other_token))).status_code == 200


class TestSource:
    """A data source behaving as told: the DataSource contract without a carmaker."""

    __test__ = False

    def __init__(self) -> None:
        self.error: Exception | None = None
        self.delay = 0.0
        self.result: FetchResult | None = None
        self.asked: list[frozenset[str]] = []

    async def fetch(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> FetchResult | None:
        self.asked.append(properties)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.result


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (VehicleOffline("asleep"), 408),
        (SourceUnavailable("oem down"), 503),
        (SourceTimeout("oem slow"), 504),
    ],
)
async def test_data_source_failures_map_to_408_503_504(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, error: Exception, status: int
) -> None:
    source = TestSource()
    source.error = error
    registry_of(app.state.autoport).data_sources["bmw"] = source
    response = await client.get(URL, headers=await reader(callers))
    assert response.status_code == status
    assert response.json()["errors"][0]["detail"] == str(error)


async def test_a_vehicle_in_privacy_mode_is_403_and_serves_nothing(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    """The owner switched data sharing off in the car: no data, not even the stored
    values, with the rate-limit headers like every other answer; once it is switched
    on again the pull serves data."""
    await store(app)
    source = TestSource()
    source.error = PrivacyModeActive()
    registry_of(app.state.autoport).data_sources["bmw"] = source
    headers = await reader(callers)
    response = await client.get(URL, headers=headers)
    assert response.status_code == 403, response.text
    body = response.json()
    assert set(body) == {"errors", "request_id"}
    (item,) = body["errors"]
    assert item["title"] == "Privacy Mode"
    assert "privacy mode" in item["detail"]
    assert "owner switched data sharing off in the vehicle" in item["detail"]
    assert body["request_id"] == response.headers["x-request-id"]
    for name in ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy"):
        assert name in response.headers
    # A connector's own words are kept, after the fixed sentence (asked again once the
    # freshness window has passed).
    source.error = PrivacyModeActive("reported by the carmaker at 10:00")
    app.state.autoport.clock.advance(31)
    detail = (await client.get(URL, headers=headers)).json()["errors"][0]["detail"]
    assert detail.startswith("the vehicle is in privacy mode")
    assert detail.endswith("(reported by the carmaker at 10:00)")
    # The history was shared while sharing was on: it stays readable from the store.
    history = await client.get(
        f"{URL}/history", params={"property": "charging.battery_level"}, headers=headers
    )
    assert history.status_code == 200, history.text
    assert history.json()["values"] == [DATA["charging"]["battery_level"]]
    source.error = None
    app.state.autoport.clock.advance(31)
    response = await client.get(URL, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["charging"]["battery_level"]["data"] == 0.8


async def test_a_data_source_slower_than_the_timeout_is_504(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    state = app.state.autoport
    state.settings = state.settings.model_copy(update={"vehicle_data_fetch_timeout_seconds": 0.05})
    source = TestSource()
    source.delay = 2.0
    registry_of(state).data_sources["bmw"] = source
    await store(app)
    response = await client.get(URL, headers=await reader(callers))
    assert response.status_code == 504


async def test_fresh_data_from_the_source_is_ingested_and_served(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    state = app.state.autoport
    source = TestSource()
    fresh = {"data": 0.55, "timestamp": "2024-05-02T10:00:00.000000Z"}
    source.result = FetchResult(data={"charging": {"battery_level": fresh}})
    registry_of(state).data_sources["bmw"] = source
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=["charging.battery_level"])
    response = await client.get(URL, headers=bearer(token))
    assert response.status_code == 200, response.text
    assert response.json()["charging"] == {"battery_level": fresh}
    assert source.asked == [frozenset({"charging.battery_level"})]
    events = await state.database.fetch_value(
        "SELECT count(*) FROM outbox WHERE event_type = 'vehicle_data_changed'"
    )
    assert events == 1


async def test_an_application_token_without_vehicle_data_scope_is_403(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app)
    app_id = await callers.application(properties=ALL)
    await callers.clear_fleet_vehicle(app_id, VIN)
    token = await callers.stored_token(app_id, scopes=["fleet:clearance"])
    response = await client.get(URL, headers=bearer(token))
    assert response.status_code == 403
    assert "vehicle:data" in response.json()["errors"][0]["detail"]


async def test_rejected_and_revoked_grants_end_their_tokens_with_401(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    """The authorization server rejects a pending grant / revokes an approved one: the
    bearer authenticator refuses its tokens from then on, naming why."""
    await store(app)
    app_id = await callers.application(properties=ALL)
    pending = await callers.vehicle_token(app_id, vin=VIN, properties=ALL, status="pending")
    approved = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    assert (await client.get(URL, headers=bearer(approved))).status_code == 200
    for token, status in ((pending, "rejected"), (approved, "revoked")):
        await callers.set_grant_status(token, status)
        response = await client.get(URL, headers=bearer(token))
        assert response.status_code == 401
        assert status in response.json()["errors"][0]["detail"]


async def test_a_pull_response_pushed_back_to_ingest_changes_nothing(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    from tests.ingestion.conftest import new_provider

    await store(app)
    app_id = await callers.application(properties=ALL)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    pulled = (await client.get(URL, headers=bearer(token))).json()
    secret = await new_provider(app)
    pushed = await client.post(
        "/v1/ingest", json=pulled, headers={"Authorization": f"Bearer {secret}"}
    )
    assert pushed.status_code == 200, pushed.text
    vehicle = pushed.json()["vehicles"][0]
    assert len(vehicle["accepted"]) == len(ALL)
    assert not any(point["changed"] for point in vehicle["accepted"])
    again = (await client.get(URL, headers=bearer(token))).json()
    assert {k: v for k, v in again.items() if k != "request_id"} == {
        k: v for k, v in pulled.items() if k != "request_id"
    }


async def test_the_sandbox_serves_its_own_vehicles_with_brand_sandbox(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app, env=Environment.sandbox)
    app_id = await callers.application(properties=ALL, environment=Environment.sandbox)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=ALL, brand="sandbox")
    response = await client.get(f"/sandbox{URL}", headers=bearer(token))
    assert response.status_code == 200
    assert response.json()["brand"] == "sandbox"
    # Production knows nothing of it.
    prod_app = await callers.application(properties=ALL)
    prod_token = await callers.vehicle_token(prod_app, vin=VIN, properties=ALL)
    assert (await client.get(URL, headers=bearer(prod_token))).status_code == 422


async def test_two_readers_of_one_vehicle_each_see_their_own_properties_as_data_changes(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app)
    app_id = await callers.application(properties=ALL)
    narrow = await callers.vehicle_token(app_id, vin=VIN, properties=["charging.battery_level"])
    wide = await callers.vehicle_token(app_id, vin=VIN, properties=ALL)
    later = {"charging": {"battery_level": {"data": 0.1, "timestamp": "2024-05-02T00:00:00Z"}}}
    for round_ in range(2):
        for token, groups in ((narrow, {"charging"}), (wide, {"charging", "doors", "usage"})):
            body = (await client.get(URL, headers=bearer(token))).json()
            assert set(body) - {"request_id", "vin", "brand"} == groups
            expected = 0.8 if round_ == 0 else 0.1
            assert body["charging"]["battery_level"]["data"] == expected
        await store(app, data=later)


async def test_head_answers_like_get_and_other_methods_are_405(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    # GET and HEAD are answered by the request pipeline's hot route; other methods reach
    # FastAPI's router, with the same error shape.
    await store(app)
    headers = await reader(callers)
    got = await client.get(URL, headers=headers)
    head = await client.head(URL, headers=headers)
    assert head.status_code == 200
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers["content-type"] == got.headers["content-type"] == "application/json"
    assert head.headers["ratelimit-limit"] == got.headers["ratelimit-limit"]
    assert (await client.head(URL)).status_code == 401
    posted = await client.post(URL, headers=headers)
    assert posted.status_code == 405
    assert posted.json()["errors"][0]["detail"] == f"POST is not allowed on {URL}"
    assert posted.headers["x-request-id"] == posted.json()["request_id"]


async def test_an_unexpected_error_in_the_pull_is_a_500_in_the_errors_shape(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autoport.vehicle_data import service

    async def broken(*args: object) -> bytes:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(service, "pull", broken)
    response = await client.get(URL, headers=await reader(callers))
    assert response.status_code == 500
    body = response.json()
    assert body["request_id"] == response.headers["x-request-id"]
    assert body["errors"][0]["title"] == "Internal Server Error"
    assert "secret" not in response.text


async def test_pulls_are_counted_in_the_metrics_under_the_route_template(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await store(app)
    headers = await reader(callers)

    def served() -> float:
        from prometheus_client import REGISTRY

        from autoport.kit.metrics import TALLY

        TALLY.flush()  # the counts held since the last flush (kit.metrics.RequestTally)
        value = REGISTRY.get_sample_value(
            "autoport_http_requests_total",
            {"method": "GET", "route": "/v1/vehicle-data/autoapi-13/{vin}", "status": "200"},
        )
        return value or 0.0

    before = served()
    for _ in range(3):
        assert (await client.get(URL, headers=headers)).status_code == 200
    assert served() == before + 3


async def test_a_revoked_fleet_clearance_ends_the_pull_at_once_even_from_another_process(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    # The pull keeps clearance lookups while nothing is committed (SQLite data_version,
    # autoport.vehicle_data.service.VersionedReads): a clearance revoked in this process
    # must end the next pull, and one revoked by another process (its own connection to
    # the file) within kit.db.VERSION_REUSE_SECONDS.
    import sqlite3
    import time

    from autoport.kit.db import VERSION_REUSE_SECONDS, SqliteDatabase

    await store(app)
    app_id = await callers.application(properties=["charging.status"])
    token = bearer(await callers.application_token(app_id))
    await callers.clear_fleet_vehicle(app_id, VIN)
    db = app.state.autoport.database
    for _ in range(2):  # the second pull is served from the cache on SQLite
        assert (await client.get(URL, headers=token)).status_code == 200
    await db.execute(
        "UPDATE fleet_vehicles SET status = 'revoked' WHERE application_id = :a", {"a": app_id}
    )
    refused = await client.get(URL, headers=token)
    assert refused.status_code == 403
    assert "fleet clearance" in refused.json()["errors"][0]["detail"]

    await db.execute(
        "UPDATE fleet_vehicles SET status = 'approved' WHERE application_id = :a", {"a": app_id}
    )
    for _ in range(2):
        assert (await client.get(URL, headers=token)).status_code == 200
    if isinstance(db, SqliteDatabase):
        other = sqlite3.connect(db.path)
        try:
            other.execute(
                "UPDATE fleet_vehicles SET status = 'revoked' WHERE application_id = ?", (app_id,)
            )
            other.commit()
        finally:
            other.close()
        time.sleep(VERSION_REUSE_SECONDS * 2)
    else:
        await db.execute(
            "UPDATE fleet_vehicles SET status = 'revoked' WHERE application_id = :a", {"a": app_id}
        )
    assert (await client.get(URL, headers=token)).status_code == 403


async def test_on_postgresql_cached_reads_follow_other_processes_commits(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    # PostgreSQL's data_version counts commit notifications (kit.db.PostgresDatabase):
    # a clearance revoked by another process ends the pull once its notification has
    # arrived; with the listener gone nothing is cached, so even a write that notifies
    # nobody is seen at once.
    import asyncpg

    from autoport.kit.db import PostgresDatabase

    db = app.state.autoport.database
    if not isinstance(db, PostgresDatabase):
        pytest.skip("PostgreSQL only")
    await store(app)
    app_id = await callers.application(properties=["charging.status"])
    token = bearer(await callers.application_token(app_id))
    await callers.clear_fleet_vehicle(app_id, VIN)
    for _ in range(2):
        assert (await client.get(URL, headers=token)).status_code == 200
    other = PostgresDatabase(db.url, schema=db.schema)  # another process's connections
    await other.connect()
    try:
        version = db.data_version()
        await other.execute(
            "UPDATE fleet_vehicles SET status = 'revoked' WHERE application_id = :a", {"a": app_id}
        )
        for _ in range(100):  # the notification arrives on this event loop
            if db.data_version() != version:
                break
            await asyncio.sleep(0.01)
        assert (await client.get(URL, headers=token)).status_code == 403
    finally:
        await other.close()

    await db.execute(
        "UPDATE fleet_vehicles SET status = 'approved' WHERE application_id = :a", {"a": app_id}
    )
    for _ in range(2):
        assert (await client.get(URL, headers=token)).status_code == 200
    listener_pid = db._listener.get_server_pid()
    raw = await asyncpg.connect(db.url, server_settings={"search_path": db.schema or "public"})
    try:
        await raw.execute("SELECT pg_terminate_backend($1)", listener_pid)
        for _ in range(100):
            if db.data_version() is None:
                break
            await asyncio.sleep(0.01)
        assert db.data_version() is None
        # Written without a notification: seen at once all the same (nothing cached).
        await raw.execute(
            "UPDATE fleet_vehicles SET status = 'revoked' WHERE application_id = $1", app_id
        )
        assert (await client.get(URL, headers=token)).status_code == 403
    finally:
        await raw.close()
    for _ in range(300):  # the listener comes back by itself
        if db.data_version() is not None:
            break
        await asyncio.sleep(0.01)
    assert db.data_version() is not None
