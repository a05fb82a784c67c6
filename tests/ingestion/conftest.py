from __future__ import annotations

import pytest
from fastapi import FastAPI

from autoport.ingestion.providers import create_provider
from autoport.kit.environments import Environment


async def new_provider(
    app: FastAPI,
    environment: Environment = Environment.production,
    brands: list[str] | None = None,
) -> str:
    state = app.state.autoport
    async with state.database.transaction() as conn:
        _, secret = await create_provider(
            conn,
            key=state.token_key,
            environment=environment,
            name="test",
            now_us=1,
            brands=brands,
        )
    return secret


@pytest.fixture
async def provider_headers(app: FastAPI) -> dict[str, str]:
    return {"Authorization": f"Bearer {await new_provider(app)}"}
