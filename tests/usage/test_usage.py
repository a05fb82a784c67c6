"""Usage figures (autoport.usage): requests per application and day counted in memory by
the real authenticator and the real rate limit, flushed to usage_daily, and read back
with the webhook deliveries' success rate, on both backends."""

from __future__ import annotations

import uuid

import httpx
import pytest
from fastapi import FastAPI

from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.kit.usage import day_text, usage_of
from autoport.usage import service
from autoport.usage.tasks import flush_usage
from autoport.webhooks import repository as webhooks_repository
from tests.factories import bearer, client_credentials_token, create_app_credentials

DAY_US = 86_400 * 1_000_000
VIN = "SBX00000000000001"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"vehicle_data_rate_limit": "3/minute"})


def _state(app: FastAPI) -> AppState:
    state: AppState = app.state.autoport
    return state


async def test_requests_and_rate_limit_hits_are_counted_per_application_and_day(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    state = _state(app)
    db = state.database
    one = await create_app_credentials(db, environment=Environment.sandbox, now_us=clock.now_us())
    other = await create_app_credentials(db, environment=Environment.sandbox, now_us=clock.now_us())
    one_token = bearer(await client_credentials_token(client, one))
    other_token = bearer(await client_credentials_token(client, other))
    for _ in range(5):  # 3 answered (403: no clearance), then 429
        await client.get(f"/sandbox/v1/vehicle-data/autoapi-13/{VIN}", headers=one_token)
    assert (await client.get("/sandbox/v1/fleets/vehicles", headers=one_token)).status_code == 200
    assert (await client.get("/sandbox/v1/fleets/vehicles", headers=other_token)).status_code == 200
    # Refused tokens count for nobody.
    await client.get("/sandbox/v1/fleets/vehicles", headers=bearer("not-a-token"))
    assert await flush_usage(state) == 2
    assert usage_of(state).counts == {}
    # The next day, and a second flush that adds (as another process's would).
    clock.advance(86_400)
    one_token = bearer(await client_credentials_token(client, one))  # the first expired
    await client.get("/sandbox/v1/fleets/vehicles", headers=one_token)
    assert await flush_usage(state) == 1
    report = await service.usage_report(
        db.reader,
        environment="sandbox",
        applications=[(one.app_id, "One")],
        now_us=clock.now_us(),
        days=3,
    )
    assert report.days[-1] == day_text(clock.now_us() // DAY_US)
    assert len(report.days) == len(report.day_starts) == 3
    [usage] = report.applications  # the other application is not read
    assert usage.requests == [0, 6, 1]
    assert usage.rate_limited == [0, 2, 0]
    assert usage.total_requests == 7 and usage.total_rate_limited == 2
    # Scoped to the environment too.
    production = await service.usage_report(
        db.reader,
        environment="production",
        applications=[(one.app_id, "One")],
        now_us=clock.now_us(),
        days=3,
    )
    assert production.applications[0].total_requests == 0


async def test_a_failed_flush_keeps_the_counts(app: FastAPI, clock: FrozenClock) -> None:
    state = _state(app)
    usage_of(state).request("sandbox", "APP", clock.now_us())
    await state.database.close()
    with pytest.raises(Exception):  # noqa: B017 - any database error
        await flush_usage(state)
    assert usage_of(state).counts != {}
    await state.database.connect()
    assert await flush_usage(state) == 1


async def _delivery(db: Database, app_id: str, status: str, created_at: int) -> None:
    async with db.transaction() as conn:
        await webhooks_repository.create_deliveries(
            conn,
            [
                {
                    "delivery_id": str(uuid.uuid4()),
                    "environment": "sandbox",
                    "application_id": app_id,
                    "event_type": "vehicle_data_changed",
                    "vin": VIN,
                    "body": "{}",
                    "attempts": 0,
                    "created_at": created_at,
                    "enqueued_at": created_at,
                    "next_attempt_at": created_at,
                    "expires_at": created_at + DAY_US,
                    "claimed_by": None,
                    "claimed_until": None,
                }
            ],
        )
        if status != "pending":
            await conn.execute(
                "UPDATE webhook_deliveries SET status = :status WHERE application_id = :app "
                "AND status = 'pending' AND created_at = :at",
                {"status": status, "app": app_id, "at": created_at},
            )


async def test_webhook_success_rate_per_application_and_day(
    app: FastAPI, clock: FrozenClock
) -> None:
    db = _state(app).database
    now = clock.now_us()
    for i, status in enumerate(["succeeded", "succeeded", "succeeded", "failed", "pending"]):
        await _delivery(db, "APP-ONE", status, now - i)
    await _delivery(db, "APP-ONE", "failed", now - DAY_US)
    await _delivery(db, "APP-TWO", "failed", now)  # not asked for
    await _delivery(db, "APP-ONE", "failed", now - 30 * DAY_US)  # before the period
    report = await service.usage_report(
        db.reader, environment="sandbox", applications=[("APP-ONE", "One")], now_us=now, days=2
    )
    [usage] = report.applications
    assert usage.succeeded == [0, 3] and usage.failed == [1, 1] and usage.pending == 1
    assert usage.success_rate == pytest.approx(3 / 5)
    assert usage.daily_success_rate() == [0.0, 75.0]
    empty = await service.usage_report(
        db.reader, environment="sandbox", applications=[], now_us=now, days=2
    )
    assert empty.applications == []


def test_the_period_is_checked() -> None:
    assert service.checked_days(None) == service.DEFAULT_DAYS
    for bad in (0, service.MAX_DAYS + 1):
        with pytest.raises(Exception, match="days: must be between"):
            service.checked_days(bad)
