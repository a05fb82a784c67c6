"""The console's bulk add (a pasted VIN list or an uploaded CSV): one result per line,
every vehicle checked by the same rules as POST /v1/fleets/vehicles, on both backends."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from autoport.apps import service as apps_service
from autoport.fleet import repository, service
from autoport.fleet.filters import VehicleFilter
from autoport.fleet.service import application_caller, parse_vehicle_rows
from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from tests.factories import create_app_credentials

VINS = ["SBX00000000000001", "SBX00000000000002", "SBX00000000000003"]


async def _caller(db: Database, now_us: int, *, brands: tuple[str, ...] = ("sandbox",)):
    creds = await create_app_credentials(
        db, environment=Environment.sandbox, brands=brands, now_us=now_us
    )
    async with db.transaction() as conn:
        application = await apps_service.get_application(
            conn, environment=Environment.sandbox, app_id=creds.app_id
        )
    return application_caller(application)


def test_a_vin_list_and_a_csv_with_a_header_are_read_line_by_line() -> None:
    rows = parse_vehicle_rows(f"{VINS[0]}\n\n# a comment\n{VINS[1]},bmw\n", default_brand="sandbox")
    assert [(r.row, r.item) for r in rows] == [
        (1, {"vin": VINS[0], "brand": "sandbox"}),
        (4, {"vin": VINS[1], "brand": "bmw"}),
    ]
    csv_text = f"VIN,brand,depot\n{VINS[0]},sandbox,north\n{VINS[1]},,\n{VINS[2]},x,y,z\n"
    rows = parse_vehicle_rows(csv_text, default_brand="sandbox")
    assert rows[0].item == {"vin": VINS[0], "brand": "sandbox", "tags": {"depot": "north"}}
    assert rows[1].item == {"vin": VINS[1], "brand": "sandbox"}  # empty cells: no tag
    assert rows[2].item is None and rows[2].problem == "4 cells but the header names 3"
    bad = parse_vehicle_rows("A,B,C\n", default_brand=None)
    assert bad[0].item is None and "VIN or VIN,brand" in (bad[0].problem or "")


async def test_each_line_gets_its_result_and_good_lines_are_added(
    app: FastAPI, clock: FrozenClock
) -> None:
    db: Database = app.state.autoport.database
    caller = await _caller(db, clock.now_us())
    text = (
        "vin,brand,depot\n"
        f"{VINS[0]},sandbox,north\n"
        "NOT-A-VIN,sandbox,\n"
        f"{VINS[1]},tesla,\n"  # not activated for the application
        f"{VINS[2]},,south\n"  # the form's brand
        f"{VINS[0]},sandbox,\n"  # again: already registered
        f"{VINS[1]},a,b,c\n"
    )
    async with db.transaction() as conn:
        results = await service.add_vehicle_rows(
            conn,
            caller=caller,
            text=text,
            default_brand="sandbox",
            now_us=clock.now_us(),
            limit=100,
        )
    assert [(r.row, r.vin, r.status) for r in results] == [
        (2, VINS[0], "pending"),
        (3, "NOT-A-VIN", "error"),
        (4, VINS[1], "error"),
        (5, VINS[2], "pending"),
        (6, VINS[0], "pending"),
        (7, None, "error"),
    ]
    assert results[1].description is not None and results[1].description.startswith("vin: ")
    assert results[2].description is not None and results[2].description.startswith("brand: ")
    assert results[4].description == "already registered, status pending"
    page = await service.list_vehicles(
        db.reader,
        caller=caller,
        vehicle_filter=VehicleFilter(),
        limit=None,
        cursor=None,
        cursor_key=app.state.autoport.token_key,
    )
    assert {v["vin"]: v["tags"] for v in page.vehicles} == {
        VINS[0]: {"depot": "north"},
        VINS[2]: {"depot": "south"},
    }


async def test_too_many_lines_or_none_is_422_naming_vehicles_and_adds_nothing(
    app: FastAPI, clock: FrozenClock
) -> None:
    db: Database = app.state.autoport.database
    caller = await _caller(db, clock.now_us())
    for text in ("\n".join(VINS), "\n# only a comment\n"):
        with pytest.raises(ApiError) as raised:
            async with db.transaction() as conn:
                await service.add_vehicle_rows(
                    conn,
                    caller=caller,
                    text=text,
                    default_brand="sandbox",
                    now_us=clock.now_us(),
                    limit=2,
                )
        assert raised.value.status == 422
        assert raised.value.source == "vehicles"
    for vin in VINS:
        key = repository.VehicleKey(Environment.sandbox, caller.application_id, vin)
        assert await repository.get(db.reader, key) is None


async def test_the_caller_acts_for_its_application_only(app: FastAPI, clock: FrozenClock) -> None:
    """Vehicles added for one application are not in another one's fleet."""
    db: Database = app.state.autoport.database
    one = await _caller(db, clock.now_us())
    other = await _caller(db, clock.now_us())
    async with db.transaction() as conn:
        await service.add_vehicle_rows(
            conn, caller=one, text=VINS[0], default_brand="sandbox", now_us=clock.now_us(), limit=10
        )
    page = await service.list_vehicles(
        db.reader,
        caller=other,
        vehicle_filter=VehicleFilter(),
        limit=None,
        cursor=None,
        cursor_key=app.state.autoport.token_key,
    )
    assert page.vehicles == []
