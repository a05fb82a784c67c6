"""Fleet clearance and brands (docs/security.md, "Fleet clearance and brands"): an
application reads a car only through a clearance the party that knows the car decided,
only for the brand it was decided for, and never through the sandbox's emulated carmaker
in production. Each test is an attack that worked before; both backends."""

from __future__ import annotations

import re
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from autoport.brands.registry import BrandRegistry, ConnectorConfigError, registry_of
from autoport.config import Settings
from autoport.fleet.tasks import process_due
from autoport.ingestion import providers
from autoport.ingestion.service import IngestError, ingest_vehicle_data
from autoport.kit.clock import FrozenClock, to_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.streaming.tasks import StreamBuilder
from tests.factories import (
    AppCredentials,
    bearer,
    client_credentials_token,
    create_app_credentials,
    pkce_pair,
    vehicle_token,
)

PROD = Environment.production
BMW_VIN = "WBA3A5C50CF256789"  # WMI WBA: BMW
UNMARKED_VIN = "SBX00000000000042"  # a manufacturer code no brand claims
PROPERTIES = ["charging.battery_level", "vehicle_location.coordinates"]
ADMIN_TOKEN = "clearance-admin-token"
ADMIN = bearer(ADMIN_TOKEN)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    from pydantic import SecretStr

    return settings.model_copy(update={"admin_token": SecretStr(ADMIN_TOKEN)})


def state_of(app: FastAPI) -> AppState:
    state: AppState = app.state.autoport
    return state


async def application(
    app: FastAPI, brands: list[str], environment: Environment = PROD
) -> AppCredentials:
    return await create_app_credentials(
        state_of(app).database,
        environment=environment,
        brands=brands,
        properties=PROPERTIES,
        now_us=state_of(app).clock.now_us(),
    )


async def provider(
    app: FastAPI, brands: list[str], *, auto_approve: bool = False, environment: Environment = PROD
) -> str:
    """A data provider speaking for `brands`; returns its secret."""
    state = state_of(app)
    async with state.database.transaction() as conn:
        _, secret = await providers.create_provider(
            conn,
            key=state.token_key,
            environment=environment,
            name=f"feed of {'+'.join(brands)}",
            now_us=state.clock.now_us(),
            brands=brands,
            auto_approve_clearances=auto_approve,
        )
    return secret


async def store(db: Database, vin: str, brand: str | None, now_us: int) -> None:
    """What a carmaker's feed pushed for `vin`: its location and battery."""
    report = await ingest_vehicle_data(
        db,
        environment=PROD,
        vin=vin,
        brand=brand,
        data={
            "vehicle_location": {
                "coordinates": {
                    "data": {"latitude": 48.1, "longitude": 11.5},
                    "timestamp": to_iso(now_us),
                }
            },
            "charging": {"battery_level": {"data": 0.5, "timestamp": to_iso(now_us)}},
        },
        now_us=now_us,
    )
    assert not report.rejected, report.rejected


async def clear(client: httpx.AsyncClient, token: str, vin: str, brand: str) -> dict[str, Any]:
    response = await client.post(
        "/v1/fleets/vehicles",
        json={"vehicles": [{"vin": vin, "brand": brand}]},
        headers=bearer(token),
    )
    assert response.status_code == 200, response.text
    item: dict[str, Any] = response.json()["vehicles"][0]
    return item


async def status_of(client: httpx.AsyncClient, token: str, vin: str) -> str:
    response = await client.get(f"/v1/fleets/vehicles/{vin}", headers=bearer(token))
    assert response.status_code == 200, response.text
    return str(response.json()["status"])


async def pull(client: httpx.AsyncClient, token: str, vin: str) -> httpx.Response:
    return await client.get(f"/v1/vehicle-data/autoapi-13/{vin}", headers=bearer(token))


async def run_worker(app: FastAPI, clock: FrozenClock) -> int:
    state = state_of(app)
    return await process_due(state.database, registry_of(state), clock=clock)


# ------------------------------------------- 1. clearances are decided, never automatic


async def test_a_push_fed_brand_is_not_cleared_for_an_unrelated_application(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """The audit's attack: an application with brand `bmw` cleared a BMW it had no
    relation to and read its location, because push-only clearances were approved at
    once. Now the worker approves nothing; the VIN stays unreadable."""
    await store(state_of(app).database, BMW_VIN, "bmw", clock.now_us())
    await provider(app, ["bmw"])  # a feed exists, and has not decided anything
    attacker = await application(app, ["bmw"])
    token = await client_credentials_token(client, attacker)
    assert (await clear(client, token, BMW_VIN, "bmw"))["status"] == "pending"
    for _ in range(3):
        await run_worker(app, clock)
        clock.advance(61)
        token = await client_credentials_token(client, attacker)
    assert await status_of(client, token, BMW_VIN) == "pending"
    denied = await pull(client, token, BMW_VIN)
    assert denied.status_code == 403
    assert "latitude" not in denied.text


async def test_only_the_brands_provider_or_the_operator_decides(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    db = state_of(app).database
    await store(db, BMW_VIN, "bmw", clock.now_us())
    fleet = await application(app, ["bmw"])
    token = await client_credentials_token(client, fleet)
    await clear(client, token, BMW_VIN, "bmw")
    bmw_feed = await provider(app, ["bmw"])
    ford_feed = await provider(app, ["ford"])
    sandbox_feed = await provider(app, ["bmw"], environment=Environment.sandbox)
    approve = f"/v1/ingest/clearances/{fleet.app_id}/{BMW_VIN}/approve"

    # Nobody else: no secret, the application's own token, another environment's provider,
    # the provider of another brand (not even told the clearance exists), no admin token.
    for headers, status in (
        ({}, 401),
        (bearer(token), 401),
        (bearer(sandbox_feed), 401),
        (bearer(ford_feed), 404),
    ):
        response = await client.post(approve, headers=headers)
        assert response.status_code == status, (headers, response.text)
    ford_list = await client.get("/v1/ingest/clearances", headers=bearer(ford_feed))
    assert ford_list.json()["clearances"] == []
    admin_path = f"/admin/v1/fleet/clearances/{fleet.app_id}/{BMW_VIN}/approve"
    assert (await client.post(admin_path, headers=bearer(token))).status_code == 401
    assert (await client.get("/admin/v1/fleet/clearances")).status_code == 401
    assert await status_of(client, token, BMW_VIN) == "pending"
    assert (await pull(client, token, BMW_VIN)).status_code == 403

    # The BMW feed sees the request and approves it: through the state machine.
    listed = await client.get("/v1/ingest/clearances", headers=bearer(bmw_feed))
    assert listed.status_code == 200, listed.text
    assert [(c["application_id"], c["vin"]) for c in listed.json()["clearances"]] == [
        (fleet.app_id, BMW_VIN)
    ]
    approved = await client.post(approve, headers=bearer(bmw_feed))
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "approved"
    again = await client.post(approve, headers=bearer(bmw_feed))
    assert again.status_code == 409
    read = await pull(client, token, BMW_VIN)
    assert read.status_code == 200, read.text
    events = await db.fetch_all(
        "SELECT payload FROM outbox WHERE event_type = 'fleet_clearance_changed' "
        "AND consumer = 'webhooks' AND vin = :vin ORDER BY id",
        {"vin": BMW_VIN},
    )
    assert [orjson.loads(e["payload"])["action"] for e in events] == ["pending", "approved"]


async def test_the_operator_rejects_with_a_reason(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    fleet = await application(app, ["bmw"])
    token = await client_credentials_token(client, fleet)
    await clear(client, token, BMW_VIN, "bmw")
    listed = await client.get("/admin/v1/fleet/clearances?brand=bmw", headers=ADMIN)
    assert [c["vin"] for c in listed.json()["clearances"]] == [BMW_VIN]
    rejected = await client.post(
        f"/admin/v1/fleet/clearances/{fleet.app_id}/{BMW_VIN}/reject",
        json={"reason": "no fleet contract for this vehicle"},
        headers=ADMIN,
    )
    assert rejected.status_code == 200, rejected.text
    body = (await client.get(f"/v1/fleets/vehicles/{BMW_VIN}", headers=bearer(token))).json()
    assert body["status"] == "rejected"
    assert body["changelog"][-1]["reason"] == "no fleet contract for this vehicle"
    bad = await client.post(
        f"/admin/v1/fleet/clearances/{fleet.app_id}/{BMW_VIN}/approve",
        json={"reason": 7},
        headers=ADMIN,
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["source"] == "reason"


async def test_the_sandbox_carmaker_is_not_overruled(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """The emulated carmaker decides sandbox clearances; nobody approves them by hand."""
    fleet = await application(app, ["sandbox"], environment=Environment.sandbox)
    token = await client_credentials_token(client, fleet)
    response = await client.post(
        "/sandbox/v1/fleets/vehicles",
        json={"vehicles": [{"vin": UNMARKED_VIN, "brand": "sandbox"}]},
        headers=bearer(token),
    )
    assert response.json()["vehicles"][0]["status"] == "pending"
    forced = await client.post(
        f"/sandbox/admin/v1/fleet/clearances/{fleet.app_id}/{UNMARKED_VIN}/approve",
        headers=ADMIN,
    )
    assert forced.status_code == 409


async def test_auto_approval_is_off_unless_the_provider_turns_it_on(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    await provider(app, ["bmw"])  # default: no standing approval
    fleet = await application(app, ["bmw", "mini"])
    token = await client_credentials_token(client, fleet)
    await clear(client, token, BMW_VIN, "bmw")
    await run_worker(app, clock)
    assert await status_of(client, token, BMW_VIN) == "pending"
    # A single-tenant deployment's explicit, dangerous setting: the MINI feed approves
    # every MINI request; BMW requests still wait.
    await provider(app, ["mini"], auto_approve=True)
    await clear(client, token, UNMARKED_VIN, "mini")
    await run_worker(app, clock)
    assert await status_of(client, token, UNMARKED_VIN) == "approved"
    assert await status_of(client, token, BMW_VIN) == "pending"


# ------------------------------------------------- 2. a brand never serves another's data


async def test_a_vin_is_not_cleared_or_checked_under_a_brand_its_maker_code_contradicts(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """The audit's attack: an application activated only for `ford` cleared a BMW VIN as
    `ford`. The VIN's manufacturer code (WBA: BMW) refuses it at request time."""
    ford = await application(app, ["ford"])
    token = await client_credentials_token(client, ford)
    answer = await clear(client, token, BMW_VIN, "ford")
    assert answer["status"] == "error"
    assert "manufacturer code WBA" in answer["description"]
    assert (
        await client.get(f"/v1/fleets/vehicles/{BMW_VIN}", headers=bearer(token))
    ).status_code == 404
    eligibility = await client.post(
        "/v1/eligibility", json={"vin": BMW_VIN, "brand": "ford"}, headers=bearer(token)
    )
    assert eligibility.status_code == 422
    assert eligibility.json()["errors"][0]["source"] == "brand"
    # A brand the application is not activated for is refused as well.
    other = await clear(client, token, UNMARKED_VIN, "bmw")
    assert other["status"] == "error" and "not activated" in other["description"]


async def test_consent_for_one_brand_refuses_another_makers_vin(
    app: FastAPI, clock: FrozenClock
) -> None:
    """An owner (or an attacker posing as one) consenting for `ford` types a BMW VIN: the
    page refuses it before any ownership check, naming the VIN."""
    ford = await application(app, ["ford"])
    params = {
        "client_id": ford.client_id,
        "redirect_uri": ford.redirect_uri,
        "app_id": ford.app_id,
        "state": "s",
        "brand": "ford",
        "code_challenge": pkce_pair()[1],
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
    ) as browser:
        assert (await browser.get("/oauth/new", params=params)).status_code == 303
        page = await browser.get("/oauth/consent/vehicle")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert csrf is not None
        answer = await browser.post(
            "/oauth/consent/vehicle", data={"csrf_token": csrf.group(1), "vin": BMW_VIN}
        )
        assert answer.status_code == 422
        assert "another carmaker (bmw, mini)" in answer.text
    stored = await state_of(app).database.fetch_value("SELECT vin FROM consent_sessions")
    assert stored is None


async def test_a_clearance_for_one_brand_never_reads_data_stored_for_another(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """A VIN whose code names no maker, cleared as `ford` by the Ford feed: the data a
    BMW feed stored for it is not the Ford clearance's to read (pull, history, streams)."""
    state = state_of(app)
    await store(state.database, UNMARKED_VIN, "bmw", clock.now_us())
    ford = await application(app, ["ford"])
    token = await client_credentials_token(client, ford)
    await clear(client, token, UNMARKED_VIN, "ford")
    ford_feed = await provider(app, ["ford"])
    decided = await client.post(
        f"/v1/ingest/clearances/{ford.app_id}/{UNMARKED_VIN}/approve", headers=bearer(ford_feed)
    )
    assert decided.status_code == 200
    denied = await pull(client, token, UNMARKED_VIN)
    assert denied.status_code == 403
    assert "bmw" in denied.json()["errors"][0]["detail"]
    history = await client.get(
        f"/v1/vehicle-data/autoapi-13/{UNMARKED_VIN}/history",
        params={"property": "vehicle_location.coordinates"},
        headers=bearer(token),
    )
    assert history.status_code == 403
    assert "bmw" in history.json()["errors"][0]["detail"]
    # New BMW data reaches no stream of the Ford application.
    clock.advance(1)
    await store(state.database, UNMARKED_VIN, "bmw", clock.now_us())
    await StreamBuilder(state).run_once()
    streamed = await state.database.fetch_value(
        "SELECT COUNT(*) FROM stream_messages WHERE application_id = :app", {"app": ford.app_id}
    )
    assert streamed == 0


async def test_a_consent_grant_for_one_brand_never_reads_another_brands_data(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    state = state_of(app)
    await store(state.database, UNMARKED_VIN, "bmw", clock.now_us())
    ford = await application(app, ["ford"])
    issued = await vehicle_token(
        client, state.database, ford, vin=UNMARKED_VIN, brand="ford", now_us=clock.now_us()
    )
    response = await pull(client, issued.access_token, UNMARKED_VIN)
    assert response.status_code == 403
    assert "latitude" not in response.text


async def test_a_brand_no_longer_activated_reads_nothing(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    await store(state_of(app).database, BMW_VIN, "bmw", clock.now_us())
    fleet = await application(app, ["bmw", "ford"])
    token = await client_credentials_token(client, fleet)
    await clear(client, token, BMW_VIN, "bmw")
    await client.post(f"/admin/v1/fleet/clearances/{fleet.app_id}/{BMW_VIN}/approve", headers=ADMIN)
    assert (await pull(client, token, BMW_VIN)).status_code == 200
    patched = await client.patch(
        f"/admin/v1/applications/{fleet.app_id}", json={"brands": ["ford"]}, headers=ADMIN
    )
    assert patched.status_code == 200, patched.text
    token = await client_credentials_token(client, fleet)
    denied = await pull(client, token, BMW_VIN)
    assert denied.status_code == 403
    assert "no longer activated" in denied.json()["errors"][0]["detail"]


async def test_a_provider_pushes_only_for_its_brands(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """Stored data's brand is what grants are matched against: a feed may not label
    data with a brand it does not speak for."""
    ford_feed = await provider(app, ["ford"])
    body = {
        "vin": UNMARKED_VIN,
        "brand": "bmw",
        "charging": {"battery_level": {"data": 0.4, "timestamp": to_iso(clock.now_us())}},
    }
    response = await client.post("/v1/ingest", json=body, headers=bearer(ford_feed))
    assert response.status_code == 422
    assert response.json()["vehicles"][0]["rejected"][0]["source"] == "brand"
    unlabelled = await client.post(
        "/v1/ingest",
        json={k: v for k, v in body.items() if k != "brand"},
        headers=bearer(ford_feed),
    )
    assert unlabelled.status_code == 200, unlabelled.text
    assert unlabelled.json()["vehicles"][0]["brand"] == "ford"


# ---------------------------------------- 3. the sandbox brand exists only in the sandbox


async def test_a_production_application_cannot_activate_the_sandbox_brand(
    client: httpx.AsyncClient,
) -> None:
    base = {"name": "Sneaky", "redirect_uris": ["https://app.example.com/cb"]}
    created = await client.post(
        "/admin/v1/applications", json={**base, "brands": ["bmw", "sandbox"]}, headers=ADMIN
    )
    assert created.status_code == 422
    assert created.json()["errors"][0]["source"] == "brands[1]"
    ok = await client.post(
        "/admin/v1/applications", json={**base, "brands": ["bmw"]}, headers=ADMIN
    )
    patched = await client.patch(
        f"/admin/v1/applications/{ok.json()['app_id']}", json={"brands": ["sandbox"]}, headers=ADMIN
    )
    assert patched.status_code == 422
    assert patched.json()["errors"][0]["source"] == "brands[0]"
    sandbox = await client.post(
        "/sandbox/admin/v1/applications", json={**base, "brands": ["sandbox"]}, headers=ADMIN
    )
    assert sandbox.status_code == 201


async def legacy_sandbox_app(app: FastAPI) -> AppCredentials:
    """A production application stored before the rule, holding the sandbox brand."""
    creds = await application(app, ["bmw"])
    await state_of(app).database.execute(
        "UPDATE applications SET brands = :brands WHERE id = :id",
        {"brands": '["sandbox", "bmw"]', "id": creds.app_id},
    )
    return creds


async def test_production_consent_never_reaches_the_instant_method(
    app: FastAPI, clock: FrozenClock
) -> None:
    """The audit's attack: a production application activated `sandbox` and got an
    owner's consent for a real BMW with no proof (`instant`)."""
    creds = await legacy_sandbox_app(app)
    params = {
        "client_id": creds.client_id,
        "redirect_uri": creds.redirect_uri,
        "app_id": creds.app_id,
        "state": "s",
        "vin": BMW_VIN,
        "code_challenge": pkce_pair()[1],
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", follow_redirects=False
    ) as browser:
        entry = await browser.get("/oauth/new", params={**params, "brand": "sandbox"})
        assert entry.status_code in (302, 303)
        assert "error=invalid_request" in entry.headers["location"]
        # Through the brand page instead: the sandbox brand is not offered or accepted.
        started = await browser.get("/oauth/new", params=params)
        assert started.status_code == 303
        page = await browser.get("/oauth/consent/brand")
        assert 'value="sandbox"' not in page.text
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert csrf is not None
        chosen = await browser.post(
            "/oauth/consent/brand", data={"csrf_token": csrf.group(1), "brand": "sandbox"}
        )
        assert chosen.status_code == 422
    approved = await state_of(app).database.fetch_value(
        "SELECT COUNT(*) FROM consent_sessions WHERE verified_at IS NOT NULL"
    )
    assert approved == 0


async def test_production_fleet_and_eligibility_never_reach_the_sandbox_connector(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    creds = await legacy_sandbox_app(app)
    token = await client_credentials_token(client, creds)
    answer = await clear(client, token, BMW_VIN, "sandbox")
    assert answer["status"] == "error"
    assert "only in the sandbox environment" in answer["description"]
    clock.advance(10)  # the emulated carmaker's delay, had it been asked
    await run_worker(app, clock)
    assert (await pull(client, token, BMW_VIN)).status_code == 403
    eligibility = await client.post(
        "/v1/eligibility", json={"vin": BMW_VIN, "brand": "sandbox"}, headers=bearer(token)
    )
    assert eligibility.status_code == 422
    assert eligibility.json()["errors"][0]["source"] == "brand"


class _RecordingSource:
    """A production carmaker's data source that records who asked it."""

    def __init__(self) -> None:
        self.asked: list[tuple[Environment, str]] = []

    async def fetch(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> None:
        self.asked.append((environment, vin))


async def test_a_sandbox_pull_never_asks_a_production_carmaker(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """The other direction: a sandbox grant for `bmw` (the sandbox emulates every brand)
    never makes the pull ask the production BMW connector about a real VIN."""
    bmw = _RecordingSource()
    registry_of(state_of(app)).data_sources["bmw"] = bmw
    sandboxed = await application(app, ["bmw"], environment=Environment.sandbox)
    issued = await vehicle_token(
        client, state_of(app).database, sandboxed, vin=BMW_VIN, brand="bmw", now_us=clock.now_us()
    )
    response = await client.get(
        f"/sandbox/v1/vehicle-data/autoapi-13/{BMW_VIN}", headers=bearer(issued.access_token)
    )
    assert response.status_code == 422  # nothing known of it in the sandbox
    assert bmw.asked == []


async def test_a_sandbox_grant_stored_in_production_reads_nothing(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """Grants an `instant` consent gave before the fix: they read no data (not even data
    stored without a brand) and never make the pull ask the emulated carmaker."""
    state = state_of(app)
    report = await ingest_vehicle_data(
        state.database,
        environment=PROD,
        vin=BMW_VIN,
        brand=None,  # stored as `unknown`
        data={"charging": {"battery_level": {"data": 0.5, "timestamp": to_iso(clock.now_us())}}},
        now_us=clock.now_us(),
    )
    assert report.brand == "unknown"
    creds = await legacy_sandbox_app(app)
    for vin in (BMW_VIN, UNMARKED_VIN):  # data stored (as unknown), and none at all
        issued = await vehicle_token(
            client, state.database, creds, vin=vin, brand="sandbox", now_us=clock.now_us()
        )
        response = await pull(client, issued.access_token, vin)
        assert response.status_code == 403, response.text
        assert "only in the sandbox environment" in response.json()["errors"][0]["detail"]
    clock.advance(1)
    await store(state.database, BMW_VIN, None, clock.now_us())  # still `unknown`
    await StreamBuilder(state).run_once()
    streamed = await state.database.fetch_value(
        "SELECT COUNT(*) FROM stream_messages WHERE application_id = :app", {"app": creds.app_id}
    )
    assert streamed == 0


async def test_a_sandbox_clearance_requested_in_production_is_ended_not_asked(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """A pending request stored before the rule is rejected by the worker, never handed
    to the emulated carmaker (which would have approved it after 3 s)."""
    from autoport.fleet import repository
    from autoport.fleet.repository import VehicleKey

    creds = await legacy_sandbox_app(app)
    state = state_of(app)
    async with state.database.transaction() as conn:
        await repository.create_pending(
            conn,
            VehicleKey(PROD, creds.app_id, BMW_VIN),
            brand="sandbox",
            tags={},
            changelog=[],
            now_us=clock.now_us(),
        )
    clock.advance(10)
    assert await run_worker(app, clock) == 1
    token = await client_credentials_token(client, creds)
    body = (await client.get(f"/v1/fleets/vehicles/{BMW_VIN}", headers=bearer(token))).json()
    assert body["status"] == "rejected"
    assert "only in the sandbox environment" in body["changelog"][-1]["reason"]


async def test_production_data_is_never_labelled_sandbox(app: FastAPI, clock: FrozenClock) -> None:
    with pytest.raises(IngestError) as refused:
        await store(state_of(app).database, BMW_VIN, "sandbox", clock.now_us())
    assert refused.value.source == "brand"


@pytest.mark.parametrize("connectors", [{"bmw": "sandbox"}, {"sandbox": "push"}])
def test_start_up_refuses_the_sandbox_connector_or_brand_in_production(
    sqlite_settings: Settings, connectors: dict[str, str]
) -> None:
    settings = sqlite_settings.model_copy(update={"brand_connectors": connectors})
    with pytest.raises(ConnectorConfigError, match="only in the sandbox environment"):
        BrandRegistry.from_settings(settings)
