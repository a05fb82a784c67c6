"""The access log (kit.logging.AccessLog): one line per request with its fields, JSON or
console, the level and sampling switches, nothing secret in it, and the order of lines
kept although access lines are held for a few milliseconds. The real `autoport serve`
(one line per request, none of uvicorn's) is tests/cli/test_serve.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import structlog

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.db import Database
from autoport.kit.logging import ACCESS_LOG, configure_logging, flush_access_log
from tests.factories import bearer, client_credentials_token, create_app_credentials


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    yield
    flush_access_log()
    configure_logging("info", "auto")


async def serving(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, Database]]:
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
            yield c, app.state.autoport.database


def logged(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    flush_access_log()
    return [json.loads(line) for line in capsys.readouterr().err.splitlines()]


def requests_in(lines: list[dict[str, object]]) -> list[dict[str, object]]:
    return [line for line in lines if line["event"] == "request"]


async def test_a_line_per_request_with_its_fields(
    sqlite_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info", "json")
    settings = sqlite_settings.model_copy(update={"access_log": True})
    async for client, db in serving(settings):
        creds = await create_app_credentials(db)
        token = await client_credentials_token(client, creds)
        capsys.readouterr()
        fleet = await client.get("/v1/fleets/vehicles", headers=bearer(token))
        missing = await client.get("/sandbox/v1/nowhere", headers={"X-Request-Id": "lost-1"})
    lines = requests_in(logged(capsys))
    assert [line["request_id"] for line in lines] == [fleet.headers["x-request-id"], "lost-1"]
    first, second = lines
    assert first["status"] == fleet.status_code == 200
    assert first["path"] == "/v1/fleets/vehicles"
    assert first["method"] == "GET"
    assert first["environment"] == "production"
    assert first["application"] == creds.app_id
    assert isinstance(first["ms"], float) and first["ms"] >= 0
    assert first["level"] == "info"
    assert str(first["timestamp"]).endswith("Z")
    assert second["status"] == missing.status_code == 404
    assert (second["environment"], second["application"]) == ("sandbox", None)
    assert second["path"] == "/sandbox/v1/nowhere"  # as requested


async def test_no_secret_reaches_the_line(
    sqlite_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info", "json")
    settings = sqlite_settings.model_copy(update={"access_log": True})
    async for client, db in serving(settings):
        creds = await create_app_credentials(db)
        token = await client_credentials_token(client, creds)
        await client.get("/v1/fleets/vehicles?client_secret=s3cr3t-query", headers=bearer(token))
    output = "\n".join(json.dumps(line) for line in requests_in(logged(capsys)))
    assert "/v1/fleets/vehicles" in output
    assert creds.client_secret is not None
    for secret in (token, creds.client_secret, "s3cr3t-query"):
        assert secret not in output


async def test_level_and_sampling_switches(
    sqlite_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = sqlite_settings.model_copy(update={"access_log": True})
    async for client, _ in serving(settings):
        configure_logging("warning", "json")
        await client.get("/")
        assert requests_in(logged(capsys)) == []
        # Probes and scrapes at debug only.
        configure_logging("info", "json")
        await client.get("/healthz")
        await client.get("/metrics")
        assert requests_in(logged(capsys)) == []
        configure_logging("debug", "json")
        await client.get("/healthz")
        assert [line["path"] for line in requests_in(logged(capsys))] == ["/healthz"]
    configure_logging("info", "json")
    # Sampled: (nearly) no success is written, every refusal and error is.
    sampled = settings.model_copy(update={"access_log_sample": 1e-9})
    async for client, _ in serving(sampled):
        for _ in range(20):
            await client.get("/")
        await client.get("/v1/nowhere")
        assert [line["status"] for line in requests_in(logged(capsys))] == [404]
    off = settings.model_copy(update={"access_log": False})
    async for client, _ in serving(off):
        await client.get("/v1/nowhere")
        assert requests_in(logged(capsys)) == []


async def test_console_lines_on_a_terminal(
    sqlite_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info", "console")
    settings = sqlite_settings.model_copy(update={"access_log": True})
    async for client, _ in serving(settings):
        await client.get("/", headers={"X-Request-Id": "console-1"})
    flush_access_log()
    text = capsys.readouterr().err
    line = next(line for line in text.splitlines() if "console-1" in line)
    assert "request" in line and "status=200" in line and "path=/" in line
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


def test_held_lines_leave_before_any_other_line(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "json")
    capsys.readouterr()
    # No event loop here: a line leaves at once; inside one it is held (tested below).
    ACCESS_LOG.request("r1", "GET", "/", "production", 200, 1.0, None)
    structlog.get_logger("test").info("after")
    events = [json.loads(line)["event"] for line in capsys.readouterr().err.splitlines()]
    assert events == ["request", "after"]


async def test_held_lines_leave_within_milliseconds_or_before_others(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import asyncio

    configure_logging("info", "json")
    capsys.readouterr()
    ACCESS_LOG.request("r1", "GET", "/", "production", 200, 1.0, None)
    ACCESS_LOG.request("r2", "GET", "/", "production", 200, 1.0, None)
    assert capsys.readouterr().err == ""  # held
    await asyncio.sleep(ACCESS_LOG.FLUSH_SECONDS * 4)
    assert [json.loads(line)["request_id"] for line in capsys.readouterr().err.splitlines()] == [
        "r1",
        "r2",
    ]
    ACCESS_LOG.request("r3", "GET", "/", "production", 200, 1.0, None)
    structlog.get_logger("test").warning("next")
    events = [json.loads(line)["event"] for line in capsys.readouterr().err.splitlines()]
    assert events == ["request", "next"]
