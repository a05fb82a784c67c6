"""`autoport webhooks set|show|deliveries|redeliver` as a real process, against the
test database and a real receiver."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from autoport.config import Settings
from autoport.kit.db import Database
from autoport.webhooks import verify, verify_delivery

from .conftest import APP_ID, Receiver
from .workers import worker_env


async def cli(settings: Settings, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "autoport",
        "webhooks",
        *args,
        env=worker_env(settings),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def cli_json(settings: Settings, *args: str) -> Any:
    code, out, err = await cli(settings, *args, "--json")
    assert code == 0, err
    return json.loads(out)


async def test_set_show_deliveries_redeliver(
    settings: Settings, applications: Database, receiver: Receiver
) -> None:
    saved = await cli_json(
        settings, "set", APP_ID, "--url", receiver.url, "--event", "fleet_clearance_changed"
    )
    secret = saved["webhook"]["secret"]
    assert saved["ping"]["status"] == "succeeded"
    assert saved["webhook"]["events"] == ["fleet_clearance_changed"]
    [ping] = receiver.requests
    assert verify(secret, ping.body, ping.headers["X-Svc-Signature-256"])

    shown = await cli_json(settings, "show", APP_ID)
    assert shown["url"] == receiver.url and "secret" not in shown
    assert (await cli_json(settings, "show", APP_ID, "--reveal-secret"))["secret"] == secret

    log = await cli_json(settings, "deliveries", APP_ID)
    assert [d["id"] for d in log] == [saved["ping"]["delivery_id"]]
    assert log[0]["response"]["status"] == 200

    code, out, _ = await cli(settings, "deliveries", APP_ID)
    assert code == 0 and saved["ping"]["delivery_id"] in out and "succeeded" in out

    queued = await cli_json(settings, "redeliver", APP_ID, saved["ping"]["delivery_id"])
    assert queued["status"] == "pending"
    assert queued["id"] == saved["ping"]["delivery_id"]


async def test_set_the_signature_scheme(
    settings: Settings, applications: Database, receiver: Receiver
) -> None:
    code, out, err = await cli(
        settings, "set", APP_ID, "--url", receiver.url, "--signature-scheme", "standard"
    )
    assert code == 0, err
    assert "signature scheme: standard" in out
    secret = next(line for line in out.splitlines() if line.startswith("secret: "))[8:]
    [ping] = receiver.requests
    assert verify_delivery(secret, ping.body, ping.headers)
    assert "webhook-signature" in ping.headers
    shown = await cli_json(settings, "show", APP_ID)
    assert shown["signature_scheme"] == "standard"
    # Kept when not given.
    again = await cli_json(settings, "set", APP_ID, "--url", receiver.url)
    assert again["webhook"]["signature_scheme"] == "standard"


async def test_cli_errors_are_clear(
    settings: Settings, applications: Database, receiver: Receiver
) -> None:
    code, _, err = await cli(settings, "set", "000000000000000000000000", "--url", receiver.url)
    assert code == 4 and "no application" in err
    code, _, err = await cli(settings, "set", APP_ID, "--url", "https://10.0.0.1/")
    assert code == 2 and "private" in err
    code, _, err = await cli(settings, "set", APP_ID, "--url", "https://a..b/hook")
    assert code == 2 and "host name" in err and "Traceback" not in err
    code, _, err = await cli(settings, "set", APP_ID, "--url", receiver.url, "--event", "nope")
    assert code == 2 and "--event" in err
    code, _, err = await cli(
        settings, "set", APP_ID, "--url", receiver.url, "--signature-scheme", "svix"
    )
    assert code == 2 and "signature_scheme" in err and "standard" in err
    code, _, err = await cli(settings, "show", APP_ID)
    assert code == 4 and "has no webhook" in err
    assert receiver.requests == []
