"""The command send and read are hot routes (autoport.kit.routing.HotRoute, answered
before FastAPI) documented by their FastAPI twins (`send_command`, `get_command`). Both
must answer the same: status, the headers a client reads, and the body, for the answer
and for every error. The twin is reached through the same request pipeline with FastAPI
alone behind it (tests/vehicle_data/test_hot_route_twin.py, whose `Twin` this uses)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from tests.commands.conftest import (
    LOCK,
    SANDBOX,
    Harness,
    command_path,
    harness_for,
    new_vin,
    path,
)
from tests.vehicle_data.test_hot_route_twin import Twin

# Differ between two requests made one after the other, by design: the budget left
# (each request counts) and the seconds to the window's end (the clock moves).
_MOVING = frozenset({"ratelimit-remaining", "ratelimit-reset", "retry-after"})
LOCKED = {
    "capability": "doors",
    "command": "lock_unlock_doors",
    "arguments": {"locks_state": "locked"},
}


@pytest.fixture
async def twin(harness: Harness) -> AsyncIterator[tuple[Twin, httpx.AsyncClient]]:
    found = Twin(harness.app)
    transport = httpx.ASGITransport(app=found)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
        yield found, c


async def assert_same(
    harness: Harness,
    twin: tuple[Twin, httpx.AsyncClient],
    url: str,
    headers: dict[str, str] | None = None,
    *,
    method: str = "POST",
    body: Any = None,
    content: bytes | None = None,
    status: int,
    new_id: bool = False,
) -> httpx.Response:
    """The same request to the served app (hot route), then to the twin. `new_id`: each
    one creates a command, so the ids (and the Location naming them) differ and are
    compared as the same value."""
    found, twin_client = twin
    sent = {**(headers or {}), "X-Request-Id": "twin-check-1"}
    if body is not None:
        content, sent["Content-Type"] = orjson.dumps(body), "application/json"
    hot = await harness.client.request(method, url, headers=sent, content=content)
    if new_id and hot.status_code < 300:
        await harness.work()  # the capability is free again for the twin's command
    calls = found.calls
    documented = await twin_client.request(method, url, headers=sent, content=content)
    assert found.calls == calls + 1, "the twin must be answered by FastAPI"
    assert hot.status_code == documented.status_code == status, (hot.text, documented.text)
    hot_body, twin_body = hot.content, documented.content
    hot_headers, twin_headers = dict(hot.headers), dict(documented.headers)
    if new_id:
        hot_id, twin_id = hot.json()["id"], documented.json()["id"]
        assert hot_id != twin_id
        twin_body = twin_body.replace(twin_id.encode(), hot_id.encode())
        twin_headers["location"] = twin_headers["location"].replace(twin_id, hot_id)
    assert hot_body == twin_body
    assert set(hot_headers) == set(twin_headers)
    for name, value in hot_headers.items():
        if name not in _MOVING and name != "content-length":
            assert twin_headers[name] == value, name
    if "ratelimit-remaining" in hot_headers:
        left = int(hot_headers["ratelimit-remaining"])
        assert int(twin_headers["ratelimit-remaining"]) == max(0, left - 1)
    return hot


async def _fleet(harness: Harness, **application: Any) -> tuple[str, dict[str, str]]:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application(**application)
    return vin, await harness.fleet_token(creds, [vin])


async def test_the_accepted_and_the_finished_answers_are_the_same(
    harness: Harness, twin: tuple[Twin, httpx.AsyncClient]
) -> None:
    vin, headers = await _fleet(harness)
    url = path(SANDBOX, vin)
    accepted = await assert_same(harness, twin, url, headers, body=LOCKED, status=202, new_id=True)
    assert accepted.json()["status"] == "pending" and accepted.json()["state"] is None
    # The executed command, read and waited for (its state included), with its headers.
    done = command_path(SANDBOX, accepted.json()["id"])
    read = await assert_same(harness, twin, done, headers, method="GET", status=200)
    assert read.json()["status"] == "executed"
    assert read.json()["state"]["doors"]["locks_state"]["data"] == "locked"
    waited = await assert_same(
        harness, twin, done, {**headers, "Prefer": "wait=2"}, method="GET", status=200
    )
    assert waited.headers["preference-applied"] == "wait=2"


async def test_access_errors_are_the_same(
    harness: Harness, twin: tuple[Twin, httpx.AsyncClient]
) -> None:
    vin, headers = await _fleet(harness, commands=["honk_horn_flash_lights.honk_flash"])
    url = path(SANDBOX, vin)
    await assert_same(harness, twin, url, body=LOCKED, status=401)  # no token
    missing = await assert_same(harness, twin, url, headers, body=LOCKED, status=403)
    assert "doors.set.locks_state" in missing.json()["errors"][0]["detail"]
    # A VIN without a clearance; another application's command; no such command.
    await assert_same(harness, twin, path(SANDBOX, new_vin()), headers, body=LOCKED, status=403)
    other_vin, other = await _fleet(harness)
    theirs = await harness.send(
        other, other_vin, "doors", "lock_unlock_doors", {"locks_state": "locked"}
    )
    assert theirs.status_code == 202
    await assert_same(
        harness, twin, command_path(SANDBOX, theirs.json()["id"]), headers, method="GET", status=404
    )
    await assert_same(
        harness, twin, command_path(SANDBOX, "no-such-command"), headers, method="GET", status=404
    )


async def test_conflict_and_argument_errors_are_the_same(
    harness: Harness, twin: tuple[Twin, httpx.AsyncClient]
) -> None:
    vin, headers = await _fleet(harness)
    url = path(SANDBOX, vin)
    bad = {**LOCKED, "arguments": {"locks_state": "welded"}}
    wrong = await assert_same(harness, twin, url, headers, body=bad, status=422)
    assert "arguments.locks_state" in wrong.text
    unknown = {**LOCKED, "command": "open_sesame"}
    assert (
        "command" in (await assert_same(harness, twin, url, headers, body=unknown, status=422)).text
    )
    await assert_same(
        harness, twin, path(SANDBOX, "WBA0000000000000I"), headers, body=LOCKED, status=400
    )
    first = await harness.send(
        headers, vin, "doors", "lock_unlock_doors", {"locks_state": "locked"}
    )
    assert first.status_code == 202
    busy = await assert_same(harness, twin, url, headers, body=LOCKED, status=409)
    assert busy.headers["location"] == f"/v1/vehicle-commands/{first.json()['id']}"


@pytest.mark.parametrize(
    ("body", "content", "status"),
    [
        ({"capability": "doors", "arguments": {}}, None, 422),  # command missing
        ({**LOCKED, "extra": 1}, None, 422),  # an unknown field
        ({**LOCKED, "arguments": ["locked"]}, None, 422),  # arguments not an object
        (["doors"], None, 422),  # not an object
        ({"capability": "d" * 101, "command": "x"}, None, 422),  # too long
        (None, b"{not json", 400),
        (None, b"\x83", 400),  # not text: found by bench fuzz, a 500 before
        (None, b"\xd4\xdcv", 400),
        (None, b"", 400),  # no body
    ],
)
async def test_body_errors_are_the_same(
    harness: Harness,
    twin: tuple[Twin, httpx.AsyncClient],
    body: Any,
    content: bytes | None,
    status: int,
) -> None:
    vin, headers = await _fleet(harness)
    if content is not None:
        headers = {**headers, "Content-Type": "application/json"}
    await assert_same(
        harness, twin, path(SANDBOX, vin), headers, body=body, content=content, status=status
    )


async def test_the_content_type_answer_is_the_same(
    harness: Harness, twin: tuple[Twin, httpx.AsyncClient]
) -> None:
    vin, headers = await _fleet(harness)
    text = {**headers, "Content-Type": "text/plain"}
    await assert_same(harness, twin, path(SANDBOX, vin), text, content=b"locked", status=415)


async def test_the_rate_limit_answer_is_the_same(
    command_settings: Settings, clock: FrozenClock
) -> None:
    # A budget of one command per vehicle (the limiters are built once, autoport.state).
    limited = command_settings.model_copy(update={"vehicle_command_rate_limit": "1/minute"})
    async with harness_for(limited, clock) as harness:
        found = Twin(harness.app)
        transport = httpx.ASGITransport(app=found)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            await _rate_limited(harness, (found, c))


async def _rate_limited(harness: Harness, twin: tuple[Twin, httpx.AsyncClient]) -> None:
    vin, headers = await _fleet(harness)
    first = await harness.send(
        headers, vin, "honk_horn_flash_lights", "honk_flash", {"flash_times": 1}
    )
    assert first.status_code == 202
    limited = await assert_same(harness, twin, path(SANDBOX, vin), headers, body=LOCKED, status=429)
    assert "retry-after" in limited.headers


def test_the_twins_are_the_documented_operations(harness: Harness) -> None:
    paths = harness.app.openapi()["paths"]
    send = paths["/v1/vehicle-commands/autoapi-13/{vin}"]["post"]
    read = paths["/v1/vehicle-commands/{command_id}"]["get"]
    assert send["operationId"].startswith("send_command")
    assert read["operationId"].startswith("get_command")
    assert {"200", "202", "401", "403", "409", "422", "429"} <= set(send["responses"])
    assert LOCK  # the command these tests send
