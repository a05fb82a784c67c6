"""Every catalog property round-trips: pushed through POST /v1/ingest, stored, served back
identical by the pull endpoint; an invalid value of each property is refused."""

from __future__ import annotations

import random
from typing import Any

import httpx
from fastapi import FastAPI
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from autoport.catalog import (
    CATALOG,
    DateTimeType,
    EnumType,
    IntegerType,
    NumberType,
    ObjectType,
    QuantityType,
    StringType,
)
from autoport.catalog.schemas import example_value
from autoport.catalog.types import DataType
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.environments import Environment
from autoport.vehicle_data.schemas import pull_response_schema
from tests.history import stored
from tests.ingestion.conftest import new_provider
from tests.vehicle_data.conftest import TestCallers

VIN = "WBA00000000000001"


def full_document(rng: random.Random | None) -> dict[str, dict[str, Any]]:
    return {
        cap.name: {p.name: example_value(p, rng=rng) for p in cap.properties}
        for cap in CATALOG.capabilities()
    }


async def roundtrip(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers, rng: random.Random | None
) -> None:
    document = full_document(rng)
    assert sum(len(group) for group in document.values()) == len(CATALOG) == 383
    secret = await new_provider(app)
    response = await client.post(
        "/v1/ingest",
        json={"vin": VIN, "brand": "bmw", **document},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["rejected_count"] == 0
    assert response.json()["accepted_count"] == 383
    every = [p.key for p in CATALOG.properties()]
    app_id = await callers.application(properties=every)
    token = await callers.vehicle_token(app_id, vin=VIN, properties=every)
    served = await client.get(
        f"/v1/vehicle-data/autoapi-13/{VIN}", headers={"Authorization": f"Bearer {token}"}
    )
    assert served.status_code == 200
    body = served.json()
    different = [
        f"{cap}.{name}"
        for cap, group in document.items()
        for name, value in group.items()
        if body.get(cap, {}).get(name) != value
    ]
    assert different == []
    assert set(body) == {"request_id", "vin", "brand", *document}
    # What is served fits the schema the OpenAPI description publishes.
    Draft202012Validator(pull_response_schema()).validate(body)


async def test_every_property_round_trips_with_the_catalog_examples(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await roundtrip(client, app, callers, None)


async def test_every_property_round_trips_with_random_values(
    client: httpx.AsyncClient, app: FastAPI, callers: TestCallers
) -> None:
    await roundtrip(client, app, callers, random.Random(13))


def invalid_data(type_: DataType) -> Any:
    """A value that breaks `type_`."""
    if isinstance(type_, EnumType):
        return "not_" + type_.values[0]
    if isinstance(type_, QuantityType):
        return {"unit": "parsecs", "value": 1.0}
    if isinstance(type_, NumberType):
        return "12" if type_.maximum is None else type_.maximum + 1
    if isinstance(type_, IntegerType):
        return 1.5
    if isinstance(type_, StringType):
        return 42
    if isinstance(type_, DateTimeType):
        return "yesterday"
    if isinstance(type_, ObjectType):
        return {**{n: invalid_data(t) for n, t in type_.fields.items()}, "surplus": True}
    raise TypeError(type_)


async def test_an_invalid_value_of_every_property_is_refused(app: FastAPI) -> None:
    data: dict[str, dict[str, Any]] = {}
    for prop in CATALOG.properties():
        wrapper = {"data": invalid_data(prop.type), "timestamp": "2024-05-01T10:00:00Z"}
        data.setdefault(prop.capability, {})[prop.name] = [wrapper] if prop.multiple else wrapper
    state = app.state.autoport
    report = await ingest_vehicle_data(
        state.database,
        environment=Environment.production,
        vin=VIN,
        brand="bmw",
        data=data,
        now_us=1,
    )
    assert report.accepted == []
    assert len(report.rejected) == 383
    for rejection, prop in zip(report.rejected, CATALOG.properties(), strict=True):
        assert rejection.source.startswith(prop.key), (rejection, prop.key)
    assert await state.database.fetch_value("SELECT count(*) FROM vehicles") == 0
    assert await stored.points(state.database) == 0


async def test_wrapper_mistakes_are_refused(app: FastAPI) -> None:
    ts = "2024-05-01T10:00:00Z"
    cases = {
        "battery_level": {"data": 0.5, "timestamp": ts, "extra": 1},
        "status": {},
        "charge_mode": {"failure": {"reason": "sleepy", "description": "x"}, "timestamp": ts},
        "plugged_in": {"data": "plugged_in", "timestamp": "not a time"},
    }
    state = app.state.autoport
    report = await ingest_vehicle_data(
        state.database,
        environment=Environment.production,
        vin=VIN,
        brand="bmw",
        data={"charging": cases},
        now_us=1,
    )
    reasons = {r.source: r.reason for r in report.rejected}
    assert "unknown member 'extra'" in reasons["charging.battery_level"]
    assert "at least one" in reasons["charging.status"]
    assert "'sleepy' is not one of" in reasons["charging.charge_mode.failure.reason"]
    assert "not an ISO 8601" in reasons["charging.plugged_in.timestamp"]


async def test_a_failure_wrapper_round_trips(app: FastAPI) -> None:
    failure = {
        "failure": {"reason": "privacy_mode_active", "description": "privacy mode"},
        "timestamp": "2024-05-01T10:00:00.000000Z",
    }
    state = app.state.autoport
    report = await ingest_vehicle_data(
        state.database,
        environment=Environment.production,
        vin=VIN,
        brand="bmw",
        data={"charging": {"battery_level": failure}},
        now_us=1,
    )
    assert report.rejected == []
    document = await state.database.fetch_value("SELECT document FROM vehicles")
    assert '"privacy_mode_active"' in document


async def test_the_openapi_description_carries_the_generated_schemas(
    embedded_client: httpx.AsyncClient,
) -> None:
    response = await embedded_client.get("/openapi.json")
    assert response.status_code == 200
    assert "#/$defs/" not in response.text
    paths = response.json()["paths"]
    pull = paths["/v1/vehicle-data/autoapi-13/{vin}"]["get"]
    schema = pull["responses"]["200"]["content"]["application/json"]["schema"]
    assert set(schema["properties"]) >= {"request_id", "vin", "brand", "charging", "doors"}
    assert {"401", "403", "408", "422", "429", "503", "504"} <= set(pull["responses"])
    assert "/v1/vehicle-data/autoapi-13/{vin}/history" in paths
    assert "/v1/ingest" in paths
