"""POST /v1/eligibility on both backends."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI

from autoport.brands.base import BrandConnector, ConnectivityStatus, ConnectorError, Eligibility
from autoport.brands.registry import registry_of
from autoport.brands.sandbox import SandboxDefaults, SettingsBehaviour, VehicleBehaviour
from autoport.eligibility import service as eligibility_service
from autoport.kit.environments import Environment
from tests.fleet.conftest import Callers

VIN = "SBX00000000000001"


async def test_eligible_sandbox_vehicle_answers_every_field(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    response = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": VIN, "brand": "sandbox"},
        headers=callers.sandbox.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "vin": VIN,
        "eligible": True,
        "data_delivery": ["pull", "push"],
        "connectivity_status": "activated",
        "primary_user_assigned": True,
    }


async def test_both_brand_spellings_are_accepted_for_push_only_brands(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    for spelling in ("mercedes-benz", "mercedes_benz", "Mercedes-Benz"):
        response = await client.post(
            "/v1/eligibility",
            json={"vin": VIN, "brand": spelling},
            headers=callers.fleet.headers,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["eligible"] is True
        assert body["data_delivery"] == ["push"]
        assert body["connectivity_status"] == "unknown"


async def test_ineligible_vin_from_settings_is_not_eligible(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    registry = registry_of(app.state.autoport)
    registry.sandbox.defaults = SandboxDefaults(ineligible_vins=frozenset({VIN}))
    response = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": VIN, "brand": "sandbox"},
        headers=callers.sandbox.headers,
    )
    assert response.json() == {
        "vin": VIN,
        "eligible": False,
        "data_delivery": [],
        "connectivity_status": "unknown",
        "primary_user_assigned": True,
    }


async def test_eligible_pattern_as_regular_expression(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    registry_of(app.state.autoport).sandbox.defaults = SandboxDefaults(eligible_vins="/SBX0+1/")
    ok = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": VIN, "brand": "sandbox"},
        headers=callers.sandbox.headers,
    )
    other = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": "SBX00000000000002", "brand": "sandbox"},
        headers=callers.sandbox.headers,
    )
    assert ok.json()["eligible"] is True
    assert other.json()["eligible"] is False


class _Behaviour(SettingsBehaviour):
    async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
        if vin == VIN:
            return VehicleBehaviour(
                connectivity_status=ConnectivityStatus.deactivated, primary_user_assigned=False
            )
        return VehicleBehaviour(eligible=False)

    async def current_data(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> dict[str, dict[str, object]] | None:
        return None


async def test_sandbox_behaviour_overrides_settings_per_vehicle(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    registry_of(app.state.autoport).set_sandbox_behaviour(_Behaviour())
    response = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": VIN, "brand": "sandbox"},
        headers=callers.sandbox.headers,
    )
    assert response.json()["connectivity_status"] == "deactivated"
    assert response.json()["primary_user_assigned"] is False
    other = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": "SBX00000000000002", "brand": "sandbox"},
        headers=callers.sandbox.headers,
    )
    assert other.json()["eligible"] is False


async def test_sandbox_environment_serves_every_brand_with_the_sandbox_connector(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    response = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": VIN, "brand": "bmw"},
        headers=callers.sandbox.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["data_delivery"] == ["pull", "push"]


async def test_brand_not_activated_is_422(client: httpx.AsyncClient, callers: Callers) -> None:
    response = await client.post(
        "/v1/eligibility", json={"vin": VIN, "brand": "audi"}, headers=callers.fleet.headers
    )
    assert response.status_code == 422
    error = response.json()["errors"][0]
    assert error["source"] == "brand"
    assert "not activated" in error["detail"]


async def test_unknown_brand_is_422(client: httpx.AsyncClient, callers: Callers) -> None:
    response = await client.post(
        "/v1/eligibility", json={"vin": VIN, "brand": "trabant"}, headers=callers.fleet.headers
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["source"] == "brand"


@pytest.mark.parametrize(
    ("vin", "detail"),
    [
        ("SBX0000000000001", "17 characters"),
        ("sbx00000000000001", "upper case"),
        ("SBX0000000000000O", "I, O or Q"),
    ],
)
async def test_bad_vin_is_422_naming_the_field(
    client: httpx.AsyncClient, callers: Callers, vin: str, detail: str
) -> None:
    response = await client.post(
        "/v1/eligibility", json={"vin": vin, "brand": "bmw"}, headers=callers.fleet.headers
    )
    assert response.status_code == 422
    error = response.json()["errors"][0]
    assert error["source"] == "vin"
    assert detail in error["detail"]


async def test_missing_fields_are_422_naming_them(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    response = await client.post(
        "/v1/eligibility", json={"vin": VIN}, headers=callers.fleet.headers
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["source"] == "brand"
    malformed = await client.post(
        "/v1/eligibility",
        content=b"{not json",
        headers={**callers.fleet.headers, "content-type": "application/json"},
    )
    assert malformed.status_code == 400


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic abc"])
async def test_missing_or_invalid_token_is_401(
    client: httpx.AsyncClient, callers: Callers, header: str | None
) -> None:
    headers = {"Authorization": header} if header else {}
    response = await client.post(
        "/v1/eligibility", json={"vin": VIN, "brand": "bmw"}, headers=headers
    )
    assert response.status_code == 401


async def test_token_of_the_other_environment_is_401(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    response = await client.post(
        "/sandbox/v1/eligibility",
        json={"vin": VIN, "brand": "bmw"},
        headers=callers.fleet.headers,
    )
    assert response.status_code == 401


async def test_missing_scope_is_403(client: httpx.AsyncClient, callers: Callers) -> None:
    for app_ in (callers.no_scope, callers.vehicle):
        response = await client.post(
            "/v1/eligibility", json={"vin": VIN, "brand": "bmw"}, headers=app_.headers
        )
        assert response.status_code == 403
        assert "vehicle:eligibility-check" in response.json()["errors"][0]["detail"]


async def test_no_token_is_401_even_with_a_bad_body(
    client: httpx.AsyncClient, callers: Callers
) -> None:
    response = await client.post("/v1/eligibility", json={"vin": 5})
    assert response.status_code == 401


class _Unreachable(BrandConnector):
    async def eligibility(self, *, environment: Environment, vin: str) -> Eligibility:
        raise ConnectorError("connection refused")


class _Slow(BrandConnector):
    async def eligibility(self, *, environment: Environment, vin: str) -> Eligibility:
        await asyncio.sleep(5)
        raise AssertionError("not reached")


async def test_carmaker_failure_is_503_and_slowness_504(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = registry_of(app.state.autoport)
    registry.production["bmw"] = _Unreachable()
    registry.production["mercedes_benz"] = _Slow()
    monkeypatch.setattr(eligibility_service, "CONNECTOR_TIMEOUT_SECONDS", 0.05)
    down = await client.post(
        "/v1/eligibility", json={"vin": VIN, "brand": "bmw"}, headers=callers.fleet.headers
    )
    assert down.status_code == 503
    assert "connection refused" in down.json()["errors"][0]["detail"]
    slow = await client.post(
        "/v1/eligibility",
        json={"vin": VIN, "brand": "mercedes-benz"},
        headers=callers.fleet.headers,
    )
    assert slow.status_code == 504
