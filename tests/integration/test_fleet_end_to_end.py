"""The merged service as an operator runs it: one real `autoport serve` process, the CLI
beside it, a real webhook receiver on loopback. One fleet vehicle goes through every
feature on its way: application and token (oauth), eligibility and clearance (fleet,
sandbox connector, background worker), signed webhooks (outbox, delivery worker), data
pushed by a provider (ingestion) and read back (pull, history), then removed."""

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

from autoport.webhooks import verify
from tests.cli.test_serve import free_port, wait_until_up

VIN = "SBXE2E00000000001"
ADMIN = "e2e-admin-token-0123456789abcdef"


@dataclass
class Server:
    base: str
    env: dict[str, str]

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
        yield Server(base=f"http://127.0.0.1:{port}/sandbox", env=env)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)


@dataclass
class Receiver:
    url: str
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    async def events(self, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The first `count` non-ping deliveries, waiting for them to arrive."""
        for _ in range(int(timeout / 0.05)):
            found = [json.loads(body) for _, body in self.received]
            found = [event for event in found if event["event"]["type"] != "ping"]
            if len(found) >= count:
                return found
            await asyncio.sleep(0.05)
        raise AssertionError(f"expected {count} events, got {self.received}")


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


async def wait_for_status(client: httpx.AsyncClient, status: str) -> dict[str, Any]:
    for _ in range(200):
        vehicle = (await client.get(f"/v1/fleets/vehicles/{VIN}")).json()
        if vehicle["status"] == status:
            return vehicle  # type: ignore[no-any-return]
        await asyncio.sleep(0.05)
    raise AssertionError(f"{VIN} never became {status}: {vehicle}")


async def test_a_fleet_vehicle_through_every_feature(server: Server, receiver: Receiver) -> None:
    application = server.cli(
        "apps", "create", "--name", "Fleet e2e", "--environment", "sandbox",
        "--brand", "sandbox", "--property", "charging.battery_level",
        "--property", "vehicle_location.coordinates",
    )  # fmt: skip
    app_id, client_id = application["app_id"], application["client_id"]
    secret = application["client_secret"]
    provider = server.cli("providers", "create", "--name", "e2e feed", "--environment", "sandbox")

    async with httpx.AsyncClient(base_url=server.base, timeout=10) as anonymous:
        saved = await anonymous.put(
            f"/admin/v1/applications/{app_id}/webhook",
            headers={"Authorization": f"Bearer {ADMIN}"},
            json={"url": receiver.url},
        )
        assert saved.status_code == 201, saved.text  # created
        assert saved.json()["ping"]["status"] == "succeeded"
        hook_secret = saved.json()["webhook"]["secret"]

        token = await anonymous.post(
            "/v1/access_tokens",
            data={"grant_type": "client_credentials"},
            auth=(client_id, secret),
        )
        assert token.status_code == 200, token.text
        bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}

    async with httpx.AsyncClient(base_url=server.base, headers=bearer, timeout=10) as client:
        eligibility = await client.post("/v1/eligibility", json={"vin": VIN, "brand": "sandbox"})
        assert eligibility.json()["eligible"] is True

        # Not cleared yet: the application may not read the vehicle.
        assert (await client.get(f"/v1/vehicle-data/autoapi-13/{VIN}")).status_code == 403

        added = await client.post(
            "/v1/fleets/vehicles", json={"vehicles": [{"vin": VIN, "brand": "sandbox"}]}
        )
        assert added.json()["vehicles"][0]["status"] == "pending"
        approved = await wait_for_status(client, "approved")
        assert [entry["status"] for entry in approved["changelog"]] == ["pending", "approved"]

        # Cleared, but nothing known yet: 422 "pending" rather than 403.
        assert (await client.get(f"/v1/vehicle-data/autoapi-13/{VIN}")).status_code == 422

        pushed = await client.post(
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

        data = (await client.get(f"/v1/vehicle-data/autoapi-13/{VIN}")).json()
        assert data["brand"] == "sandbox"
        # Only what the application registered for: estimated_range stays hidden.
        assert data["charging"] == {
            "battery_level": {"data": 0.61, "timestamp": "2026-11-23T10:00:00.000000Z"}
        }
        history = await client.get(
            f"/v1/vehicle-data/autoapi-13/{VIN}/history",
            params={"property": "charging.battery_level"},
        )
        assert [point["data"] for point in history.json()["values"]] == [0.61]

        removed = await client.delete(f"/v1/fleets/vehicles/{VIN}")
        assert removed.status_code in (200, 202), removed.text
        await wait_for_status(client, "revoked")
        assert (await client.get(f"/v1/vehicle-data/autoapi-13/{VIN}")).status_code == 403

    events = await receiver.events(4)
    assert [(e["vehicle"]["vin"], e["event"]["action"]) for e in events] == [
        (VIN, "pending"),
        (VIN, "approved"),
        (VIN, "revoking"),
        (VIN, "revoked"),
    ]
    assert {e["application"]["id"] for e in events} == {app_id}
    for headers, body in receiver.received:
        assert verify(hook_secret, body, headers["X-Svc-Signature-256"])
        assert headers["User-Agent"] == "Svc-Webhook/1.2.0"
