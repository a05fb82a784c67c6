"""What the console draws of a sandbox vehicle (autoport.sandbox.charts): its track and
series come from the stored history of what the simulator delivered; and which console
account sees which vehicle."""

from __future__ import annotations

import httpx
import pytest

from autoport.kit.clock import FrozenClock
from autoport.kit.db import Database
from autoport.kit.errors import ApiError
from autoport.sandbox import charts, service
from autoport.sandbox.charts import track_of
from autoport.sandbox.physics import Powertrain, Scenario
from autoport.sandbox.service import NewVehicle

from .conftest import RecordingIngest

BASE = "/sandbox/admin/v1/sandbox"
VIN = "SBX00000000000042"


def test_the_track_fits_the_box_north_up_and_keeps_its_shape() -> None:
    # A 1 km square walked north, then east: equal sides on screen.
    track = track_of([(48.0, 11.0), (48.009, 11.0), (48.009, 11.0134)], width=200, height=200)
    assert track is not None and track.count == 3
    (x0, y0), (x1, y1), (x2, y2) = (
        tuple(map(float, p.split(","))) for p in track.points.split(" ")
    )
    assert x0 == pytest.approx(x1) and y1 < y0  # north is up
    assert y2 == pytest.approx(y1) and x2 > x1
    assert abs(x2 - x1) == pytest.approx(abs(y1 - y0), rel=0.02)
    for x, y in ((x0, y0), (x1, y1), (x2, y2)):
        assert 0 <= x <= 200 and 0 <= y <= 200
    parked = track_of([(48.0, 11.0), (48.0, 11.0)], width=200, height=100)
    assert parked is not None and parked.start == parked.end == (100.0, 50.0)
    assert track_of([]) is None


async def test_series_and_track_follow_what_the_car_delivered(
    admin: httpx.AsyncClient, db: Database, clock: FrozenClock, ingest: RecordingIngest
) -> None:
    created = await admin.post(
        f"{BASE}/vehicles",
        json={
            "vin": VIN,
            "powertrain": "combustion",
            "profile": "full",
            "scenario": "driving",
            "seed": 5,
        },
    )
    assert created.status_code == 201, created.text
    for _ in range(4):
        clock.advance(30)
        stepped = await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 30})
        assert stepped.status_code == 200
    figures = (await charts.series(db, VIN)).points
    assert figures["battery"] == []  # a combustion car has no traction battery
    assert len(figures["fuel"]) == len(figures["odometer"]) == len(figures["speed"]) == 5
    odometer = [value for _, value in figures["odometer"]]
    assert odometer == sorted(odometer) and odometer[-1] > odometer[0]
    assert odometer[-1] == ingest.latest(VIN, "diagnostics.odometer")["data"]["value"]
    fuel = [value for _, value in figures["fuel"]]
    assert 0 < fuel[-1] < fuel[0] <= 100  # percent, burning
    times = [t for t, _ in figures["speed"]]
    assert times == sorted(times)
    track = await charts.track(db, VIN)
    assert track is not None and track.count == 5 and track.start != track.end
    # Only the newest points, oldest first.
    newest = await charts.series(db, VIN, limit=2)
    assert [v for _, v in newest.points["odometer"]] == odometer[-2:]
    # A poll after the newest row read gets nothing, then exactly what came since, even
    # a point with the same timestamp as an earlier one (a step "now" keeps the anchor).
    assert (await charts.series(db, VIN, after_id=newest.last_id)).points["odometer"] == []
    stepped = await admin.post(f"{BASE}/vehicles/{VIN}/step", json={"seconds": 30})
    assert stepped.status_code == 200
    since = await charts.series(db, VIN, after_id=newest.last_id)
    assert len(since.points["odometer"]) == 1 and since.last_id > newest.last_id


async def test_a_console_account_sees_only_its_own_vehicles(
    admin: httpx.AsyncClient, db: Database, clock: FrozenClock, ingest: RecordingIngest
) -> None:
    async def made(vin: str, account_id: str | None) -> None:
        await service.create_vehicle(
            db,
            ingest=ingest,
            spec=NewVehicle(
                vin=vin,
                powertrain=Powertrain.electric,
                scenario=Scenario.parked,
                account_id=account_id,
            ),
            now_us=clock.now_us(),
        )

    await made("SBX00000000000101", "acct-one")
    await made("SBX00000000000102", "acct-two")
    await made("SBX00000000000103", None)  # the operator's
    mine = await service.list_account_vehicles(db.reader, "acct-one")
    assert [v.vin for v in mine] == ["SBX00000000000101"]
    assert len(await service.list_account_vehicles(db.reader, None)) == 3
    assert (
        await service.get_account_vehicle(db.reader, "SBX00000000000101", "acct-one")
    ).account_id == "acct-one"
    for vin in ("SBX00000000000102", "SBX00000000000103"):
        with pytest.raises(ApiError) as refused:
            await service.get_account_vehicle(db.reader, vin, "acct-one")
        assert refused.value.status == 404
    # The operator reaches every vehicle; the admin API keeps working on console ones.
    assert (await service.get_account_vehicle(db.reader, "SBX00000000000102", None)).vin
    shown = await admin.get(f"{BASE}/vehicles/SBX00000000000101")
    assert shown.status_code == 200
    # A save by the emulator keeps the owner.
    stepped = await admin.post(f"{BASE}/vehicles/SBX00000000000101/step", json={"seconds": 5})
    assert stepped.status_code == 200
    assert (await service.get_vehicle(db.reader, "SBX00000000000101")).account_id == "acct-one"
