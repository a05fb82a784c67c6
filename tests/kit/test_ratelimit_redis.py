"""The rate limit shared through Redis (scale-out), against the local Redis server."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from autoport.kit.ratelimit import RateLimiter
from tests.conftest import service_missing

REDIS_URL = "redis://127.0.0.1:6379/0"


async def _redis_problem() -> str | None:
    import redis.asyncio as redis

    client = redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    finally:
        await client.aclose()
    return None


@pytest.fixture
async def redis_url() -> str:
    problem = await _redis_problem()
    if problem:
        service_missing(f"Redis at {REDIS_URL} unreachable: {problem}")
    return REDIS_URL


async def test_two_limiters_on_one_redis_share_the_budget(redis_url: str) -> None:
    # Two replicas: each has its own limiter object, both count in Redis.
    namespace = "test_" + secrets.token_hex(6)
    first = RateLimiter("4/minute", redis_url=redis_url, namespace=namespace)
    second = RateLimiter("4/minute", redis_url=redis_url, namespace=namespace)
    verdicts = [await (first if i % 2 else second).hit("APP1") for i in range(5)]
    assert [v.allowed for v in verdicts] == [True, True, True, True, False]
    assert [v.remaining for v in verdicts] == [3, 2, 1, 0, 0]
    refused = verdicts[-1].headers()
    assert refused["RateLimit-Limit"] == "4"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert (await first.hit("APP2")).allowed


async def test_memory_limiters_do_not_share(redis_url: str) -> None:
    first = RateLimiter("1/minute")
    second = RateLimiter("1/minute")
    assert (await first.hit("APP")).allowed and (await second.hit("APP")).allowed
    assert not (await first.hit("APP")).allowed


async def test_an_unreachable_redis_lets_requests_through() -> None:
    limiter = RateLimiter("1/minute", redis_url="redis://127.0.0.1:1/0")
    verdicts = await asyncio.gather(*(limiter.hit("APP") for _ in range(3)))
    assert all(v.allowed for v in verdicts)


async def test_the_pull_endpoint_counts_in_redis_when_configured(
    redis_url: str, settings: object, clock: object
) -> None:
    import httpx

    from autoport.app import create_app
    from autoport.config import Settings
    from autoport.ingestion.service import ingest_vehicle_data
    from autoport.kit.environments import Environment
    from tests.vehicle_data.conftest import TestCallers

    assert isinstance(settings, Settings)
    configured = settings.model_copy(
        update={"redis_url": redis_url, "vehicle_data_rate_limit": "2/minute"}
    )
    vin = "WBA00000000000001"
    url = f"/v1/vehicle-data/autoapi-13/{vin}"
    statuses = []
    # Two app instances (two replicas) on one database and one Redis.
    apps = [create_app(configured, run_background=False) for _ in range(2)]
    async with apps[0].router.lifespan_context(apps[0]), apps[1].router.lifespan_context(apps[1]):
        state = apps[0].state.autoport
        await ingest_vehicle_data(
            state.database,
            environment=Environment.production,
            vin=vin,
            brand="bmw",
            data={"charging": {"battery_level": {"data": 0.5}}},
            now_us=1,
        )
        # A real consent token issued by the first replica; both authenticate it.
        callers = TestCallers(apps[0])
        app_id = await callers.application(properties=["charging.battery_level"])
        token = await callers.vehicle_token(app_id, vin=vin, properties=["charging.battery_level"])
        await callers.aclose()
        for index in range(3):
            transport = httpx.ASGITransport(app=apps[index % 2])
            async with httpx.AsyncClient(
                transport=transport, base_url="http://127.0.0.1:8080"
            ) as c:
                response = await c.get(url, headers={"Authorization": f"Bearer {token}"})
                statuses.append(response.status_code)
    assert statuses == [200, 200, 429]
