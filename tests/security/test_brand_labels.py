"""A provider speaks only for its own cars (docs/security.md, "Fleet clearance and
brands"): it cannot relabel a vehicle another provider feeds, in either direction, and a
brand the VIN's manufacturer code contradicts is refused; shared maker codes of
badge-engineered cars allow every brand built under them; a VIN re-registered under
another brand is the operator's to rebrand, which starts a new document. Both backends;
each attack test was seen failing with its check removed (ingestion.service
`relabel_problem`, the maker-code check of `ingest_vehicle_data`)."""

# ruff: noqa: F811 - the clearance tests' settings fixture is imported, then used by name

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from fastapi import FastAPI
from typer.testing import CliRunner

from autoport.app import create_app
from autoport.catalog.brands import MakerCodes
from autoport.config import Settings
from autoport.history import repository as history_repository
from autoport.history import service as history
from autoport.ingestion.cli import vehicles_app
from autoport.ingestion.service import rebrand_vehicle
from autoport.kit.clock import FrozenClock, to_iso
from autoport.kit.errors import ApiError
from tests.cli.datadir import initialised
from tests.factories import bearer, client_credentials_token
from tests.security.test_clearance import (
    PROD,
    UNMARKED_VIN,
    application,
    clear,
    provider,
    pull,
    settings,  # noqa: F401 - the admin token, used by name
    state_of,
)

FORD_VIN = "1FA6P8CF5H5100001"  # WMI 1FA: Ford
BMW_VIN = "WBA3A5C50CF256789"  # WMI WBA: BMW
GR86_VIN = "JF1ZNBB10P9700001"  # WMI JF1: Subaru, which builds the Toyota GR86


def point(clock: FrozenClock, level: float, latitude: float = 48.1) -> dict[str, Any]:
    now = to_iso(clock.now_us())
    return {
        "charging": {"battery_level": {"data": level, "timestamp": now}},
        "vehicle_location": {
            "coordinates": {"data": {"latitude": latitude, "longitude": 11.5}, "timestamp": now}
        },
    }


async def push(
    client: httpx.AsyncClient, secret: str, vin: str, brand: str | None, data: dict[str, Any]
) -> httpx.Response:
    body = {"vin": vin, **data} if brand is None else {"vin": vin, "brand": brand, **data}
    return await client.post("/v1/ingest", json=body, headers=bearer(secret))


async def stored(app: FastAPI, vin: str) -> tuple[str, dict[str, Any]] | None:
    row = await state_of(app).database.fetch_one(
        "SELECT brand, document FROM vehicles WHERE environment = 'production' AND vin = :vin",
        {"vin": vin},
    )
    return None if row is None else (str(row["brand"]), json.loads(row["document"]))


async def cleared_reader(
    app: FastAPI, client: httpx.AsyncClient, brand: str, vin: str, feed: str
) -> str:
    """An application of `brand` whose clearance of `vin` the brand's own feed approved;
    its client_credentials token."""
    creds = await application(app, [brand])
    token = await client_credentials_token(client, creds)
    assert (await clear(client, token, vin, brand))["status"] == "pending"
    approved = await client.post(
        f"/v1/ingest/clearances/{creds.app_id}/{vin}/approve", headers=bearer(feed)
    )
    assert approved.status_code == 200, approved.text
    return token


async def test_a_provider_cannot_relabel_a_car_another_provider_feeds(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """The audit's attack: a ford provider pushed one point for a VIN a bmw provider
    feeds (a maker code the table does not know); the vehicle became `ford` with the
    bmw provider's document and history, and a ford application read its location."""
    bmw_feed, ford_feed = await provider(app, ["bmw"]), await provider(app, ["ford"])
    fed = await push(client, bmw_feed, UNMARKED_VIN, "bmw", point(clock, 0.5))
    assert fed.status_code == 200, fed.text
    before = await stored(app, UNMARKED_VIN)
    ford_app = await cleared_reader(app, client, "ford", UNMARKED_VIN, ford_feed)

    clock.advance(1)
    attack = await push(client, ford_feed, UNMARKED_VIN, "ford", point(clock, 0.9, 52.5))
    assert attack.status_code == 409, attack.text
    error = attack.json()["errors"][0]
    assert error["source"] == "brand"
    assert "stored for the brand bmw" in error["detail"]
    assert "autoport vehicles rebrand" in error["detail"]
    assert await stored(app, UNMARKED_VIN) == before  # nothing of the push was stored
    read = await pull(client, ford_app, UNMARKED_VIN)
    assert read.status_code == 403, read.text
    assert "vehicle_location" not in read.text
    # Without a brand the ford feed's push is its brand's too: refused alike.
    unlabelled = await push(client, ford_feed, UNMARKED_VIN, None, point(clock, 0.9))
    assert unlabelled.status_code == 409


async def test_a_provider_cannot_relabel_the_other_way_round(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """The audit's reverse attack: a bmw provider relabelled a Ford and the ford
    application's reads turned to 403. A Ford VIN's maker code refuses bmw (422 naming
    the maker); where the code is unknown, the stored brand refuses it (409)."""
    bmw_feed, ford_feed = await provider(app, ["bmw"]), await provider(app, ["ford"])
    for vin in (FORD_VIN, UNMARKED_VIN):
        assert (await push(client, ford_feed, vin, "ford", point(clock, 0.5))).status_code == 200
    ford_app = await cleared_reader(app, client, "ford", FORD_VIN, ford_feed)
    clock.advance(1)

    by_maker = await push(client, bmw_feed, FORD_VIN, "bmw", point(clock, 0.1))
    assert by_maker.status_code == 422, by_maker.text
    error = by_maker.json()["errors"][0]
    assert error["source"] == "brand"
    assert "manufacturer code 1FA belongs to ford" in error["detail"]
    by_store = await push(client, bmw_feed, UNMARKED_VIN, "bmw", point(clock, 0.1))
    assert by_store.status_code == 409, by_store.text

    assert (await stored(app, FORD_VIN) or ("",))[0] == "ford"
    assert (await stored(app, UNMARKED_VIN) or ("",))[0] == "ford"
    read = await pull(client, ford_app, FORD_VIN)
    assert read.status_code == 200, read.text
    assert read.json()["charging"]["battery_level"]["data"] == 0.5


async def test_a_batch_keeps_its_good_vehicles_and_names_the_refused_one(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """Per vehicle: the relabel attempt is a rejection beside accepted vehicles (200)."""
    bmw_feed, ford_feed = await provider(app, ["bmw"]), await provider(app, ["ford"])
    assert (await push(client, bmw_feed, UNMARKED_VIN, "bmw", point(clock, 0.5))).status_code == 200
    body = {
        "vehicles": [
            {"vin": UNMARKED_VIN, "brand": "ford", **point(clock, 0.9)},
            {"vin": FORD_VIN, "brand": "ford", **point(clock, 0.7)},
        ]
    }
    answer = await client.post("/v1/ingest", json=body, headers=bearer(ford_feed))
    assert answer.status_code == 200, answer.text
    first, second = answer.json()["vehicles"]
    assert first["rejected"][0]["source"] == "vehicles[0].brand"
    assert second["accepted"]
    assert (await stored(app, UNMARKED_VIN) or ("",))[0] == "bmw"


async def test_a_provider_of_both_brands_moves_a_car_between_them(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """The one relabel a push may do: between brands its sender speaks for both of."""
    group_feed = await provider(app, ["bmw", "mini"])
    assert (await push(client, group_feed, BMW_VIN, "bmw", point(clock, 0.5))).status_code == 200
    clock.advance(1)
    moved = await push(client, group_feed, BMW_VIN, "mini", point(clock, 0.6))
    assert moved.status_code == 200, moved.text
    assert (await stored(app, BMW_VIN) or ("",))[0] == "mini"


async def test_shared_maker_codes_allow_badge_engineered_cars(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """Subaru's JF1 carries the Toyota GR86: `toyota` is accepted for it in fleet
    clearance and eligibility (and `subaru` still is), while a brand no maker of the
    code builds is still refused. The original's own example, a BMW VIN named
    mercedes-benz, stays refused."""
    toyota = await application(app, ["toyota", "subaru", "mercedes_benz", "ford"])
    token = await client_credentials_token(client, toyota)
    assert (await clear(client, token, GR86_VIN, "toyota"))["status"] == "pending"
    eligible = await client.post(
        "/v1/eligibility", json={"vin": GR86_VIN, "brand": "toyota"}, headers=bearer(token)
    )
    assert eligible.status_code == 200, eligible.text
    refused = await clear(client, token, GR86_VIN, "ford")
    assert refused["status"] == "error"
    assert "JF1 belongs to subaru, toyota, not ford" in refused["description"]
    original = await client.post(
        "/v1/eligibility", json={"vin": BMW_VIN, "brand": "mercedes-benz"}, headers=bearer(token)
    )
    assert original.status_code == 422
    assert "WBA belongs to bmw, mini" in original.json()["errors"][0]["detail"]
    toyota_feed = await provider(app, ["toyota"])
    assert (
        await push(client, toyota_feed, GR86_VIN, "toyota", point(clock, 0.5))
    ).status_code == 200


async def test_an_operator_extends_the_maker_codes(settings: Settings, clock: FrozenClock) -> None:
    """`maker_codes` adds brands to a known code and makes an unknown code known with
    only its brands (JC1: the Fiat 124 Spider, built by Mazda)."""
    extended = settings.model_copy(
        update={"maker_codes": {"JC1": ["mazda", "fiat", "abarth"], "WBA": ["toyota"]}}
    )
    app = create_app(extended, clock=clock, run_background=False)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8080"
        ) as client,
    ):
        creds = await application(app, ["fiat", "ford", "toyota"])
        token = await client_credentials_token(client, creds)
        assert (await clear(client, token, "JC1NFAEK0H0100001", "fiat"))["status"] == "pending"
        refused = await clear(client, token, "JC1NFAEK0H0100002", "ford")
        assert refused["status"] == "error"
        assert "JC1 belongs to abarth, fiat, mazda, not ford" in refused["description"]
        assert (await clear(client, token, BMW_VIN, "toyota"))["status"] == "pending"


def test_the_setting_is_checked() -> None:
    for wrong, why in (
        ({"JC": ["fiat"]}, "first 3 characters"),
        ({"JO1": ["fiat"]}, "first 3 characters"),
        ({"JC1": ["fiatt"]}, "unknown brand"),
        ({"JC1": ["sandbox"]}, "unknown brand"),
        ({"JC1": "fiat"}, "valid list"),
    ):
        with pytest.raises(ValueError, match=why):
            Settings(maker_codes=wrong)
    assert Settings(maker_codes={"jc1": ["Fiat", "abarth"]}).maker_codes == {
        "JC1": ["abarth", "fiat"]
    }
    assert MakerCodes({"JC1": ["fiat"]}).problem("JC1NFAEK0H0100001", "fiat") is None


# ------------------------------------------------------- the operator rebrands a VIN


async def test_the_operator_rebrands_a_re_registered_vin_into_a_new_document(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """A legitimate change of brand: the old brand's data and history are not carried
    to the new brand, the old provider can no longer push for it, the new one can."""
    bmw_feed, ford_feed = await provider(app, ["bmw"]), await provider(app, ["ford"])
    assert (await push(client, bmw_feed, UNMARKED_VIN, "bmw", point(clock, 0.5))).status_code == 200
    db = state_of(app).database
    # Its history both sealed into a chunk and hot.
    for series in await history_repository.list_series_of_vehicle(
        db.reader, environment="production", vin=UNMARKED_VIN
    ):
        await history.seal_series(db, int(series["id"]), before=history.FAR_FUTURE, target=50)
    assert await db.fetch_value("SELECT count(*) FROM history_chunks") == 2
    clock.advance(1)
    assert (await push(client, bmw_feed, UNMARKED_VIN, "bmw", point(clock, 0.6))).status_code == 200
    bmw_app = await cleared_reader(app, client, "bmw", UNMARKED_VIN, bmw_feed)
    async with db.transaction() as conn:
        done = await rebrand_vehicle(
            conn, environment=PROD, vin=UNMARKED_VIN, brand="Ford", now_us=clock.now_us()
        )
    assert (done.previous, done.brand, done.history_deleted) == ("bmw", "ford", 4)
    assert await stored(app, UNMARKED_VIN) == ("ford", {})
    for table in ("history_hot", "history_chunks"):
        assert await db.fetch_value(f"SELECT count(*) FROM {table}") == 0  # noqa: S608
    assert not await history_repository.list_series_of_vehicle(
        db.reader, environment="production", vin=UNMARKED_VIN
    )
    assert (await pull(client, bmw_app, UNMARKED_VIN)).status_code == 403
    clock.advance(1)
    old = await push(client, bmw_feed, UNMARKED_VIN, "bmw", point(clock, 0.4))
    assert old.status_code == 409, old.text
    new = await push(client, ford_feed, UNMARKED_VIN, "ford", point(clock, 0.8))
    assert new.status_code == 200, new.text
    ford_app = await cleared_reader(app, client, "ford", UNMARKED_VIN, ford_feed)
    read = await pull(client, ford_app, UNMARKED_VIN)
    assert read.status_code == 200, read.text
    assert read.json()["charging"]["battery_level"]["data"] == 0.8
    for vin, brand, status in (
        (UNMARKED_VIN, "ford", 409),  # already
        (FORD_VIN, "bmw", 422),  # the maker code
        (UNMARKED_VIN, "sandbox", 422),  # production
    ):
        with pytest.raises(ApiError) as refused:
            async with db.transaction() as conn:
                await rebrand_vehicle(
                    conn, environment=PROD, vin=vin, brand=brand, now_us=clock.now_us()
                )
        assert (refused.value.status, refused.value.source) == (status, "brand")


def test_the_rebrand_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("AUTOPORT_DATABASE_URL", raising=False)
    initialised(tmp_path)
    runner, cli = CliRunner(), typer.Typer()
    cli.add_typer(vehicles_app, name="vehicles")
    unconfirmed = runner.invoke(cli, ["vehicles", "rebrand", UNMARKED_VIN, "--brand", "ford"])
    assert unconfirmed.exit_code == 2
    assert "--yes" in unconfirmed.output
    done = runner.invoke(
        cli, ["vehicles", "rebrand", UNMARKED_VIN, "--brand", "ford", "--yes", "--json"]
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {
        "environment": "production",
        "vin": UNMARKED_VIN,
        "previous_brand": None,
        "brand": "ford",
        "history_deleted": 0,
    }
    again = runner.invoke(cli, ["vehicles", "rebrand", UNMARKED_VIN, "--brand", "ford", "--yes"])
    assert again.exit_code == 1 and "already stored for ford" in again.output
    wrong = runner.invoke(cli, ["vehicles", "rebrand", FORD_VIN, "--brand", "bmw", "--yes"])
    assert wrong.exit_code == 2 and "1FA belongs to ford" in wrong.output


async def test_the_api_description_states_the_rule(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    for path in ("/v1/eligibility", "/v1/fleets/vehicles", "/v1/ingest"):
        description = spec["paths"][path]["post"]["description"]
        assert "badge-engineered" in description, path
        assert "manufacturer code" in description, path
