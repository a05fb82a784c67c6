"""/v1/fleets/vehicles and the worker, on both backends: every transition, every error."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from autoport.brands.base import (
    BrandConnector,
    ClearanceDecision,
    ClearanceOutcome,
    ClearanceRequest,
    ConnectorError,
)
from autoport.brands.registry import registry_of
from autoport.brands.sandbox import SandboxDefaults
from autoport.kit.clock import FrozenClock, from_iso
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.vehicles.access import approved_clearance_brand, readers_of
from tests.fleet.clearance import VIN, add, vehicle, work
from tests.fleet.conftest import Callers

VIN2 = "SBX00000000000002"


async def events(app: FastAPI, vin: str = VIN) -> list[tuple[str, str | None, str]]:
    rows = await app.state.autoport.database.fetch_all(
        "SELECT payload, application_id FROM outbox "
        "WHERE event_type = 'fleet_clearance_changed' AND consumer = 'webhooks' AND vin = :vin "
        "ORDER BY id",
        {"vin": vin},
    )
    import orjson

    out = []
    for row in rows:
        payload = orjson.loads(row["payload"])
        out.append((payload["action"], payload["detail"], row["application_id"]))
    return out


def statuses(body: Any) -> list[str]:
    return [entry["status"] for entry in body["changelog"]]


async def test_pending_becomes_approved_after_the_sandbox_delay(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    answer = await add(
        client, callers.sandbox, {"vin": VIN, "brand": "sandbox", "tags": {"depot": "n"}}
    )
    assert answer == [{"vin": VIN, "status": "pending", "tags": {"depot": "n"}}]
    assert await work(app, clock) == 0  # asked, carmaker not decided yet
    clock.advance(4.9)
    assert await work(app, clock) == 0
    assert (await vehicle(client, callers.sandbox))["status"] == "pending"
    clock.advance(0.2)
    assert await work(app, clock) == 1
    body = await vehicle(client, callers.sandbox)
    assert body["status"] == "approved"
    assert body["brand"] == "sandbox"
    assert body["tags"] == {"depot": "n"}
    assert statuses(body) == ["pending", "approved"]
    for entry in body["changelog"]:
        assert entry["timestamp"].endswith("Z")
        assert from_iso(entry["timestamp"]) <= clock.now_us()
    assert await events(app) == [
        ("pending", None, callers.sandbox.id),
        ("approved", None, callers.sandbox.id),
    ]
    async with app.state.autoport.database.transaction() as conn:
        assert (
            await approved_clearance_brand(
                conn, environment=Environment.sandbox, application_id=callers.sandbox.id, vin=VIN
            )
            == "sandbox"
        )
        readers = await readers_of(
            conn, environment=Environment.sandbox, vin=VIN, brand="sandbox", now_us=clock.now_us()
        )
    assert [(r.application_id, sorted(r.properties)) for r in readers] == [
        (callers.sandbox.id, ["charging.battery_level", "diagnostics.odometer"])
    ]


async def test_rejected_by_the_carmaker_with_a_reason(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    registry_of(app.state.autoport).sandbox.defaults = SandboxDefaults(
        clearance_delay_seconds=0,
        clearance_outcome=ClearanceOutcome.rejected,
        rejection_reason="fleet contract missing",
    )
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
    assert await work(app, clock) == 1
    body = await vehicle(client, callers.sandbox)
    assert body["status"] == "rejected"
    assert body["changelog"][-1]["reason"] == "fleet contract missing"
    assert (await events(app))[-1] == ("rejected", "fleet contract missing", callers.sandbox.id)


async def test_ineligible_vehicle_is_rejected(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    registry_of(app.state.autoport).sandbox.defaults = SandboxDefaults(
        clearance_delay_seconds=0, ineligible_vins=frozenset({VIN})
    )
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
    await work(app, clock)
    body = await vehicle(client, callers.sandbox)
    assert body["status"] == "rejected"
    assert "not eligible" in body["changelog"][-1]["reason"]


async def test_carmaker_error_ends_in_error(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    registry_of(app.state.autoport).sandbox.defaults = SandboxDefaults(
        clearance_delay_seconds=0, clearance_outcome=ClearanceOutcome.error
    )
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
    await work(app, clock)
    body = await vehicle(client, callers.sandbox)
    assert body["status"] == "error"
    assert (await events(app))[-1][0] == "error"


async def test_approved_vehicle_is_revoked_through_revoking(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
    clock.advance(5)
    await work(app, clock)
    response = await client.delete(
        f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "revoking"
    # Revoking: no longer readable through the clearance.
    async with app.state.autoport.database.transaction() as conn:
        assert (
            await approved_clearance_brand(
                conn, environment=Environment.sandbox, application_id=callers.sandbox.id, vin=VIN
            )
            is None
        )
    again = await client.delete(
        f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers
    )
    assert again.status_code == 409
    assert "being removed" in again.json()["errors"][0]["detail"]
    assert await work(app, clock) == 0  # carmaker confirms after 1 s
    clock.advance(1)
    assert await work(app, clock) == 1
    body = await vehicle(client, callers.sandbox)
    assert statuses(body) == ["pending", "approved", "revoking", "revoked"]
    assert [e[0] for e in await events(app)] == ["pending", "approved", "revoking", "revoked"]
    gone = await client.delete(
        f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers
    )
    assert gone.status_code == 409
    assert "ended" in gone.json()["errors"][0]["detail"]


async def test_pending_vehicle_is_canceled_through_canceling(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
    response = await client.delete(
        f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers
    )
    assert response.status_code == 200
    assert response.json()["status"] == "canceling"
    assert (
        await client.delete(f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers)
    ).status_code == 409
    clock.advance(10)  # past the approval delay: a canceled request is never approved
    assert await work(app, clock) == 1
    body = await vehicle(client, callers.sandbox)
    assert statuses(body) == ["pending", "canceling", "canceled"]
    assert (
        await client.delete(f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers)
    ).status_code == 409


@pytest.mark.parametrize("ended", ["rejected", "error", "canceled", "revoked"])
async def test_ended_clearance_can_be_requested_again(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock, ended: str
) -> None:
    sandbox = registry_of(app.state.autoport).sandbox
    if ended in ("rejected", "error"):
        sandbox.defaults = SandboxDefaults(
            clearance_delay_seconds=0, clearance_outcome=ClearanceOutcome(ended)
        )
        await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
        await work(app, clock)
        sandbox.defaults = SandboxDefaults(clearance_delay_seconds=5)
    else:
        await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
        if ended == "revoked":
            clock.advance(5)
            await work(app, clock)
        await client.delete(f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers)
        clock.advance(2)
        await work(app, clock)
    assert (await vehicle(client, callers.sandbox))["status"] == ended
    clock.advance(1)
    again = await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox", "tags": {"k": "v"}})
    assert again[0]["status"] == "pending"
    assert again[0]["tags"] == {"k": "v"}
    clock.advance(5)
    await work(app, clock)
    body = await vehicle(client, callers.sandbox)
    assert body["status"] == "approved"
    assert statuses(body)[-2:] == ["pending", "approved"]


async def test_already_registered_vehicle_answers_its_current_state(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox", "tags": {"a": "1"}})
    clock.advance(5)
    await work(app, clock)
    answer = await add(
        client, callers.sandbox, {"vin": VIN, "brand": "sandbox", "tags": {"b": "2"}}
    )
    assert answer[0]["status"] == "approved"
    assert answer[0]["tags"] == {"a": "1"}
    assert "already registered" in answer[0]["description"]
    body = await vehicle(client, callers.sandbox)
    assert statuses(body) == ["pending", "approved"]
    assert len(await events(app)) == 2


async def test_per_vehicle_errors_inside_a_200(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    answer = await add(
        client,
        callers.fleet,
        {"vin": VIN, "brand": "bmw"},
        {"vin": "SHORT", "brand": "bmw"},
        {"vin": VIN2, "brand": "trabant"},
        {"vin": VIN2, "brand": "audi"},
        {"vin": VIN2, "brand": "bmw", "tags": {"n": 1}},
        {"vin": VIN2},
        "not an object",
        {"vin": VIN2, "brand": "mercedes-benz"},
    )
    assert [a["status"] for a in answer] == [
        "pending",
        "error",
        "error",
        "error",
        "error",
        "error",
        "error",
        "pending",
    ]
    assert "vin: must be 17 characters" in answer[1]["description"]
    assert answer[1]["vin"] == "SHORT"
    assert "unknown brand" in answer[2]["description"]
    assert "not activated" in answer[3]["description"]
    assert "tags.n" in answer[4]["description"]
    assert "brand" in answer[5]["description"]
    assert "vin" not in answer[6]
    stored = await vehicle(client, callers.fleet, VIN2)
    assert stored["brand"] == "mercedes-benz"


async def test_a_vin_that_is_not_a_string_is_echoed_as_one_never_as_null(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    """The original types an answer's `vin` as a non-null string, and clients key the
    answers by it (issue #38): a number comes back as its JSON text, a missing, null,
    object or array vin leaves the field out. No answer holds a null anywhere."""
    sent = [12345678901234567, 1.5, True, None, {"a": 1}, [VIN]]
    answer = await add(
        client,
        callers.fleet,
        *({"vin": vin, "brand": "bmw"} for vin in sent),
        {"brand": "bmw"},
    )
    assert [a["status"] for a in answer] == ["error"] * 7
    assert [a.get("vin") for a in answer] == ["12345678901234567", "1.5", "true"] + [None] * 4
    assert all("vin" not in a for a in answer[3:])
    assert all(value is not None for a in answer for value in a.values())
    assert "vin: must be a string" in answer[0]["description"]


async def test_bad_body_is_a_clear_4xx_and_stores_nothing(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    no_list = await client.post(
        "/v1/fleets/vehicles", json={"vehicles": "x"}, headers=callers.fleet.headers
    )
    assert no_list.status_code == 422
    assert no_list.json()["errors"][0]["source"] == "vehicles"
    missing = await client.post("/v1/fleets/vehicles", json={}, headers=callers.fleet.headers)
    assert missing.status_code == 422
    malformed = await client.post(
        "/v1/fleets/vehicles",
        content=b"[",
        headers={**callers.fleet.headers, "content-type": "application/json"},
    )
    assert malformed.status_code == 400
    listed = await client.get("/v1/fleets/vehicles", headers=callers.fleet.headers)
    assert listed.json() == []


async def test_too_many_vehicles_in_one_request_is_422(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    state: AppState = app.state.autoport
    state.settings = state.settings.model_copy(update={"fleet_max_vehicles_per_request": 2})
    response = await client.post(
        "/v1/fleets/vehicles",
        json={"vehicles": [{"vin": VIN, "brand": "bmw"}] * 3},
        headers=callers.fleet.headers,
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["source"] == "vehicles"


async def test_unknown_vehicle_is_404_and_bad_vin_422(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    for method in ("GET", "DELETE"):
        unknown = await client.request(
            method, f"/v1/fleets/vehicles/{VIN}", headers=callers.fleet.headers
        )
        assert unknown.status_code == 404
        assert unknown.json()["errors"][0]["source"] == "vin"
        bad = await client.request(
            method, "/v1/fleets/vehicles/nope", headers=callers.fleet.headers
        )
        assert bad.status_code == 422
        assert bad.json()["errors"][0]["source"] == "vin"


async def test_vehicles_are_scoped_to_application_and_environment(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
    for caller in (callers.sandbox_other, callers.fleet):
        path = f"{caller.prefix}/v1/fleets/vehicles"
        assert (await client.get(f"{path}/{VIN}", headers=caller.headers)).status_code == 404
        assert (await client.delete(f"{path}/{VIN}", headers=caller.headers)).status_code == 404
        listed = await client.get(path, headers=caller.headers)
        assert listed.json() == []
    # The other application adds the same VIN: its own clearance, its own lifecycle.
    other = await add(client, callers.sandbox_other, {"vin": VIN, "brand": "sandbox"})
    assert other[0]["status"] == "pending"
    await client.delete(f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox_other.headers)
    clock.advance(5)
    await work(app, clock)
    assert (await vehicle(client, callers.sandbox))["status"] == "approved"
    assert (await vehicle(client, callers.sandbox_other))["status"] == "canceled"


async def test_sandbox_environment_fleet(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    response = await client.post(
        "/sandbox/v1/fleets/vehicles",
        json={"vehicles": [{"vin": VIN, "brand": "bmw"}]},
        headers=callers.sandbox.headers,
    )
    assert response.json()["vehicles"][0]["status"] == "pending"
    clock.advance(5)
    await work(app, clock)
    got = await client.get(f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers)
    assert got.json()["status"] == "approved"


@pytest.mark.parametrize("header", [None, "Bearer nope"])
async def test_fleet_without_valid_token_is_401(
    client: httpx.AsyncClient, callers: Callers, header: str | None
) -> None:
    headers = {"Authorization": header} if header else {}
    assert (await client.get("/v1/fleets/vehicles", headers=headers)).status_code == 401
    assert (
        await client.post("/v1/fleets/vehicles", json={"vehicles": []}, headers=headers)
    ).status_code == 401
    assert (await client.delete(f"/v1/fleets/vehicles/{VIN}", headers=headers)).status_code == 401


async def test_fleet_without_scope_is_403(client: httpx.AsyncClient, callers: Callers) -> None:
    for app_ in (callers.no_scope, callers.vehicle):
        for method, path in (
            ("GET", "/v1/fleets/vehicles"),
            ("GET", f"/v1/fleets/vehicles/{VIN}"),
            ("DELETE", f"/v1/fleets/vehicles/{VIN}"),
        ):
            response = await client.request(method, path, headers=app_.headers)
            assert response.status_code == 403, (method, path)
        post = await client.post(
            "/v1/fleets/vehicles",
            json={"vehicles": [{"vin": VIN, "brand": "bmw"}]},
            headers=app_.headers,
        )
        assert post.status_code == 403


async def test_delete_racing_the_worker_wins_cleanly(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    """The worker claimed a pending vehicle, then a DELETE cancels it before the carmaker's
    answer is applied: the answer is dropped, the cancel goes on."""
    from autoport.fleet import repository

    state: AppState = app.state.autoport
    await add(client, callers.sandbox, {"vin": VIN, "brand": "sandbox"})
    clock.advance(5)
    claimed = await repository.claim_due(
        state.database, now_us=clock.now_us(), lease_until_us=clock.now_us() + 1, limit=10
    )
    assert [c.key.vin for c in claimed] == [VIN]
    await client.delete(f"/sandbox/v1/fleets/vehicles/{VIN}", headers=callers.sandbox.headers)
    from autoport.fleet.tasks import WorkerConfig, _advance

    applied = await _advance(
        state.database, registry_of(state), claimed[0], clock=clock, config=WorkerConfig()
    )
    assert applied == 0
    body = await vehicle(client, callers.sandbox)
    assert statuses(body) == ["pending", "canceling"]


class _FlakyCarmaker(BrandConnector):
    """Fails to answer until told otherwise, then approves."""

    def __init__(self) -> None:
        super().__init__(name="flaky")
        self.up = False

    async def clearance(self, request: ClearanceRequest) -> ClearanceDecision:
        if not self.up:
            raise ConnectorError("carmaker API down")
        return ClearanceDecision(ClearanceOutcome.approved)


async def test_carmaker_outage_leaves_the_vehicle_pending_until_it_answers(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    flaky = _FlakyCarmaker()
    registry_of(app.state.autoport).production["bmw"] = flaky
    await add(client, callers.fleet, {"vin": VIN, "brand": "bmw"})
    assert await work(app, clock) == 0
    assert (await vehicle(client, callers.fleet))["status"] == "pending"
    flaky.up = True
    assert await work(app, clock) == 0  # still leased: nobody asks before the lease ends
    clock.advance(61)
    assert await work(app, clock) == 1
    body = await vehicle(client, callers.fleet)
    assert statuses(body) == ["pending", "approved"]
    assert body["brand"] == "bmw"


async def test_push_only_brand_waits_for_its_data_provider(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, clock: FrozenClock
) -> None:
    """No carmaker connector decides a push-fed brand's clearances: the worker asks
    nobody, approves nothing, and stops looking at the vehicle until a decision."""
    await add(client, callers.fleet, {"vin": VIN, "brand": "mercedes_benz"})
    assert await work(app, clock) == 0
    clock.advance(120)  # past the poll interval and the lease
    assert await work(app, clock) == 0
    assert (await vehicle(client, callers.fleet))["status"] == "pending"
    due = await app.state.autoport.database.fetch_value(
        "SELECT next_check_at FROM fleet_vehicles WHERE vin = :vin", {"vin": VIN}
    )
    assert due is None  # not polled: the decision moves it
