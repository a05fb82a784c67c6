"""The admin API of webhooks, on SQLite and PostgreSQL, against a real receiver."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
import standardwebhooks

from autoport.kit.db import Database
from autoport.webhooks import verify, verify_delivery
from autoport.webhooks.sealing import SealError, derive_key, seal, unseal
from autoport.webhooks.tasks import DeliveryWorker

from .conftest import ADMIN_TOKEN, APP_ID, SANDBOX_APP_ID, Answer, Receiver

AUTH = {"authorization": f"Bearer {ADMIN_TOKEN}"}
PATH = f"/admin/v1/applications/{APP_ID}/webhook"


async def test_saving_a_webhook_sends_a_signed_ping_and_returns_its_outcome(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    response = await client.put(PATH, json={"url": receiver.url}, headers=AUTH)
    assert response.status_code == 201, response.text
    data = response.json()
    secret = data["webhook"]["secret"]
    assert secret.startswith("whsec_") and len(secret) >= 40
    assert data["webhook"]["events"] == [
        "ping",
        "fleet_clearance_changed",
        "authorization_changed",
        "command_changed",
    ]
    assert data["ping"]["status"] == "succeeded"
    assert data["ping"]["response_status"] == 200
    [ping] = receiver.requests
    assert verify(secret, ping.body, ping.headers["X-Svc-Signature-256"])
    assert verify(secret, ping.body, ping.headers["X-Svc-Signature"])
    assert ping.headers["X-Svc-Delivery"] == data["ping"]["delivery_id"]
    assert ping.headers["X-Svc-Event"] == "ping"
    assert ping.headers["User-Agent"] == "Svc-Webhook/1.2.0"
    body = ping.json()
    assert body["vehicle"] == {"vin": "*"}
    assert body["event"]["type"] == "ping"
    assert body["application"] == {"id": APP_ID}


async def test_changing_the_url_keeps_the_secret_and_pings_again(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    first = (await client.put(PATH, json={"url": receiver.url}, headers=AUTH)).json()
    changed = await client.put(
        PATH,
        json={"url": receiver.url + "/v2", "events": ["fleet_clearance_changed"]},
        headers=AUTH,
    )
    assert changed.status_code == 200
    assert changed.json()["webhook"]["secret"] == first["webhook"]["secret"]
    assert changed.json()["webhook"]["events"] == ["fleet_clearance_changed"]
    assert [r.path for r in receiver.requests] == ["/hook", "/hook/v2"]
    given = await client.put(
        PATH, json={"url": receiver.url, "secret": "a-given-secret-0123456789"}, headers=AUTH
    )
    assert given.json()["webhook"]["secret"] == "a-given-secret-0123456789"
    assert verify(
        "a-given-secret-0123456789",
        receiver.requests[-1].body,
        receiver.requests[-1].headers["X-Svc-Signature-256"],
    )


async def test_a_failing_ping_is_reported_and_stays_queued_for_retry(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    receiver.behaviour = lambda _: Answer(status=503, body=b"down for maintenance")
    response = await client.put(PATH, json={"url": receiver.url}, headers=AUTH)
    assert response.status_code == 201
    ping = response.json()["ping"]
    assert ping["status"] == "pending"
    assert ping["response_status"] == 503
    assert ping["next_attempt_at"] is not None
    log = (await client.get(PATH + "/deliveries", headers=AUTH)).json()["deliveries"]
    assert log[0]["id"] == ping["delivery_id"]
    assert log[0]["response"]["body"] == "down for maintenance"


async def test_show_hides_the_secret_unless_asked(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    saved = (await client.put(PATH, json={"url": receiver.url}, headers=AUTH)).json()
    shown = await client.get(PATH, headers=AUTH)
    assert shown.status_code == 200
    assert "secret" not in shown.json()["webhook"]
    assert shown.json()["webhook"]["url"] == receiver.url
    revealed = await client.get(PATH, params={"reveal_secret": "true"}, headers=AUTH)
    assert revealed.json()["webhook"]["secret"] == saved["webhook"]["secret"]


async def test_the_secret_is_not_stored_in_plaintext(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    saved = (await client.put(PATH, json={"url": receiver.url}, headers=AUTH)).json()
    stored = await applications.fetch_value(
        "SELECT secret_sealed FROM webhooks WHERE application_id = :a", {"a": APP_ID}
    )
    assert saved["webhook"]["secret"] not in stored
    assert stored.startswith("v1:")


async def test_delete_removes_the_webhook(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    await client.put(PATH, json={"url": receiver.url}, headers=AUTH)
    assert (await client.delete(PATH, headers=AUTH)).status_code == 204
    assert (await client.get(PATH, headers=AUTH)).status_code == 404
    assert (await client.delete(PATH, headers=AUTH)).status_code == 404


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("PUT", ""),
        ("GET", ""),
        ("DELETE", ""),
        ("GET", "/deliveries"),
        ("POST", "/deliveries/x/redeliver"),
    ],
)
async def test_every_route_needs_the_admin_token(
    client: httpx.AsyncClient, applications: Database, method: str, suffix: str
) -> None:
    kwargs: dict[str, Any] = (
        {"json": {"url": "https://hooks.example.com/"}} if method == "PUT" else {}
    )
    missing = await client.request(method, PATH + suffix, **kwargs)
    assert missing.status_code == 401
    wrong = await client.request(
        method, PATH + suffix, headers={"authorization": "Bearer nope"}, **kwargs
    )
    assert wrong.status_code == 401
    assert wrong.json()["errors"][0]["source"] == "Authorization"


async def test_unknown_application_is_404(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    path = "/admin/v1/applications/000000000000000000000000/webhook"
    response = await client.put(path, json={"url": receiver.url}, headers=AUTH)
    assert response.status_code == 404
    assert response.json()["errors"][0]["source"] == "application_id"
    assert receiver.requests == []
    assert (await client.get(path, headers=AUTH)).status_code == 404
    assert (await client.get(path + "/deliveries", headers=AUTH)).status_code == 404


async def test_applications_of_the_other_environment_are_404(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    production = await client.put(
        f"/admin/v1/applications/{SANDBOX_APP_ID}/webhook",
        json={"url": receiver.url},
        headers=AUTH,
    )
    assert production.status_code == 404
    sandbox = await client.put(
        f"/sandbox/admin/v1/applications/{SANDBOX_APP_ID}/webhook",
        json={"url": receiver.url},
        headers=AUTH,
    )
    assert sandbox.status_code == 201
    assert (
        await client.put(f"/sandbox{PATH}", json={"url": receiver.url}, headers=AUTH)
    ).status_code == 404


@pytest.mark.parametrize(
    ("body", "source", "words"),
    [
        ({"url": "ftp://hooks.example.com/"}, "url", "https://"),
        ({"url": "http://hooks.example.com/"}, "url", "https://"),
        ({"url": "https://10.1.2.3/hook"}, "url", "private"),
        ({"url": "https://169.254.169.254/"}, "url", "link-local"),
        ({"url": "https://u:p@hooks.example.com/"}, "url", "credentials"),
        ({"url": "https://a..b/hook"}, "url", "host name"),
        ({"url": "https://.example.com/hook"}, "url", "host name"),
        ({"url": "https://" + "a" * 300 + ".example.com/hook"}, "url", "host name"),
        ({"url": 42}, "url", "string"),
        ({}, "url", "required"),
        ({"url": "https://hooks.example.com/", "events": ["nope"]}, "events[0]", "ping"),
        ({"url": "https://hooks.example.com/", "secret": "short"}, "secret", "16"),
        ({"url": "https://hooks.example.com/", "color": "red"}, "color", "extra"),
        (
            {"url": "https://hooks.example.com/", "signature_scheme": "svix"},
            "signature_scheme",
            "'standard'",
        ),
    ],
)
async def test_bad_configuration_is_422_naming_the_field(
    client: httpx.AsyncClient,
    applications: Database,
    body: dict[str, object],
    source: str,
    words: str,
) -> None:
    response = await client.put(PATH, json=body, headers=AUTH)
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["source"] == source
    assert words in error["detail"]
    assert (await client.get(PATH, headers=AUTH)).status_code == 404


async def test_a_bad_change_keeps_the_stored_webhook(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    await client.put(PATH, json={"url": receiver.url}, headers=AUTH)
    refused = await client.put(PATH, json={"url": "https://192.168.0.10/"}, headers=AUTH)
    assert refused.status_code == 422
    assert (await client.get(PATH, headers=AUTH)).json()["webhook"]["url"] == receiver.url


async def test_malformed_json_is_400(client: httpx.AsyncClient, applications: Database) -> None:
    response = await client.put(
        PATH, content=b"{not json", headers={**AUTH, "content-type": "application/json"}
    )
    assert response.status_code == 400


async def test_unknown_delivery_is_404(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    await client.put(PATH, json={"url": receiver.url}, headers=AUTH)
    response = await client.post(PATH + "/deliveries/nope/redeliver", headers=AUTH)
    assert response.status_code == 404
    assert response.json()["errors"][0]["source"] == "delivery_id"
    assert (await client.get(PATH + "/deliveries/nope", headers=AUTH)).status_code == 404


async def test_a_secret_sealed_under_another_key_is_a_clear_409(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    await client.put(PATH, json={"url": receiver.url}, headers=AUTH)
    foreign = seal(derive_key(b"another-token-hmac-key"), "old-secret-value", application_id=APP_ID)
    await applications.execute(
        "UPDATE webhooks SET secret_sealed = :s WHERE application_id = :a",
        {"s": foreign, "a": APP_ID},
    )
    refused = await client.put(PATH, json={"url": receiver.url}, headers=AUTH)
    assert refused.status_code == 409
    assert refused.json()["errors"][0]["source"] == "secret"
    fresh = await client.put(
        PATH, json={"url": receiver.url, "secret": "a-brand-new-secret-123"}, headers=AUTH
    )
    assert fresh.status_code == 200
    assert fresh.json()["ping"]["status"] == "succeeded"


def test_a_sealed_secret_opens_only_for_its_application() -> None:
    key = derive_key(b"k" * 32)
    sealed = seal(key, "the-secret", application_id=APP_ID)
    assert "the-secret" not in sealed
    assert unseal(key, sealed, application_id=APP_ID) == "the-secret"
    with pytest.raises(SealError):
        unseal(key, sealed, application_id=SANDBOX_APP_ID)
    with pytest.raises(SealError):
        unseal(derive_key(b"x" * 32), sealed, application_id=APP_ID)


async def test_redeliver_queues_the_same_delivery_for_the_worker(
    client: httpx.AsyncClient,
    applications: Database,
    receiver: Receiver,
    worker: DeliveryWorker,
) -> None:
    saved = (await client.put(PATH, json={"url": receiver.url}, headers=AUTH)).json()
    delivery_id = saved["ping"]["delivery_id"]
    one = await client.get(f"{PATH}/deliveries/{delivery_id}", headers=AUTH)
    assert one.status_code == 200 and one.json()["delivery"]["status"] == "succeeded"
    queued = await client.post(f"{PATH}/deliveries/{delivery_id}/redeliver", headers=AUTH)
    assert queued.status_code == 202
    assert queued.json()["delivery"]["status"] == "pending"
    [outcome] = await worker.run_once()
    assert outcome.delivery_id == delivery_id and outcome.status == "succeeded"
    assert [r.headers["X-Svc-Delivery"] for r in receiver.requests] == [delivery_id] * 2
    assert receiver.requests[0].body == receiver.requests[1].body
    log = (await client.get(PATH + "/deliveries", headers=AUTH)).json()["deliveries"]
    assert [(d["id"], d["status"], d["attempts"]) for d in log] == [(delivery_id, "succeeded", 2)]


async def test_the_signature_scheme_is_chosen_shown_and_kept(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    created = await client.put(
        PATH, json={"url": receiver.url, "signature_scheme": "standard"}, headers=AUTH
    )
    assert created.status_code == 201, created.text
    webhook = created.json()["webhook"]
    assert webhook["signature_scheme"] == "standard"
    # The generated secret is a Standard Webhooks one; the reference library accepts
    # the ping (its clock is the real one, like the worker's here).
    [ping] = receiver.requests
    assert "X-Svc-Signature-256" not in ping.headers
    assert standardwebhooks.Webhook(webhook["secret"]).verify(ping.body, ping.headers)
    assert ping.headers["webhook-id"] == created.json()["ping"]["delivery_id"]
    assert abs(int(ping.headers["webhook-timestamp"]) - time.time()) < 60

    # Changing the URL keeps the scheme (and the secret).
    moved = await client.put(PATH, json={"url": receiver.url + "/v2"}, headers=AUTH)
    assert moved.json()["webhook"]["signature_scheme"] == "standard"
    shown = (await client.get(PATH, headers=AUTH)).json()["webhook"]
    assert shown["signature_scheme"] == "standard"

    # Back to the default headers, with the same secret used as a string.
    back = await client.put(
        PATH, json={"url": receiver.url, "signature_scheme": "default"}, headers=AUTH
    )
    assert back.json()["webhook"]["signature_scheme"] == "default"
    last = receiver.requests[-1]
    assert "webhook-signature" not in last.headers
    assert verify(webhook["secret"], last.body, last.headers["X-Svc-Signature-256"])
    assert (
        verify_delivery(webhook["secret"], last.body, last.headers)
        == (back.json()["ping"]["delivery_id"])
    )


async def test_the_standard_scheme_needs_a_standard_secret(
    client: httpx.AsyncClient, applications: Database, receiver: Receiver
) -> None:
    given = await client.put(
        PATH,
        json={
            "url": receiver.url,
            "secret": "a-given-secret-0123456789",
            "signature_scheme": "standard",
        },
        headers=AUTH,
    )
    assert given.status_code == 422
    error = given.json()["errors"][0]
    assert error["source"] == "secret" and "whsec_" in error["detail"]
    assert (await client.get(PATH, headers=AUTH)).status_code == 404
    assert receiver.requests == []

    # An existing webhook whose secret is not one cannot switch without a new secret;
    # the refusal leaves it as it was.
    await client.put(
        PATH, json={"url": receiver.url, "secret": "a-given-secret-0123456789"}, headers=AUTH
    )
    switched = await client.put(
        PATH, json={"url": receiver.url, "signature_scheme": "standard"}, headers=AUTH
    )
    assert switched.status_code == 422
    assert switched.json()["errors"][0]["source"] == "secret"
    kept = (await client.get(PATH, params={"reveal_secret": "true"}, headers=AUTH)).json()
    assert kept["webhook"]["signature_scheme"] == "default"
    assert kept["webhook"]["secret"] == "a-given-secret-0123456789"
    assert len(receiver.requests) == 1
    standard_secret = "whsec_" + "QUJD" * 8  # base64 of 24 bytes
    fresh = await client.put(
        PATH,
        json={"url": receiver.url, "secret": standard_secret, "signature_scheme": "standard"},
        headers=AUTH,
    )
    assert fresh.status_code == 200 and fresh.json()["ping"]["status"] == "succeeded"
    last = receiver.requests[-1]
    assert verify_delivery(standard_secret, last.body, last.headers)
