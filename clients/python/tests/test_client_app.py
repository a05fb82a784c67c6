"""Application calls (client_credentials) of `Client` and `AsyncClient` against a real
`autoport serve`: the token cache, pull, history pages, eligibility, fleet clearance
(add, list with paging and filters, get, remove) and typed errors."""

from __future__ import annotations

import ast
import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import LiveServer, new_vin

from autoport_client import (
    AsyncClient,
    AuthenticationError,
    Client,
    NewFleetVehicle,
    NotFound,
    OAuthError,
    PermissionDenied,
    PrivacyMode,
    ValidationError,
    VehicleOffline,
    _core,
)
from autoport_client.models import Quantity


def test_app_token_is_cached_and_renewed(client: Client) -> None:
    first = client.app_token()
    assert client.app_token() == first  # cached
    client._app_token = type(client._app_token)(first, expires_at=0)  # type: ignore[misc,call-arg]
    assert client.app_token() != first  # renewed once it (nearly) expired


def test_wrong_secret_is_a_typed_oauth_error(server: LiveServer) -> None:
    assert server.demo is not None
    bad = Client(server.root, server.demo.client_id, "ap_cs_wrong", environment="sandbox")
    with bad, pytest.raises(OAuthError) as caught:
        bad.app_token()
    assert caught.value.status == 401
    assert caught.value.error == "invalid_client"
    assert caught.value.error_description


def test_pull_is_typed(client: Client, server: LiveServer) -> None:
    assert server.demo is not None
    vin = server.demo.vins["driving"]
    data = client.get_vehicle_data(vin)
    assert data.vin == vin and data.brand == "sandbox" and data.request_id
    level = data.charging.battery_level.value
    assert isinstance(level, float) and 0 <= level <= 1
    assert data.charging.battery_level.timestamp is not None
    odometer = data.diagnostics.odometer.value
    assert isinstance(odometer, Quantity) and odometer.unit == "kilometers"
    assert data.vehicle_location.coordinates.value is not None
    # A property the answer does not hold is an empty Value, not an AttributeError.
    assert not data.crash.type.present and data.crash.type.value is None
    assert data.raw["vin"] == vin


def test_history_iterates_over_pages(client: Client, server: LiveServer) -> None:
    assert server.demo is not None
    vin = server.demo.vins["driving"]
    # The demo car's odometer gains a point about every second.
    for _ in range(100):
        if len(list(client.history(vin, "diagnostics.odometer", page_size=1000))) >= 5:
            break
        time.sleep(0.2)
    points = []
    for point in client.history(vin, "diagnostics.odometer", page_size=2):
        points.append(point)
        if len(points) == 5:
            break
    assert len(points) == 5  # three pages of two
    stamps = [point.timestamp for point in points]
    assert stamps == sorted(stamps, reverse=True)  # newest first
    assert points[0].data["unit"] == "kilometers"
    recent = datetime.now(UTC) - timedelta(hours=1)
    assert next(iter(client.history(vin, "diagnostics.odometer", since=recent))).data
    assert list(client.history(vin, "diagnostics.odometer", until=recent - timedelta(days=1))) == []


def test_eligibility_and_its_errors(client: Client) -> None:
    vin = new_vin()
    answer = client.check_eligibility(vin, "sandbox")
    assert answer.vin == vin and answer.eligible is True
    assert set(answer.data_delivery) <= {"pull", "push"}
    with pytest.raises(ValidationError) as caught:
        client.check_eligibility("WBA123", "sandbox")
    assert caught.value.status == 422
    assert caught.value.source == "vin"
    assert caught.value.request_id


def test_fleet_clearance_sync(client: Client) -> None:
    first, second = new_vin(), new_vin()
    added = client.add_fleet_vehicles(
        [
            NewFleetVehicle(first, "sandbox", tags={"depot": "north"}),
            NewFleetVehicle(second, "sandbox"),
            NewFleetVehicle("BAD", "sandbox"),
        ]
    )
    assert [item.status for item in added] == ["pending", "pending", "error"]
    assert added[2].description
    approved = client.wait_for_fleet_status(first, "approved", timeout=20, interval=0.1)
    assert [entry.status for entry in approved.changelog] == ["pending", "approved"]
    assert approved.tags == {"depot": "north"} and approved.brand == "sandbox"
    client.wait_for_fleet_status(second, "approved", timeout=20, interval=0.1)

    everything = list(client.list_fleet_vehicles(page_size=2))  # 3 demo vehicles and more
    vins = [vehicle.vin for vehicle in everything]
    assert {first, second} <= set(vins) and len(vins) == len(set(vins)) >= 5
    assert vins == sorted(vins)
    north = list(client.list_fleet_vehicles(tags={"depot": "north"}, status="approved"))
    assert [vehicle.vin for vehicle in north] == [first]
    both = list(client.list_fleet_vehicles(vin=[first, second], page_size=1))
    assert sorted(vehicle.vin for vehicle in both) == sorted([first, second])
    documented = list(
        client.list_fleet_vehicles(filter={"vin": {"operator": "eq", "value": second}})
    )
    assert [vehicle.vin for vehicle in documented] == [second]

    assert client.get_fleet_vehicle(first).status == "approved"
    assert client.remove_fleet_vehicle(first).status == "revoking"
    assert client.wait_for_fleet_status(first, "revoked", timeout=20, interval=0.1)
    with pytest.raises(NotFound) as caught:
        client.get_fleet_vehicle(new_vin())
    assert caught.value.request_id


async def test_fleet_clearance_and_reads_async(server: LiveServer) -> None:
    assert server.demo is not None
    demo = server.demo
    async with AsyncClient(
        server.root, demo.client_id, demo.client_secret, environment="sandbox"
    ) as client:
        token = await client.app_token()
        assert await client.app_token() == token
        data = await client.get_vehicle_data(demo.vins["charging"])
        assert isinstance(data.charging.battery_level.value, float)
        # The demo car's odometer gains a point about every second: wait for a second one
        # (this test may be the first to run against a freshly started server).
        points: list[object] = []
        for _ in range(100):
            points = [
                p
                async for p in client.history(
                    demo.vins["driving"], "diagnostics.odometer", page_size=1
                )
            ]
            if len(points) >= 2:
                break
            await asyncio.sleep(0.2)
        assert len(points) >= 2
        vin = new_vin()
        assert (await client.check_eligibility(vin, "sandbox")).eligible
        [added] = await client.add_fleet_vehicles([NewFleetVehicle(vin, "sandbox", {"k": "v"})])
        assert added.status == "pending"
        # Removing a pending one cancels it.
        assert (await client.remove_fleet_vehicle(vin)).status == "canceling"
        await client.wait_for_fleet_status(vin, "canceled", timeout=20, interval=0.1)
        listed = [v async for v in client.list_fleet_vehicles(status="canceled", page_size=1)]
        assert vin in [v.vin for v in listed]
        assert (await client.get_fleet_vehicle(vin)).tags == {"k": "v"}
        with pytest.raises(PermissionDenied):
            await client.get_vehicle_data(vin)  # not cleared
        with pytest.raises(NotFound):
            await client.get_fleet_vehicle(new_vin())


async def test_a_revoked_app_token_is_replaced(server: LiveServer) -> None:
    assert server.demo is not None
    async with AsyncClient(
        server.root, server.demo.client_id, server.demo.client_secret, environment="sandbox"
    ) as client:
        token = await client.app_token()
        await client.revoke(token)
        # The cached token now answers 401; the client fetches a new one, once.
        data = await client.get_vehicle_data(server.demo.vins["parked"])
        assert data.vin == server.demo.vins["parked"]
        assert await client.app_token() != token


def test_a_revoked_app_token_is_replaced_sync(client: Client, server: LiveServer) -> None:
    assert server.demo is not None
    token = client.app_token()
    client.revoke(token)
    assert client.get_vehicle_data(server.demo.vins["parked"]).vin == server.demo.vins["parked"]
    assert client.app_token() != token


def test_an_invalid_bearer_is_a_typed_401(client: Client) -> None:
    with pytest.raises(AuthenticationError) as caught:
        client._run(_core.vehicle_data_call("SBXPSRGC89T9TK2VN", "ap_at_not-a-token"))
    assert caught.value.status == 401 and caught.value.request_id
    assert caught.value.source == "Authorization"


def test_private_key_jwt_with_the_add_key_credentials_file(
    server: LiveServer, tmp_path: Path
) -> None:
    assert server.demo is not None
    credentials = tmp_path / "credentials.json"
    server.cli(
        "apps", "add-key", server.demo.application_id, "--environment", "sandbox",
        "-o", str(credentials),
    )  # fmt: skip
    keyed = Client(
        server.root,
        server.demo.client_id,
        private_key=credentials.read_text(),
        environment="sandbox",
    )
    with keyed:
        first = keyed.app_token()
        assert keyed.get_vehicle_data(server.demo.vins["parked"]).brand == "sandbox"
        keyed._app_token = None
        assert keyed.app_token() != first  # a new assertion (new jti) buys a new token
    with pytest.raises(ValueError, match="not both"):
        Client(server.root, "x", "secret", private_key="{}")


def test_the_client_never_imports_autoport() -> None:
    source = Path(__file__).resolve().parents[1] / "src"
    for path in source.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not [n for n in names if n.split(".")[0] == "autoport"], path


def test_privacy_mode_and_offline_are_typed(client: Client, server: LiveServer) -> None:
    assert server.demo is not None
    vin = server.demo.vins["parked"]
    behaviour = f"/admin/v1/sandbox/vehicles/{vin}/behaviour"
    try:
        assert server.admin("PATCH", behaviour, json={"privacy_mode": True}).status_code == 200
        with pytest.raises(PrivacyMode) as private:
            client.get_vehicle_data(vin)
        assert private.value.status == 403 and "privacy mode" in (private.value.detail or "")
        server.admin("PATCH", behaviour, json={"privacy_mode": False, "offline": True})
        with pytest.raises(VehicleOffline) as offline:
            client.get_vehicle_data(vin)
        assert offline.value.status == 408 and offline.value.request_id
    finally:
        server.admin("PATCH", behaviour, json={"privacy_mode": False, "offline": False})
    assert client.get_vehicle_data(vin).vin == vin
