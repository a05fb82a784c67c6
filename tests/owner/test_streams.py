"""Withdrawing ends the grant's live data too: once `revoke_grant` (the owner portal's
and the admin API's one function) has run, no stream message is built for the vehicle,
while the application's stream goes on for its other vehicles. Over real HTTP (SSE)
with the real stream worker."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from autoport.config import Settings
from autoport.kit.environments import Environment
from autoport.owner import service
from tests.streaming.conftest import (
    LiveServer,
    create_application,
    grant_consent,
    live_server,
    new_vin,
)
from tests.streaming.sse import feed, open_sse


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[LiveServer]:
    async with live_server(settings) as live:
        yield live


async def test_no_stream_message_is_built_for_a_withdrawn_grant(server: LiveServer) -> None:
    db = server.database
    app_id = await create_application(db)
    withdrawn_vin, kept_vin = new_vin(), new_vin()
    properties = ["charging.battery_level"]
    withdrawn = await grant_consent(
        db, application_id=app_id, vin=withdrawn_vin, properties=properties
    )
    await grant_consent(db, application_id=app_id, vin=kept_vin, properties=properties)
    token = await server.tokens.application(app_id)
    async with (
        httpx.AsyncClient(base_url=server.base_url, timeout=10) as client,
        open_sse(client, token) as sse,
    ):
        await feed(db, withdrawn_vin, [0.5])
        assert withdrawn_vin in (await sse.next_event())["data"]

        state = server.app.state.autoport
        # As the portal's and the admin API's routes do: the withdrawal's transaction,
        # then open streams are told.
        async with state.database.transaction() as conn:
            outcomes = await service.revoke_grant(
                conn,
                environment=Environment.sandbox,
                authorization_ids=[withdrawn],
                detail="test",
                now_us=state.clock.now_us(),
            )
        state.access_changed()
        assert outcomes == {withdrawn: service.Outcome.withdrawn}
        await feed(db, withdrawn_vin, [0.6])
        await feed(db, kept_vin, [0.7])
        # The next message is the kept vehicle's: none was built for the withdrawn one.
        following = await sse.next_event()
        assert kept_vin in following["data"] and withdrawn_vin not in following["data"]
    built = await db.fetch_all("SELECT message FROM stream_messages")
    assert sum(withdrawn_vin in row["message"] for row in built) == 1
