"""Deciding push-fed brands' clearances: paging of the pending list, bad input, and the
`autoport fleet` CLI (the admin API's twin). The attacks: tests/security/test_clearance.py."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from typer.testing import CliRunner

from autoport.apps.cli import app as apps_cli
from autoport.config import Settings
from autoport.fleet.cli import app as fleet_cli
from autoport.kit.clock import FrozenClock
from tests.cli.datadir import initialised
from tests.factories import bearer, client_credentials_token, create_app_credentials

ADMIN = bearer("decisions-admin")
VINS = [f"SBX0000000000010{i}" for i in range(5)]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"admin_token": SecretStr("decisions-admin")})


async def test_pending_clearances_page_oldest_first(
    app: FastAPI, client: httpx.AsyncClient, clock: FrozenClock
) -> None:
    creds = await create_app_credentials(app.state.autoport.database, brands=["bmw", "ford"])
    token = await client_credentials_token(client, creds)
    for vin in VINS:
        clock.advance(1)
        await client.post(
            "/v1/fleets/vehicles",
            json={"vehicles": [{"vin": vin, "brand": "bmw"}]},
            headers=bearer(token),
        )
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = await client.get("/admin/v1/fleet/clearances", params=params, headers=ADMIN)
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["clearances"]) <= 2
        seen += [c["vin"] for c in body["clearances"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == VINS
    assert set(page.json()["clearances"][0]) == {
        "application_id",
        "vin",
        "brand",
        "status",
        "requested_at",
    }
    ford = await client.get("/admin/v1/fleet/clearances?brand=ford", headers=ADMIN)
    assert ford.json() == {"clearances": [], "next_cursor": None}


@pytest.mark.parametrize(
    ("query", "status", "source"),
    [
        ("limit=0", 422, "limit"),
        ("limit=1001", 422, "limit"),
        ("cursor=nonsense", 400, "cursor"),
        ("brand=trabant", 422, "brand"),
    ],
)
async def test_bad_list_parameters_are_refused_naming_them(
    client: httpx.AsyncClient, query: str, status: int, source: str
) -> None:
    response = await client.get(f"/admin/v1/fleet/clearances?{query}", headers=ADMIN)
    assert response.status_code == status, response.text
    assert response.json()["errors"][0]["source"] == source


@pytest.mark.parametrize(
    ("vin", "body", "status", "source"),
    [
        ("SHORT", b"", 422, "vin"),
        (VINS[0], b"", 404, "vin"),
        (VINS[0], b"{", 400, None),
        (VINS[0], b'{"why": "x"}', 422, "reason"),
        (VINS[0], b'{"reason": "' + b"x" * 501 + b'"}', 422, "reason"),
    ],
)
async def test_bad_decisions_are_refused_and_change_nothing(
    client: httpx.AsyncClient, vin: str, body: bytes, status: int, source: str | None
) -> None:
    response = await client.post(
        f"/admin/v1/fleet/clearances/NOAPP/{vin}/approve",
        content=body,
        headers={**ADMIN, "content-type": "application/json"},
    )
    assert response.status_code == status, response.text
    assert response.json()["errors"][0].get("source") == source


runner = CliRunner()


def test_the_cli_lists_and_decides_like_the_admin_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(initialised(tmp_path)))
    monkeypatch.delenv("AUTOPORT_DATABASE_URL", raising=False)
    created = runner.invoke(apps_cli, ["create", "--name", "fleet", "--brand", "bmw", "--json"])
    assert created.exit_code == 0, created.output
    app_id = json.loads(created.stdout)["app_id"]
    with sqlite3.connect(tmp_path / "autoport.db") as db:
        db.execute(
            "INSERT INTO fleet_vehicles (environment, application_id, vin, brand, status, tags, "
            "changelog, inserted_at, updated_at) VALUES "
            "('production', ?, ?, 'bmw', 'pending', '{}', '[]', 1, 1)",
            (app_id, VINS[0]),
        )
    pending = runner.invoke(fleet_cli, ["pending", "--json"])
    assert pending.exit_code == 0, pending.output
    assert [c["vin"] for c in json.loads(pending.stdout)] == [VINS[0]]
    approved = runner.invoke(
        fleet_cli, ["approve", app_id, VINS[0], "--reason", "contract 42", "--json"]
    )
    assert approved.exit_code == 0, approved.output
    assert json.loads(approved.stdout)["status"] == "approved"
    again = runner.invoke(fleet_cli, ["reject", app_id, VINS[0]])
    assert again.exit_code == 1  # a 409: the kit's exit code for a refused change
    assert "not pending" in again.output
    assert runner.invoke(fleet_cli, ["approve", app_id, VINS[1]]).exit_code == 4  # none pending
    with sqlite3.connect(tmp_path / "autoport.db") as db:
        changelog = db.execute("SELECT changelog FROM fleet_vehicles").fetchone()[0]
    assert json.loads(changelog)[-1] == {
        "timestamp": json.loads(changelog)[-1]["timestamp"],
        "status": "approved",
        "reason": "contract 42",
    }
