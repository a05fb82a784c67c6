"""What a laptop install (`make run`: listening on 127.0.0.1, addressed at 127.0.0.1)
allows: the README's "set a webhook and watch its ping arrive" with a receiver on the
laptop, in the sandbox (issue #38). Production on the same install still refuses
loopback, every refusal names the setting that allows it, and a server anyone else can
reach allows loopback nowhere without that setting. Real receiver, real HTTP, both
backends."""

from __future__ import annotations

import httpx
import pytest

from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.webhooks import service
from autoport.webhooks.delivery import WebhookConfig, only_this_machine
from autoport.webhooks.tasks import DeliveryWorker

from .conftest import ADMIN_TOKEN, APP_ID, SANDBOX_APP_ID, Receiver, emit

AUTH = {"authorization": f"Bearer {ADMIN_TOKEN}"}
SETTING = "AUTOPORT_WEBHOOK_ALLOW_LOOPBACK"
PRODUCTION = f"/admin/v1/applications/{APP_ID}/webhook"
SANDBOX = f"/sandbox/admin/v1/applications/{SANDBOX_APP_ID}/webhook"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """A laptop's settings: the defaults, loopback receivers not allowed by the setting."""
    laptop = settings.model_copy(update={"webhook_allow_loopback": False})
    assert (laptop.host, laptop.sandbox_base_url) == ("127.0.0.1", "http://127.0.0.1:8080/sandbox")
    return laptop


def test_only_a_server_nobody_else_reaches_counts_as_this_machine(settings: Settings) -> None:
    assert only_this_machine(settings)
    assert only_this_machine(settings.model_copy(update={"host": "::1"}))
    # Listening on every address: other machines reach it.
    assert not only_this_machine(settings.model_copy(update={"host": "0.0.0.0"}))  # noqa: S104
    # Behind a proxy on this host (deploy/: 127.0.0.1): the public address decides.
    public = settings.model_copy(update={"sandbox_base_url": "https://sandbox.example.com"})
    assert not only_this_machine(public)


async def test_a_laptop_sandbox_webhook_may_be_a_loopback_receiver(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    for url in (receiver.url, f"http://localhost:{receiver.port}/named"):
        answer = await client.put(SANDBOX, json={"url": url}, headers=AUTH)
        assert answer.status_code in (200, 201), answer.text
        assert answer.json()["ping"]["status"] == "succeeded"
    assert [r.path for r in receiver.requests] == ["/hook", "/named"]


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("{receiver}", "must be an https:// URL"),
        ("http://localhost:{port}/hook", "must be an https:// URL"),
        ("https://127.0.0.1:{port}/hook", "points to 127.0.0.1, a loopback address"),
        ("https://[::1]:{port}/hook", "points to ::1, a loopback address"),
        ("https://localhost:{port}/hook", "resolves to 127.0.0.1, a loopback address"),
    ],
)
async def test_production_on_the_same_laptop_refuses_loopback_naming_the_setting(
    client: httpx.AsyncClient,
    applications: Database,
    receiver: Receiver,
    url: str,
    refusal: str,
) -> None:
    target = url.format(receiver=receiver.url, port=receiver.port)
    answer = await client.put(PRODUCTION, json={"url": target}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    [error] = answer.json()["errors"]
    assert error["source"] == "url"
    assert refusal in error["detail"]
    assert f"{SETTING}=true allows them" in error["detail"], error["detail"]
    assert (await client.get(PRODUCTION, headers=AUTH)).status_code == 404
    assert receiver.requests == []


@pytest.mark.parametrize(
    "url", ["http://10.0.0.1/hook", "http://[::ffff:127.0.0.1]/hook", "http://169.254.169.254/"]
)
async def test_the_laptop_sandbox_allows_loopback_only(
    client: httpx.AsyncClient, applications: Database, url: str
) -> None:
    answer = await client.put(SANDBOX, json={"url": url}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    assert SETTING not in answer.text  # the setting would not allow these either


@pytest.mark.parametrize(
    "elsewhere",
    [{"host": "0.0.0.0"}, {"sandbox_base_url": "https://sandbox.example.com"}],  # noqa: S104
)
async def test_a_server_others_reach_refuses_loopback_in_the_sandbox_too(
    settings: Settings,
    applications: Database,
    receiver: Receiver,
    clock: FrozenClock,
    elsewhere: dict[str, str],
) -> None:
    config = WebhookConfig.from_settings(settings.model_copy(update=elsewhere))
    with pytest.raises(Exception, match=SETTING) as refused:
        await service.save_webhook(
            applications,
            environment=Environment.sandbox,
            application_id=SANDBOX_APP_ID,
            url=receiver.url,
            secret=None,
            events=None,
            config=config,
            clock_now=clock.now_us,
        )
    assert getattr(refused.value, "status", None) == 422
    assert receiver.requests == []


async def test_the_worker_delivers_the_sandbox_and_refuses_production_loopback(
    settings: Settings, applications: Database, receiver: Receiver, clock: FrozenClock
) -> None:
    """A production webhook to loopback stored while the setting was on (then turned off)
    is refused at the connection, its log naming the setting; the same worker delivers
    the laptop sandbox's loopback webhook."""
    allowing = WebhookConfig.from_settings(
        settings.model_copy(update={"webhook_allow_loopback": True})
    )
    for environment, application_id in (
        (Environment.production, APP_ID),
        (Environment.sandbox, SANDBOX_APP_ID),
    ):
        await service.save_webhook(
            applications,
            environment=environment,
            application_id=application_id,
            url=f"{receiver.url}/{environment}",
            secret=None,
            events=None,
            config=allowing,
            clock_now=clock.now_us,
        )
    receiver.requests.clear()
    worker = DeliveryWorker(applications, WebhookConfig.from_settings(settings), clock=clock)
    try:
        for environment, application_id in (
            (Environment.production, APP_ID),
            (Environment.sandbox, SANDBOX_APP_ID),
        ):
            await emit(
                applications,
                clock,
                "fleet_clearance_changed",
                "SBX00000000000001",
                {"action": "approved"},
                application_id=application_id,
                environment=environment,
            )
        outcomes = {o.delivery_id: o for o in await worker.run_once()}
    finally:
        await worker.close()
    assert [r.path for r in receiver.requests] == ["/hook/sandbox"]
    errors = [o.result.error for o in outcomes.values() if not o.result.ok]
    assert len(errors) == 1 and errors[0] is not None
    assert "refused: 127.0.0.1 resolves to 127.0.0.1, a loopback address" in errors[0]
    assert SETTING in errors[0]
