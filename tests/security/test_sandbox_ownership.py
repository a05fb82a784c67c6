"""A sandbox car a console user created belongs to that account (docs/security.md,
"Sandbox cars belong to their account"): another account's sandbox application cleared
it (approved in 3 s), read it, unlocked it and got an instant consent for it, although
the console says the car is the account's. Now clearance, consent, pull, history,
streams and commands all ask `autoport.vehicles.access` and refuse. The sandbox owner
portal let anyone sign in with such a car's VIN (instant) and read its data, and the
eligibility check answered other accounts from its settings: both refuse too. Both
backends; each test was seen failing with its check removed."""

# ruff: noqa: F811 - the commands harness's fixtures are imported, then used by name

from __future__ import annotations

from typing import Any

import httpx

from autoport.brands.registry import registry_of
from autoport.commands import tasks
from autoport.fleet.tasks import process_due
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import MICROS
from autoport.proof.service import current_vehicle_code
from autoport.sandbox import service as sandbox
from autoport.sandbox.service import NewVehicle
from autoport.vehicles.access import readers_of
from tests.commands.conftest import (  # noqa: F401 - pytest fixtures, used by name
    SANDBOX,
    Harness,
    command_settings,
    harness,
    new_vin,
)
from tests.consent.conftest import ConsentApp
from tests.consent.flow import post, start
from tests.factories import AppCredentials, bearer, client_credentials_token
from tests.owner.conftest import OWNER, csrf_of
from tests.owner.conftest import sign_in as owner_sign_in

UNLOCK = {"locks_state": "unlocked"}
FORBIDDEN = "this sandbox vehicle belongs to another account"


async def console_car(harness: Harness, owner: AppCredentials, vin: str | None = None) -> str:
    """A car a developer of `owner`'s account created in the console."""
    vehicle = await sandbox.create_vehicle(
        harness.db,
        ingest=ingest_vehicle_data,
        spec=NewVehicle(
            vin=vin or new_vin(), profile="full", running=False, account_id=owner.account_id
        ),
        now_us=harness.clock.now_us(),
    )
    return vehicle.vin


async def fleet_clearance(harness: Harness, creds: AppCredentials, vin: str) -> str:
    """Ask for the clearance over HTTP and let the fleet worker (the sandbox carmaker)
    decide it after its delay; the clearance's status."""
    headers = bearer(await client_credentials_token(harness.client, creds))
    asked = await harness.client.post(
        "/sandbox/v1/fleets/vehicles",
        json={"vehicles": [{"vin": vin, "brand": "sandbox"}]},
        headers=headers,
    )
    assert asked.status_code == 200, asked.text
    harness.clock.advance(4)
    await process_due(harness.db, registry_of(harness.state), clock=harness.clock)
    got = await harness.client.get(f"/sandbox/v1/fleets/vehicles/{vin}", headers=headers)
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return f"{body['status']}: {body['changelog'][-1].get('reason', '')}"


async def test_another_account_cannot_clear_a_console_car(harness: Harness) -> None:
    owner, stranger = await harness.application(), await harness.application()
    assert owner.account_id != stranger.account_id
    vin = await console_car(harness, owner)
    assert await fleet_clearance(harness, stranger, vin) == (
        "rejected: the vehicle is not eligible for data access"
    )
    assert (await fleet_clearance(harness, owner, vin)).startswith("approved")
    # A car the operator made (no account) stays anyone's.
    operator_car = await harness.sandbox_vehicle()
    assert (await fleet_clearance(harness, stranger, operator_car)).startswith("approved")


async def test_another_account_cannot_get_an_instant_consent(harness: Harness) -> None:
    owner, stranger = await harness.application(), await harness.application()
    vin = await console_car(harness, owner)
    for creds, refused in ((stranger, True), (owner, False)):
        app = ConsentApp(
            creds.app_id, creds.client_id, SANDBOX, creds.redirect_uri,
            creds.properties, creds.client_secret,
        )  # fmt: skip
        harness.client.cookies.clear()
        started = await start(harness.client, app, brand="sandbox", vin=vin)
        assert started.status_code == 303, started.text
        assert (await post(harness.client, "brand", brand="sandbox")).status_code == 303
        answer = await post(harness.client, "vehicle", vin=vin)
        if refused:
            assert answer.status_code in (400, 422), answer.text
            assert "cannot be connected to this application" in answer.text
            assert "account" not in answer.text.lower()  # whose it is is not said
        else:
            assert answer.status_code == 303, answer.text
    assert await harness.db.fetch_value("SELECT count(*) FROM authorizations") == 0


async def test_a_grant_or_clearance_of_another_account_reads_and_commands_nothing(
    harness: Harness,
) -> None:
    """Access obtained before (a grant or clearance from before this rule, or for a VIN
    a console user took for a car later) reaches nothing: pull, history, streams and
    commands, including a command accepted before the car was created."""
    owner, stranger = await harness.application(), await harness.application()
    vin = new_vin()
    grant_headers, _ = await harness.vehicle_token(stranger, vin)
    fleet_headers = await harness.fleet_token(stranger, [vin])
    pending = await harness.send(grant_headers, vin, "doors", "lock_unlock_doors", UNLOCK)
    assert pending.status_code == 202, pending.text
    await console_car(harness, owner, vin)  # the VIN becomes the owner account's car

    for headers in (grant_headers, fleet_headers):
        read = await harness.client.get(
            f"/sandbox/v1/vehicle-data/autoapi-13/{vin}", headers=headers
        )
        assert read.status_code == 403, read.text
        assert FORBIDDEN in read.text
        history = await harness.client.get(
            f"/sandbox/v1/vehicle-data/autoapi-13/{vin}/history",
            params={"property": "doors.locks_state"},
            headers=headers,
        )
        assert history.status_code == 403, history.text
        sent = await harness.send(
            headers, vin, "honk_horn_flash_lights", "honk_flash", {"flash_times": 1}
        )
        assert sent.status_code == 403, sent.text
    assert await tasks.claim(harness.state, "w", 10) == []
    row = await harness.db.fetch_one(
        "SELECT status, failure_description FROM vehicle_commands WHERE id = :id",
        {"id": pending.json()["id"]},
    )
    assert row is not None and row["status"] == "cancelled"
    assert FORBIDDEN in row["failure_description"]
    readers = await readers_of(
        harness.db.reader,
        environment=SANDBOX,
        vin=vin,
        brand="sandbox",
        now_us=harness.clock.now_us() + MICROS,
    )
    assert stranger.app_id not in {reader.application_id for reader in readers}
    # The owner's own application reads it.
    own = await harness.fleet_token(owner, [vin])
    assert (
        await harness.client.get(f"/sandbox/v1/vehicle-data/autoapi-13/{vin}", headers=own)
    ).status_code in (200, 422)


async def test_another_account_gets_no_eligibility_from_a_console_car(harness: Harness) -> None:
    """The sandbox carmaker answered another account's application from the car's own
    settings (here: connectivity deactivated, not eligible to clear): it answers as for
    an ineligible car, as the fleet worker rejects its clearance."""
    owner, stranger = await harness.application(), await harness.application()
    vin = await console_car(harness, owner)
    await harness.db.execute(
        "UPDATE sandbox_vehicles SET connectivity_status = 'deactivated' WHERE vin = :vin",
        {"vin": vin},
    )

    async def eligibility(creds: AppCredentials) -> dict[str, Any]:
        headers = bearer(await client_credentials_token(harness.client, creds))
        answer = await harness.client.post(
            "/sandbox/v1/eligibility", json={"vin": vin, "brand": "sandbox"}, headers=headers
        )
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    assert await eligibility(stranger) == {
        "vin": vin,
        "eligible": False,
        "data_delivery": [],
        "connectivity_status": "unknown",
    }
    mine = await eligibility(owner)
    assert mine["eligible"] is True and mine["connectivity_status"] == "deactivated"


async def _owner_sign_in(harness: Harness, vin: str) -> httpx.Response:
    harness.client.cookies.clear()
    return await owner_sign_in(harness.client, vin=vin)


async def test_the_owner_portal_signs_in_to_a_console_car_only_with_its_code(
    harness: Harness,
) -> None:
    """Anyone signed in to the sandbox owner portal with a console car's VIN (instant:
    the VIN's word) and read and downloaded its data. Now the proof is the code on the
    car's console page, which only its account sees; operator cars stay instant."""
    owner = await harness.application()
    vin = await console_car(harness, owner)
    attempt = await _owner_sign_in(harness, vin)
    assert attempt.status_code == 303 and attempt.headers["location"] == f"{OWNER}/verify"
    for path in ("", "/data.json", "/data.csv", "/access.json"):
        got = await harness.client.get(f"{OWNER}/vehicles/{vin}{path}")
        assert got.status_code == 401, (path, got.status_code)
    page = await harness.client.get(f"{OWNER}/verify")
    assert "Code shown in your vehicle" in page.text and "page in the console" in page.text
    # The account's people read the code on the car's console page and sign in.
    code = await current_vehicle_code(
        harness.db.reader, environment=SANDBOX, vin=vin, now_us=harness.clock.now_us()
    )
    assert code is not None
    signed = await harness.client.post(
        f"{OWNER}/verify", data={"csrf_token": csrf_of(page), "action": "code", "code": code}
    )
    assert signed.status_code == 303 and signed.headers["location"] == f"{OWNER}/vehicles"
    assert (await harness.client.get(f"{OWNER}/vehicles/{vin}/data.json")).status_code == 200
    # A car the operator made (no account) signs in at once, as before.
    operator_car = await harness.sandbox_vehicle()
    instant = await _owner_sign_in(harness, operator_car)
    assert instant.headers["location"] == f"{OWNER}/vehicles"


async def test_an_instant_sign_in_from_before_the_car_reaches_nothing_of_it(
    harness: Harness,
) -> None:
    """A sign-in proven (instant) before the VIN became a console user's car reaches
    nothing of it afterwards (the same rule of `vehicles_of` keeps the simulated carmaker
    login's other vehicles from including one)."""
    owner = await harness.application()
    vin = new_vin()
    assert (await _owner_sign_in(harness, vin)).headers["location"] == f"{OWNER}/vehicles"
    await console_car(harness, owner, vin)
    for path in ("", "/data.json", "/data.csv"):
        got = await harness.client.get(f"{OWNER}/vehicles/{vin}{path}")
        assert got.status_code == 404, (path, got.status_code)
    listing = await harness.client.get(f"{OWNER}/vehicles")
    assert vin not in listing.text
