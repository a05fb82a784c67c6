"""The access read model's verdict on a way to a vehicle (vehicles/access.standings), as
the command worker reads it again before sending: the attacker's cases the hand review
of its uncovered branches found untested (a grant not yet or no longer in force, not
approved, gone; no clearance), on both backends."""

from __future__ import annotations

import uuid

import pytest
from fastapi import FastAPI

from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.vehicles.access import Lost, Standing, Way, standings
from tests.factories import create_app_credentials, create_authorization

VIN = "1HGCM82633A004352"
NOW = 1_800_000_000_000_000
HOUR = 3_600_000_000


@pytest.fixture
def db(app: FastAPI) -> Database:
    database: Database = app.state.autoport.database
    return database


async def _verdict(db: Database, way: Way) -> Standing | Lost:
    return (await standings(db.reader, [way], now_us=NOW))[way]


@pytest.mark.parametrize(
    ("window", "status", "reason"),
    [
        ((NOW + HOUR, None), "approved", "the authorization is valid from"),
        ((NOW - 2 * HOUR, NOW - HOUR), "approved", "the authorization ended at"),
        ((NOW - HOUR, NOW), "approved", "the authorization ended at"),  # ends at NOW
        ((NOW - HOUR, None), "pending", "the authorization is pending"),
        ((NOW - HOUR, None), "revoked", "the owner withdrew the authorization"),
    ],
)
async def test_a_grant_out_of_force_allows_nothing(
    db: Database, window: tuple[int, int | None], status: str, reason: str
) -> None:
    creds = await create_app_credentials(db, now_us=NOW - 3 * HOUR)
    valid_from, valid_until = window
    grant = await create_authorization(
        db,
        creds,
        vin=VIN,
        status=status,
        valid_from_us=valid_from,
        valid_until_us=valid_until,
        now_us=NOW - 3 * HOUR,
    )
    verdict = await _verdict(db, Way(creds.environment, creds.app_id, VIN, grant))
    assert isinstance(verdict, Lost) and verdict.reason.startswith(reason), verdict


async def test_a_grant_in_force_allows_what_it_grants(db: Database) -> None:
    creds = await create_app_credentials(db, now_us=NOW - 3 * HOUR)
    grant = await create_authorization(
        db, creds, vin=VIN, valid_from_us=NOW - HOUR, valid_until_us=NOW + 1, now_us=NOW - HOUR
    )
    verdict = await _verdict(db, Way(creds.environment, creds.app_id, VIN, grant))
    assert isinstance(verdict, Standing), verdict
    assert verdict.properties == frozenset(creds.properties)
    assert verdict.brand == creds.brands[0]


async def test_another_applications_grant_is_no_way_in(db: Database) -> None:
    """A way naming someone else's authorization id (guessed or leaked) finds no row of
    this application: nothing is allowed, and the reason names no other party."""
    owner = await create_app_credentials(db, name="Owner's app", now_us=NOW - HOUR)
    attacker = await create_app_credentials(db, name="Attacker", now_us=NOW - HOUR)
    grant = await create_authorization(db, owner, vin=VIN, now_us=NOW - HOUR)
    stolen = Way(attacker.environment, attacker.app_id, VIN, grant)
    verdict = await _verdict(db, stolen)
    assert verdict == Lost("the authorization no longer exists")


async def test_a_vanished_grant_or_missing_clearance_allows_nothing(db: Database) -> None:
    creds = await create_app_credentials(db, now_us=NOW - HOUR)
    gone = Way(creds.environment, creds.app_id, VIN, str(uuid.uuid4()))
    no_clearance = Way(Environment(creds.environment), creds.app_id, VIN, None)
    verdicts = await standings(db.reader, [gone, no_clearance], now_us=NOW)
    assert verdicts[gone] == Lost("the authorization no longer exists")
    assert verdicts[no_clearance] == Lost("the application has no fleet clearance for this vehicle")
