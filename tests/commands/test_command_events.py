"""`command_changed` reaches webhooks and streams: the webhook body carries the command,
the stream message goes to the sending application only (the real workers' functions,
fed the outbox rows a command wrote)."""

from __future__ import annotations

import orjson

from autoport.kit import outbox
from autoport.streaming import repository as streaming_repository
from autoport.streaming.service import write_messages
from autoport.webhooks.delivery import build_payload
from tests.commands.conftest import Harness


async def test_webhook_body_and_stream_message_of_a_command(harness: Harness) -> None:
    vin = await harness.sandbox_vehicle()
    creds = await harness.application()
    other = await harness.application()
    headers = await harness.fleet_token(creds, [vin])
    await harness.fleet_token(other, [vin])
    await harness.subscribe(creds.app_id, ["command_changed"])
    done = await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="unlocked")

    events = await outbox.claim(
        harness.db, consumer="webhooks", worker_id="t", now_us=harness.clock.now_us()
    )
    mine = [e for e in events if e.event_type == "command_changed"]
    assert [e.payload["command"]["status"] for e in mine] == ["pending", "sent", "executed"]
    body = orjson.loads(
        build_payload(
            event_type="command_changed",
            vin=vin,
            application_id=creds.app_id,
            received_at_us=mine[-1].created_at,
            payload=mine[-1].payload,
        )
    )
    assert body["event"]["type"] == "command_changed"
    assert body["event"]["command"]["id"] == done["id"]
    assert body["event"]["command"]["status"] == "executed"

    async with harness.db.transaction() as conn:
        stream_events = await outbox.take(conn, consumer="streaming", now_us=harness.clock.now_us())
        commands = [e for e in stream_events if e.event_type == "command_changed"]
        latest = await write_messages(conn, commands, {}, now_us=harness.clock.now_us())
    assert list(latest) == [(creds.environment, creds.app_id)]  # not the other application
    rows = await harness.db.fetch_all(
        "SELECT message FROM stream_messages WHERE application_id = :a ORDER BY seq",
        {"a": creds.app_id},
    )
    messages = [orjson.loads(r["message"]) for r in rows]
    assert [m["command"]["status"] for m in messages] == ["pending", "sent", "executed"]
    assert {m["type"] for m in messages} == {"command_changed"}
    assert streaming_repository  # the stream log the SSE and MQTT transports read


async def test_without_a_subscription_only_the_stream_gets_the_changes(harness: Harness) -> None:
    """The webhooks consumer would consume an event its application does not subscribe
    to without a delivery: such rows are not written; the stream still gets every one."""
    vin = await harness.sandbox_vehicle()
    silent, other_events = await harness.application(), await harness.application()
    headers = await harness.fleet_token(silent, [vin])
    other_headers = await harness.fleet_token(other_events, [vin])
    await harness.subscribe(other_events.app_id, ["fleet_clearance_changed"])
    await harness.run(headers, vin, "doors", "lock_unlock_doors", locks_state="unlocked")
    await harness.run(other_headers, vin, "doors", "lock_unlock_doors", locks_state="locked")
    rows = await harness.db.fetch_all(
        "SELECT consumer, application_id FROM outbox WHERE event_type = 'command_changed'"
    )
    assert sorted((r["consumer"], r["application_id"]) for r in rows) == sorted(
        [("streaming", silent.app_id)] * 3 + [("streaming", other_events.app_id)] * 3
    )
