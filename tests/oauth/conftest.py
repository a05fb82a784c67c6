from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from autoport.config import Settings
from autoport.kit.db import Database
from tests.factories import AppCredentials, create_app_credentials


@pytest.fixture
def db(app: FastAPI) -> Database:
    database: Database = app.state.autoport.database
    return database


@pytest.fixture
async def creds(db: Database) -> AppCredentials:
    return await create_app_credentials(db)


@pytest.fixture
async def public_creds(db: Database) -> AppCredentials:
    return await create_app_credentials(
        db, name="Mobile app", client_type="public", redirect_uris=["com.example.app:/cb"]
    )


async def token_request(
    client: httpx.AsyncClient, creds: AppCredentials, **params: str
) -> httpx.Response:
    return await client.post(creds.token_path, data={**creds.auth(), **params})


@pytest.fixture
def settings_(settings: Settings) -> Settings:
    """The backend's settings, for tests that build their own app (state machines)."""
    return settings
