"""The merged service as an operator runs it: one real `autoport serve` process, the CLI
beside it, a real webhook receiver on loopback, and the application written on top of
the client library (`autoport_client`, clients/python). One fleet vehicle goes through
every feature on its way: application and token (oauth), eligibility and clearance
(fleet, sandbox connector, background worker), signed webhooks (outbox, delivery worker,
verified with the client's `verify`), data pushed by a provider (ingestion) and read back
typed (pull, history), then removed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from autoport_client import AsyncClient, NewFleetVehicle, PermissionDenied, ValidationError
from autoport_client.webhooks import verify
from tests.helpers.ports import free_port
from tests.helpers.servers import wait_until_up

VIN = "SBXE2E00000000001"
ADMIN = "e2e-admin-token-0123456789abcdef"


@dataclass
class Server:
    root: str
    env: dict[str, str]

    @property
    def base(self) -> str:
        return f"{self.root}/sandbox"

    def cli(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "autoport", *args, "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    port = free_port()
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(tmp_path / "data"),
        "AUTOPORT_PORT": str(port),
        "AUTOPORT_ADMIN_TOKEN": ADMIN,
        "AUTOPORT_LOG_FORMAT": "json",
        "AUTOPORT_SANDBOX_DEMO": "false",
        "AUTOPORT_WEBHOOK_ALLOW_LOOPBACK": "true",
        "AUTOPORT_SANDBOX_CONNECTOR_CLEARANCE_DELAY_SECONDS": "0.3",
        "AUTOPORT_SANDBOX_CONNECTOR_REMOVAL_DELAY_SECONDS": "0.3",
        "AUTOPORT_FLEET_WORKER_INTERVAL_SECONDS": "0.1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/readyz", process)
        yield Server(root=f"http://127.0.0.1:{port}", env=env)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)


@dataclass
class Receiver:
    url: str
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    async def deliveries(
        self, count: int, timeout: float = 20.0
    ) -> list[tuple[dict[str, str], bytes]]:
        """The first `count` deliveries (headers, raw body), waiting for them to arrive."""
        for _ in range(int(timeout / 0.05)):
            if len(self.received) >= count:
                return self.received
            await asyncio.sleep(0.05)
        raise AssertionError(f"expected {count} deliveries, got {self.received}")


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    port = free_port()
    hook = Receiver(url=f"http://127.0.0.1:{port}/hook")

    async def handle(request: web.Request) -> web.Response:
        hook.received.append((dict(request.headers), await request.read()))
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield hook
    finally:
        await runner.cleanup()


async def test_a_fleet_vehicle_through_every_feature(server: Server, receiver: Receiver) -> None:
    application = server.cli(
        "apps", "create", "--name", "Fleet e2e", "--environment", "sandbox",
        "--brand", "sandbox", "--property", "charging.battery_level",
        "--property", "vehicle_location.coordinates",
    )  # fmt: skip
    app_id, client_id = application["app_id"], application["client_id"]
    secret = application["client_secret"]
    provider = server.cli("providers", "create", "--name", "e2e feed", "--environment", "sandbox")

    # The operator's side (admin API) and the data provider's (ingest) are not the
    # application's: plain HTTP. Everything the application does goes through its client.
    async with httpx.AsyncClient(base_url=server.base, timeout=10) as operator:
        saved = await operator.put(
            f"/admin/v1/applications/{app_id}/webhook",
            headers={"Authorization": f"Bearer {ADMIN}"},
            json={"url": receiver.url},
        )
        assert saved.status_code == 201, saved.text  # created
        assert saved.json()["ping"]["status"] == "succeeded"
        hook_secret = saved.json()["webhook"]["secret"]

    async with AsyncClient(server.root, client_id, secret, environment="sandbox") as client:
        assert (await client.check_eligibility(VIN, "sandbox")).eligible is True

        # Not cleared yet: the application may not read the vehicle.
        with pytest.raises(PermissionDenied):
            await client.get_vehicle_data(VIN)

        [added] = await client.add_fleet_vehicles([NewFleetVehicle(VIN, "sandbox")])
        assert added.status == "pending"
        approved = await client.wait_for_fleet_status(VIN, "approved", timeout=10, interval=0.05)
        assert [entry.status for entry in approved.changelog] == ["pending", "approved"]

        # Cleared, but nothing known yet: 422 "pending" rather than 403.
        with pytest.raises(ValidationError):
            await client.get_vehicle_data(VIN)

        async with httpx.AsyncClient(base_url=server.base, timeout=10) as feed:
            pushed = await feed.post(
                "/v1/ingest",
                headers={"Authorization": f"Bearer {provider['secret']}"},
                json={
                    "vin": VIN,
                    "brand": "sandbox",
                    "charging": {
                        "battery_level": {"data": 0.61, "timestamp": "2026-11-23T10:00:00Z"},
                        "estimated_range": {
                            "data": {"unit": "kilometers", "value": 240},
                            "timestamp": "2026-11-23T10:00:00Z",
                        },
                    },
                },
            )
            assert pushed.status_code == 200, pushed.text

        data = await client.get_vehicle_data(VIN)
        assert data.brand == "sandbox"
        assert data.charging.battery_level.value == 0.61
        # Only what the application registered for: estimated_range stays hidden.
        assert not data.charging.estimated_range.present
        assert data.raw["charging"] == {
            "battery_level": {"data": 0.61, "timestamp": "2026-11-23T10:00:00.000000Z"}
        }
        history = [p async for p in client.history(VIN, "charging.battery_level")]
        assert [point.data for point in history] == [0.61]

        removed = await client.remove_fleet_vehicle(VIN)
        assert removed.status == "revoking"
        await client.wait_for_fleet_status(VIN, "revoked", timeout=10, interval=0.05)
        with pytest.raises(PermissionDenied):
            await client.get_vehicle_data(VIN)

    events = [verify(hook_secret, body, headers) for headers, body in await receiver.deliveries(5)]
    assert [(e.type, e.vin, e.action) for e in events if e.type != "ping"] == [
        ("fleet_clearance_changed", VIN, "pending"),
        ("fleet_clearance_changed", VIN, "approved"),
        ("fleet_clearance_changed", VIN, "revoking"),
        ("fleet_clearance_changed", VIN, "revoked"),
    ]
    assert {e.application_id for e in events} == {app_id}
    assert len({e.delivery_id for e in events}) == len(events)
    for headers, _ in receiver.received:
        assert headers["User-Agent"] == "Svc-Webhook/1.2.0"
