"""One process, two environments: chosen by the /sandbox prefix or by host."""

from __future__ import annotations

import httpx
import pytest

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.environments import Environment, EnvironmentRouter


def scope(path: str, host: str = "127.0.0.1:8080") -> dict[str, object]:
    return {
        "type": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "headers": [(b"host", host.encode())],
    }


def test_prefix_selects_sandbox_and_is_stripped() -> None:
    router = EnvironmentRouter.from_settings(Settings())
    request = scope("/sandbox/v1/vehicleinfo")
    assert router.route(request) is Environment.sandbox
    assert request["path"] == "/v1/vehicleinfo"
    assert request["raw_path"] == b"/v1/vehicleinfo"
    assert request["root_path"] == "/sandbox"


def test_prefix_must_be_a_whole_segment() -> None:
    router = EnvironmentRouter.from_settings(Settings())
    request = scope("/sandboxes")
    assert router.route(request) is Environment.production
    assert request["path"] == "/sandboxes"


def test_host_selects_sandbox_when_hosts_differ() -> None:
    settings = Settings(
        base_url="https://api.example.test", sandbox_base_url="https://sandbox.api.example.test"
    )
    router = EnvironmentRouter.from_settings(settings)
    assert router.route(scope("/v1/x", "sandbox.api.example.test")) is Environment.sandbox
    assert router.route(scope("/v1/x", "SANDBOX.api.example.test")) is Environment.sandbox
    assert router.route(scope("/v1/x", "api.example.test")) is Environment.production
    assert router.route(scope("/v1/x", "other.test")) is Environment.production


def test_topic_names() -> None:
    assert Environment.production.topic_name == "live"
    assert Environment.sandbox.topic_name == "sandbox"


async def test_routes_receive_the_environment(embedded_client: httpx.AsyncClient) -> None:
    production = (await embedded_client.get("/")).json()
    sandbox = (await embedded_client.get("/sandbox/")).json()
    assert production["environment"] == "production"
    assert production["base_url"] == "http://127.0.0.1:8080"
    assert sandbox["environment"] == "sandbox"
    assert sandbox["base_url"] == "http://127.0.0.1:8080/sandbox"


@pytest.mark.parametrize(
    ("host", "expected"),
    [("sandbox.api.example.test", "sandbox"), ("api.example.test", "production")],
)
async def test_host_routing_end_to_end(sqlite_settings: Settings, host: str, expected: str) -> None:
    settings = sqlite_settings.model_copy(
        update={
            "base_url": "https://api.example.test",
            "sandbox_base_url": "https://sandbox.api.example.test",
        }
    )
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"https://{host}") as client:
            assert (await client.get("/")).json()["environment"] == expected
