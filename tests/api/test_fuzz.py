"""The fuzz run of CI: schemathesis against the app's own OpenAPI description, on both
backends (the `app` fixture) and both environments, with real tokens and seeded data
(tests/api/fuzzing.py). Every answer must be below 500 and match the documented status
codes, content types and schemas. `python -m bench fuzz` is the long run."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from tests.api.fuzzing import BASE_URL, fuzz, fuzz_settings_overrides

# 45 operations x 14 cases (a few fewer where Hypothesis finds fewer distinct ones) per
# environment and backend: 4 legs >= 2,000 cases.
PER_OPERATION = 14
MIN_CASES_PER_LEG = 500


@pytest.fixture
async def fuzz_client(
    settings: Settings, clock: FrozenClock
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    app = create_app(
        settings.model_copy(update=fuzz_settings_overrides()), clock=clock, run_background=False
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield app, client


@pytest.mark.parametrize("environment", [Environment.production, Environment.sandbox])
async def test_fuzzing_finds_no_server_error_and_no_schema_violation(
    fuzz_client: tuple[FastAPI, httpx.AsyncClient], environment: Environment
) -> None:
    app, client = fuzz_client
    report = await fuzz(app, client, environment, per_operation=PER_OPERATION)
    print(report.summary())
    assert report.cases >= MIN_CASES_PER_LEG, report.summary()
    assert not report.server_errors, "\n".join(map(str, report.server_errors[:20]))
    assert not report.violations, "\n".join(map(str, report.violations[:20]))
