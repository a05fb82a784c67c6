"""The console's Streaming and Usage pages, through the real app on both backends: MQTT
credentials issued once (only the hash is stored), the live view of the application's
stream messages, usage figures counted by the real request pipeline; another account's
application is a 404 for every role; viewers only look."""

from __future__ import annotations

import httpx
import pytest

from autoport.config import Settings
from autoport.kit.environments import Environment
from autoport.streaming import repository as streaming_repository
from autoport.usage.tasks import flush_usage
from tests.factories import bearer

from .conftest import Console, World
from .streams import message


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # A deployment that publishes MQTT (credentials are offered only there); no test here
    # connects to it.
    return settings.model_copy(update={"mqtt_url": "mqtt://127.0.0.1:1883"})


def streaming(account: str, app_id: str = "") -> str:
    return f"/console/a/{account}/streaming" + (f"/{app_id}" if app_id else "")


async def test_credentials_are_shown_once_and_the_live_view_shows_messages(
    console: Console, world: World
) -> None:
    browser = await console.signed_in(world.a.developer)
    path = streaming(world.a.id, world.a.app_id)
    page = await browser.get(path)
    assert page.status_code == 200
    assert f"sandbox/level13/{world.a.app_id}" in page.text and "none issued yet" in page.text
    issued = await browser.post(path + "/credentials", {}, follow=True)
    assert issued.status_code == 200
    password = issued.text.split('id="mqtt-password">')[1].split("<")[0]
    assert len(password) >= 24
    stored = await console.database.fetch_value(
        "SELECT password_hash FROM stream_mqtt_credentials WHERE application_id = :id",
        {"id": world.a.app_id},
    )
    assert stored.startswith("$7$") and password not in stored
    again = await browser.get(path)
    assert password not in again.text and "issued" in again.text
    await message(console, world.a.app_id, 1, '{"hello": "first"}')
    await message(console, world.a.app_id, 2, '{"hello": "second"}')
    live = await browser.get(path + "/messages")
    assert live.status_code == 200 and "hx-trigger" not in live.text
    assert live.text.index("second") < live.text.index("first")  # newest first


async def test_a_viewer_only_looks_at_streaming(console: Console, world: World) -> None:
    viewer = await console.signed_in(world.a.viewer)
    path = streaming(world.a.id, world.a.app_id)
    page = await viewer.get(path)
    assert page.status_code == 200 and "/credentials" not in page.text
    assert (await viewer.post(path + "/credentials", {})).status_code == 403
    assert (
        await streaming_repository.get_mqtt_credentials_issued_at(
            console.database.reader, world.a.app_id
        )
        is None
    )


@pytest.mark.parametrize("role", ["owner", "developer", "viewer"])
async def test_another_accounts_stream_is_a_404(console: Console, world: World, role: str) -> None:
    await message(console, world.b.app_id, 1, '{"secret": "of beta"}')
    browser = await console.signed_in(getattr(world.a, role))
    await browser.get(streaming(world.a.id))
    for path in (
        streaming(world.b.id, world.b.app_id),
        streaming(world.a.id, world.b.app_id),
        streaming(world.a.id, world.b.app_id) + "/messages",
        streaming(world.b.id),
    ):
        answer = await browser.client.get(browser.prefix + path)
        assert answer.status_code == 404, path
        assert "of beta" not in answer.text
    for path in (streaming(world.a.id, world.b.app_id), streaming(world.b.id, world.b.app_id)):
        assert (await browser.post(path + "/credentials", {})).status_code in (403, 404)
    assert (
        await streaming_repository.get_mqtt_credentials_issued_at(
            console.database.reader, world.b.app_id
        )
        is None
    )
    picker = await browser.get(streaming(world.a.id))
    assert world.a.app_id in picker.text and world.b.app_id not in picker.text


async def _token(client: httpx.AsyncClient, console: Console, app_id: str) -> dict[str, str]:
    """A client_credentials token of a console-made application (a new secret)."""
    from autoport.apps import service as apps_service

    async with console.database.transaction() as conn:
        secret, _ = await apps_service.rotate_secret(
            conn,
            environment=Environment.sandbox,
            app_id=app_id,
            overlap_seconds=0,
            now_us=console.clock.now_us(),
        )
        application = await apps_service.get_application(
            conn, environment=Environment.sandbox, app_id=app_id
        )
    answer = await client.post(
        "/sandbox/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": application.client_id,
            "client_secret": secret,
        },
    )
    assert answer.status_code == 200, answer.text
    return bearer(answer.json()["access_token"])


async def test_usage_counts_each_accounts_own_applications(console: Console, world: World) -> None:
    client = console.browser().client
    for tenant, calls in ((world.a, 3), (world.b, 5)):
        headers = await _token(client, console, tenant.app_id)
        for _ in range(calls):
            answer = await client.get("/sandbox/v1/fleets/vehicles", headers=headers)
            assert answer.status_code == 200
    assert await flush_usage(console.app.state.autoport) == 2
    for person in world.a.people:
        browser = await console.signed_in(person)
        page = await browser.get(f"/console/a/{world.a.id}/usage")
        assert page.status_code == 200
        row = page.text.split(world.a.app_id)[1].split("</tr>")[0]
        assert "<td>3</td>" in row
        assert world.b.app_id not in page.text
        assert (await browser.get(f"/console/a/{world.b.id}/usage")).status_code == 404
        bad = await browser.get(f"/console/a/{world.a.id}/usage?days=0")
        assert bad.status_code == 422 and 'id="usage-days-error"' in bad.text
        week = await browser.get(f"/console/a/{world.a.id}/usage?days=7")
        assert week.status_code == 200 and 'id="usage-data"' in week.text
    operator = await console.operator()
    page = await operator.get(f"/console/a/{world.b.id}/usage")
    assert "<td>5</td>" in page.text.split(world.b.app_id)[1].split("</tr>")[0]
