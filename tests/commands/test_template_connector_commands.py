"""The template connector's commands against a real HTTP server playing the carmaker, and
end to end through the API with the connector configured for a production brand."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from autoport.app import create_app
from autoport.brands.base import CommandRequest
from autoport.brands.registry import registry_of
from autoport.brands.template import TemplateConnector
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.commands.conftest import LOCK, PROD, Harness, new_vin
from tests.helpers.servers import uvicorn_in_loop

VIN = "WBA" + "00000000000042"


class Carmaker:
    def __init__(self) -> None:
        self.status = 200
        self.answer: dict[str, Any] = {"state": "executed"}
        self.delay = 0.0
        self.received: list[tuple[str, dict[str, Any], str | None]] = []

    def app(self) -> Starlette:
        async def command(request: Request) -> Response:
            body = await request.json()
            self.received.append(
                (request.path_params["vin"], body, request.headers.get("idempotency-key"))
            )
            await asyncio.sleep(self.delay)
            return JSONResponse(self.answer, status_code=self.status)

        return Starlette(routes=[Route("/vehicles/{vin}/commands", command, methods=["POST"])])


@pytest.fixture
async def carmaker() -> AsyncIterator[tuple[Carmaker, str]]:
    fake = Carmaker()
    async with uvicorn_in_loop(fake.app(), log_level="error", lifespan="off") as served:
        yield fake, served.base_url


def _request(command_id: str = "c-1") -> CommandRequest:
    return CommandRequest(
        environment=Environment.production,
        command_id=command_id,
        vin=VIN,
        brand="bmw",
        capability="doors",
        command="lock_unlock_doors",
        arguments={"locks_state": "locked"},
    )


async def test_every_answer_of_the_carmaker_maps_to_an_outcome(
    carmaker: tuple[Carmaker, str],
) -> None:
    fake, url = carmaker
    connector = TemplateConnector(name="bmw", base_url=url, timeout_seconds=0.5)
    try:
        outcome = await connector.execute_command(_request())
        assert outcome.status == "executed"
        assert fake.received == [
            (
                VIN,
                {
                    "id": "c-1",
                    "capability": "doors",
                    "command": "lock_unlock_doors",
                    "arguments": {"locks_state": "locked"},
                },
                "c-1",
            )
        ]
        fake.answer = {"state": "failed", "reason": "unauthorised", "message": "no key"}
        outcome = await connector.execute_command(_request())
        assert (outcome.status, outcome.reason, outcome.description) == (
            "failed",
            "unauthorised",
            "no key",
        )
        fake.answer = {"state": "failed", "reason": "made-up"}
        assert (await connector.execute_command(_request())).reason == "oem_error"
        fake.status, fake.answer = 409, {"error": "asleep"}
        assert (await connector.execute_command(_request())).status == "timed_out"
        fake.status, fake.answer = 403, {"error": "privacy_mode"}
        outcome = await connector.execute_command(_request())
        assert (outcome.status, outcome.reason) == ("failed", "privacy_mode_active")
        fake.status, fake.answer = 500, {"error": "boom"}
        assert (await connector.execute_command(_request())).status == "failed"
        fake.status, fake.answer, fake.delay = 200, {"state": "executed"}, 2.0
        outcome = await connector.execute_command(_request())
        assert (outcome.status, outcome.reason) == ("timed_out", "execution_timeout")
    finally:
        await connector.close()


async def test_an_unreachable_carmaker_fails_the_command() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there
    connector = TemplateConnector(name="bmw", base_url=f"http://127.0.0.1:{port}")
    try:
        outcome = await connector.execute_command(_request())
        assert (outcome.status, outcome.reason) == ("failed", "oem_error")
    finally:
        await connector.close()


async def test_through_the_api_with_the_template_connector(
    carmaker: tuple[Carmaker, str], command_settings: Settings, clock: FrozenClock
) -> None:
    fake, url = carmaker
    settings = command_settings.model_copy(
        update={
            "brand_connectors": {"bmw": "autoport.brands.template:TemplateConnector"},
            "brand_connector_options": {"bmw": {"base_url": url}},
        }
    )
    app: FastAPI = create_app(settings, clock=clock, run_background=False)
    async with app.router.lifespan_context(app):
        harness = Harness(app)
        try:
            creds = await harness.application(environment=PROD, commands=[LOCK])
            vin = "WBA" + new_vin("")[:14]
            headers, _ = await harness.vehicle_token(creds, vin, commands=[LOCK])
            sent = await harness.send(
                headers,
                vin,
                "doors",
                "lock_unlock_doors",
                {"locks_state": "locked"},
                environment=PROD,
            )
            assert sent.status_code == 202, sent.text
            await harness.work()
            done = await harness.get(headers, sent.json()["id"], environment=PROD)
            assert done.json()["status"] == "executed"
            assert fake.received[-1][0] == vin
            assert fake.received[-1][2] == sent.json()["id"]
            assert len(fake.received) == 1  # sent once
            await harness.work()
            assert len(fake.received) == 1
        finally:
            await harness.aclose()
            connector = registry_of(app.state.autoport).production["bmw"]
            assert isinstance(connector, TemplateConnector)
            await connector.close()
    assert httpx  # the connector's client library
