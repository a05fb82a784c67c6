"""The owner portal lists the vehicle commands each application sent under the owner's
grant (issue #21): the page shows the latest ones and a count, access.json all of them.
Only this vehicle's, in this environment, under grants the owner sees (SQLite and
PostgreSQL)."""

from __future__ import annotations

import uuid

import httpx
import orjson
from fastapi import FastAPI

from autoport.apps import service as apps_service
from autoport.catalog.commands import COMMANDS
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.owner import service
from tests.consent.conftest import VIN, ConsentApp, insert_application
from tests.factories import bearer

from .conftest import OWNER, grant_through_consent, sign_in

OTHER_VIN = "SBXTEST0000000002"
LOCK = {"capability": "doors", "command": "lock_unlock_doors"}


async def commanding_app(db: Database, clock: FrozenClock) -> ConsentApp:
    """An application that registered the door command (the consent page grants it)."""
    app = await insert_application(db)
    async with db.transaction() as conn:
        await apps_service.update_application(
            conn,
            environment=Environment.sandbox,
            app_id=app.id,
            now_us=clock.now_us(),
            commands=["doors.lock_unlock_doors"],
        )
    return app


async def send_lock(client: httpx.AsyncClient, token: str, vin: str, state: str) -> str:
    sent = await client.post(
        f"/sandbox/v1/vehicle-commands/autoapi-13/{vin}",
        headers=bearer(token),
        json={**LOCK, "arguments": {"locks_state": state}},
    )
    assert sent.status_code == 202, sent.text
    return str(sent.json()["id"])


async def insert_command(
    db: Database,
    *,
    app: ConsentApp,
    authorization_id: str | None,
    vin: str,
    environment: str,
    now_us: int,
) -> str:
    """A stored command row as the command service writes it (for rows the API cannot
    make: another environment's, a fleet clearance's)."""
    command_id = f"cmd_{uuid.uuid4().hex}"
    await db.execute(
        "INSERT INTO vehicle_commands (id, environment, application_id, authorization_id, "
        "vin, brand, capability, command, arguments, status, request_hash, created_at, "
        "updated_at, deadline_at) VALUES (:id, :environment, :app, :auth, :vin, 'sandbox', "
        "'doors', 'lock_unlock_doors', '{}', 'executed', 'x', :now, :now, :now)",
        {
            "id": command_id,
            "environment": environment,
            "app": app.id,
            "auth": authorization_id,
            "vin": vin,
            "now": now_us,
        },
    )
    return command_id


async def test_commands_sent_under_the_grant_are_in_the_page_and_the_access_record(
    browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    app = await commanding_app(db, clock)
    granted = await grant_through_consent(browser_client, app)
    ids = []
    for state in ("locked", "unlocked") * 6:  # 12: more than the page lists
        command_id = await send_lock(browser_client, granted.access_token, VIN, state)
        # The first finishes (one in flight per vehicle and capability).
        await db.execute(
            "UPDATE vehicle_commands SET status = 'executed', finished_at = :now, "
            "inflight = NULL WHERE id = :id",
            {"id": command_id, "now": clock.now_us()},
        )
        ids.append(command_id)
        clock.advance(1)

    await sign_in(browser_client)
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert page.status_code == 200, page.text
    assert "Commands it sent to the vehicle: 12" in page.text
    assert "The latest 10" in page.text
    listed = page.text.split('class="items sent-commands">')[1].split("</ul>")[0]
    assert listed.count("<li>") == 10
    assert "Lock and unlock the doors" in listed and "done" in listed

    record = orjson.loads((await browser_client.get(f"{OWNER}/vehicles/{VIN}/access.json")).content)
    [grant] = record["grants"]
    assert grant["commands_sent"] == 12
    assert [c["id"] for c in grant["commands"]] == ids[::-1]  # all, newest first
    first = grant["commands"][-1]
    assert first["command"] == "doors.lock_unlock_doors"
    assert first["label"] == "Lock and unlock the doors"
    assert first["status"] == "executed" and first["finished_at"] and first["requested_at"]

    # German: the catalog's German label and the German words around it.
    german = await browser_client.get(f"{OWNER}/vehicles/{VIN}?lang=de-DE")
    assert 'lang="de-DE"' in german.text
    assert "Befehle, die sie an das Fahrzeug gesendet hat: 12" in german.text
    lock = COMMANDS.get("doors", "lock_unlock_doors")
    assert lock is not None and lock.label("de-DE") in german.text
    assert "ausgeführt" in german.text


async def test_other_vehicles_environments_and_fleet_commands_are_not_listed(
    consent_app: FastAPI, browser_client: httpx.AsyncClient, db: Database, clock: FrozenClock
) -> None:
    """Attacks: the same application's command to another vehicle (through the API), and
    stored rows naming this very grant but another vehicle or another environment, and a
    fleet clearance's command to this vehicle: none is the owner's."""
    app = await commanding_app(db, clock)
    mine = await grant_through_consent(browser_client, app)
    theirs = await grant_through_consent(browser_client, app, vin=OTHER_VIN)
    own = await send_lock(browser_client, mine.access_token, VIN, "locked")
    await send_lock(browser_client, theirs.access_token, OTHER_VIN, "locked")
    now = clock.now_us()
    other_vin = await insert_command(
        db, app=app, authorization_id=mine.authorization_id, vin=OTHER_VIN,
        environment="sandbox", now_us=now,
    )  # fmt: skip
    other_env = await insert_command(
        db, app=app, authorization_id=mine.authorization_id, vin=VIN,
        environment="production", now_us=now,
    )  # fmt: skip
    fleet = await insert_command(
        db, app=app, authorization_id=None, vin=VIN, environment="sandbox", now_us=now
    )

    await sign_in(browser_client)
    record = orjson.loads((await browser_client.get(f"{OWNER}/vehicles/{VIN}/access.json")).content)
    listed = {
        grant["authorization_id"]: [c["id"] for c in grant["commands"]]
        for grant in record["grants"]
    }
    assert listed == {mine.authorization_id: [own]}
    page = await browser_client.get(f"{OWNER}/vehicles/{VIN}")
    assert "Commands it sent to the vehicle: 1" in page.text
    for stranger in (other_vin, other_env, fleet):
        assert stranger not in repr(record) and stranger not in page.text

    state = consent_app.state.autoport
    reader = state.database.reader
    views = await service.grants(reader, Environment.sandbox, VIN, now_us=state.clock.now_us())
    [view] = await service.with_commands(reader, Environment.sandbox, VIN, views, latest=None)
    assert [c.id for c in view.sent_commands] == [own] and view.commands_sent == 1
