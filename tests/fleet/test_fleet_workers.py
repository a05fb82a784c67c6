"""Several workers (separate Database objects: separate SQLite connections, separate
PostgreSQL pools) on the same due vehicles: each transition happens once, each event is
written once."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import orjson
from fastapi import FastAPI

from autoport.app import create_app
from autoport.brands.registry import BrandRegistry, registry_of
from autoport.brands.sandbox import SettingsBehaviour, VehicleBehaviour
from autoport.config import Settings
from autoport.fleet import repository
from autoport.fleet.tasks import WorkerConfig, _advance, process_due
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.vehicles.vin import generate_vin
from tests.factories import create_app_credentials
from tests.fleet.conftest import Callers


class _Yielding(SettingsBehaviour):
    """Sandbox behaviour that yields to the event loop, so the workers interleave while
    they wait for "the carmaker"."""

    async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
        await asyncio.sleep(0.001)
        return VehicleBehaviour()

    async def current_data(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> dict[str, dict[str, object]] | None:
        return None


async def _add_many(client: httpx.AsyncClient, callers: Callers, count: int) -> list[str]:
    import random

    rng = random.Random(7)
    vins = sorted({generate_vin(rng) for _ in range(count)})
    # The sandbox environment: its emulated carmaker decides (after its delay).
    response = await client.post(
        "/sandbox/v1/fleets/vehicles",
        json={"vehicles": [{"vin": v, "brand": "sandbox"} for v in vins]},
        headers=callers.sandbox.headers,
    )
    assert response.status_code == 200
    assert {v["status"] for v in response.json()["vehicles"]} == {"pending"}
    return vins


def _registry(settings: Settings, clock: FrozenClock) -> BrandRegistry:
    registry = BrandRegistry.from_settings(settings, clock=clock)
    registry.set_sandbox_behaviour(_Yielding())
    return registry


async def _drain(db: Database, registry: BrandRegistry, clock: FrozenClock) -> int:
    config = WorkerConfig(batch_size=7)
    total = 0
    for _ in range(100):
        done = await process_due(db, registry, clock=clock, config=config)
        total += done
        if done == 0:
            return total
    return total


async def test_two_workers_approve_each_vehicle_exactly_once(
    app: FastAPI,
    client: httpx.AsyncClient,
    callers: Callers,
    clock: FrozenClock,
    settings: Settings,
    two_databases: tuple[Database, Database],
) -> None:
    vins = await _add_many(client, callers, 60)
    clock.advance(5)
    first, second = two_databases
    done = await asyncio.gather(
        _drain(first, _registry(settings, clock), clock),
        _drain(second, _registry(settings, clock), clock),
    )
    assert sum(done) == len(vins)
    # Both really worked (the claims interleaved rather than one worker taking all).
    assert min(done) > 0
    db = app.state.autoport.database
    rows = await db.fetch_all("SELECT vin, status, changelog FROM fleet_vehicles")
    assert {r["vin"] for r in rows} == set(vins)
    for row in rows:
        assert row["status"] == "approved"
        assert [e["status"] for e in orjson.loads(row["changelog"])] == ["pending", "approved"]
    counts = Counter(
        (r["vin"], r["consumer"], orjson.loads(r["payload"])["action"])
        for r in await db.fetch_all(
            "SELECT vin, consumer, payload FROM outbox WHERE event_type = 'fleet_clearance_changed'"
        )
    )
    assert set(counts.values()) == {1}
    assert len(counts) == len(vins) * 2 * 2  # pending + approved, webhooks + streaming


async def test_workers_holding_the_same_vehicle_after_a_lost_lease_apply_it_once(
    app: FastAPI,
    client: httpx.AsyncClient,
    callers: Callers,
    clock: FrozenClock,
    settings: Settings,
    two_databases: tuple[Database, Database],
) -> None:
    vins = await _add_many(client, callers, 10)
    clock.advance(5)
    first, second = two_databases
    now = clock.now_us()
    # The first worker's lease ends at once (as if it stalled); the second claims too.
    claimed_a = await repository.claim_due(first, now_us=now, lease_until_us=now, limit=100)
    claimed_b = await repository.claim_due(second, now_us=now, lease_until_us=now, limit=100)
    assert {c.key.vin for c in claimed_a} == {c.key.vin for c in claimed_b} == set(vins)
    results = await asyncio.gather(
        *(
            _advance(db, _registry(settings, clock), item, clock=clock, config=WorkerConfig())
            for db, claimed in ((first, claimed_a), (second, claimed_b))
            for item in claimed
        )
    )
    assert sum(results) == len(vins)
    db = app.state.autoport.database
    approved = await db.fetch_value(
        "SELECT COUNT(*) FROM outbox WHERE event_type = 'fleet_clearance_changed' "
        "AND consumer = 'webhooks' AND payload LIKE '%approved%'"
    )
    assert approved == len(vins)


async def test_claimed_vehicles_are_not_due_for_another_worker_until_the_lease_ends(
    client: httpx.AsyncClient,
    callers: Callers,
    clock: FrozenClock,
    two_databases: tuple[Database, Database],
) -> None:
    await _add_many(client, callers, 3)
    first, second = two_databases
    now = clock.now_us()
    taken = await repository.claim_due(first, now_us=now, lease_until_us=now + 60_000_000, limit=10)
    assert len(taken) == 3
    assert await repository.claim_due(second, now_us=now, lease_until_us=now + 1, limit=10) == []
    clock.advance(61)
    later = clock.now_us()
    again = await repository.claim_due(second, now_us=later, lease_until_us=later + 1, limit=10)
    assert len(again) == 3


async def test_background_worker_runs_with_the_app(settings: Settings) -> None:
    """The worker registered in autoport.app approves a vehicle on its own (real clock)."""
    fast = settings.model_copy(
        update={
            "sandbox_connector_clearance_delay_seconds": 0.0,
            "fleet_worker_interval_seconds": 0.05,
        }
    )
    app = create_app(fast)
    async with app.router.lifespan_context(app):
        state = app.state.autoport
        creds = await create_app_credentials(
            state.database, environment=Environment.sandbox, brands=["sandbox"]
        )
        from autoport.fleet.repository import VehicleKey

        async with state.database.transaction() as conn:
            await repository.create_pending(
                conn,
                VehicleKey(Environment.sandbox, creds.app_id, "SBX00000000000009"),
                brand="sandbox",
                tags={},
                changelog=[],
                now_us=state.clock.now_us(),
            )
        status = None
        for _ in range(100):
            status = await state.database.fetch_value(
                "SELECT status FROM fleet_vehicles WHERE vin = 'SBX00000000000009'"
            )
            if status == "approved":
                break
            await asyncio.sleep(0.05)
        assert status == "approved"
        assert registry_of(state).sandbox is registry_of(state).data_sources["sandbox"]
