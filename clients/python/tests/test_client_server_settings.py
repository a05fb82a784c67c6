"""A real server configured unlike the session's one: a vehicle-data limit of 3 per
second, and a public base URL on another host (as behind a proxy, or a hostile one).

- 429: the client waits `Retry-After` and tries again, a bounded number of times, then
  raises `RateLimited` with the wait; a `Retry-After` beyond `max_wait` is raised at once.
- The fleet list's `Link: <...>; rel="next"` names that other host: the client takes only
  its query, on its own base URL, so its bearer token never goes to a host a response
  header names."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LiveServer, launch

from autoport_client import AsyncClient, RateLimited, RetryPolicy

FOREIGN_HOST = "collector.invalid:8443"


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = launch(
        Path(tmp_path_factory.mktemp("rate-limited")),
        AUTOPORT_VEHICLE_DATA_RATE_LIMIT="3/second",
        AUTOPORT_SANDBOX_BASE_URL=f"http://{FOREIGN_HOST}/sandbox",
    )
    try:
        yield live
    finally:
        live.stop()


def test_429_is_retried_after_retry_after(limited: LiveServer) -> None:
    assert limited.demo is not None
    vin = limited.demo.vins["parked"]
    with limited.client() as client:
        started = time.monotonic()
        for _ in range(8):
            assert client.get_vehicle_data(vin).vin == vin
        assert time.monotonic() - started >= 1.0  # it waited for the next window


def test_429_is_raised_once_the_retries_are_spent(limited: LiveServer) -> None:
    assert limited.demo is not None
    vin = limited.demo.vins["parked"]
    client = limited.client(retry=RetryPolicy(max_retries=0))
    with client, pytest.raises(RateLimited) as caught:
        for _ in range(10):
            client.get_vehicle_data(vin)
    assert caught.value.status == 429
    assert caught.value.retry_after is not None and caught.value.retry_after >= 0
    assert caught.value.request_id


async def test_429_async_with_a_short_max_wait(limited: LiveServer) -> None:
    assert limited.demo is not None
    demo = limited.demo
    vin = demo.vins["parked"]
    await asyncio.sleep(1.1)  # a fresh window
    async with AsyncClient(
        limited.root, demo.client_id, demo.client_secret, environment="sandbox",
        retry=RetryPolicy(max_retries=5, max_wait=0.0),
    ) as client:  # fmt: skip
        with pytest.raises(RateLimited):
            for _ in range(10):
                await client.get_vehicle_data(vin)
    async with AsyncClient(
        limited.root, demo.client_id, demo.client_secret, environment="sandbox"
    ) as client:
        results = await asyncio.gather(*(client.get_vehicle_data(vin) for _ in range(6)))
        assert {data.vin for data in results} == {vin}


def test_paging_never_follows_the_link_to_another_host(limited: LiveServer) -> None:
    assert limited.demo is not None
    with limited.client() as client:
        page = client._http.get(
            "/v1/fleets/vehicles",
            params={"limit": "1"},
            headers={"Authorization": f"Bearer {client.app_token()}"},
        )
        assert FOREIGN_HOST in page.headers["link"]  # the server names the other host
        vins = [vehicle.vin for vehicle in client.list_fleet_vehicles(page_size=1)]
    assert sorted(vins) == sorted(limited.demo.vins.values())  # three pages, all here
