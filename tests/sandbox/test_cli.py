"""`autoport sandbox ...` on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoport.cli import app, register
from autoport.config import Settings

runner = CliRunner()
register()
VIN = "SBXCMD0000000000A"


@pytest.fixture
def env(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("AUTOPORT_DATABASE_URL", settings.database_url)
    if settings.database_schema:
        monkeypatch.setenv("AUTOPORT_DATABASE_SCHEMA", settings.database_schema)


def cli(*args: str) -> tuple[int, str]:
    """Exit code and stdout (logs and error messages go to stderr)."""
    result = runner.invoke(app, ["sandbox", *args])
    return result.exit_code, result.stdout


def cli_error(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["sandbox", *args])
    return result.exit_code, result.stderr


def test_create_list_show_delete_with_json(env: None) -> None:
    code, out = cli(
        "vehicles", "create", "--vin", VIN, "--powertrain", "plug_in_hybrid",
        "--scenario", "charging", "--profile", "full", "--seed", "12", "--json",
    )  # fmt: skip
    assert code == 0, out
    created = json.loads(out)
    assert created["vin"] == VIN
    assert created["simulation"]["seed"] == 12

    code, out = cli("vehicles", "list", "--json")
    assert code == 0
    assert [v["vin"] for v in json.loads(out)["vehicles"]] == [VIN]
    code, out = cli("vehicles", "list")
    assert VIN in out
    assert "charging" in out

    code, out = cli("vehicles", "show", VIN, "--json")
    assert code == 0
    shown = json.loads(out)
    assert shown["data"]["charging"]["status"]["data"] == "charging"
    code, out = cli("vehicles", "show", VIN)
    assert "charging.battery_level = " in out

    code, out = cli("vehicles", "delete", VIN, "--json")
    assert code == 0
    assert json.loads(out) == {"deleted": VIN}
    code, out = cli("vehicles", "list", "--json")
    assert json.loads(out) == {"vehicles": []}


def test_errors_are_messages_with_exit_codes(env: None) -> None:
    assert cli("vehicles", "create", "--vin", VIN)[0] == 0
    code, out = cli_error("vehicles", "create", "--vin", VIN)
    assert code == 1
    assert "already exists" in out
    code, out = cli_error("vehicles", "show", "SBXNOPE0000000000")
    assert code == 4
    assert "no sandbox vehicle" in out
    # Bad input (422 in the API) is a usage error: 2, as everywhere.
    code, out = cli_error("vehicles", "create", "--vin", "BAD")
    assert code == 2
    assert "vin: must be 17 characters" in out
    code, out = cli_error("set", VIN, "charging.battery_level=2")
    assert code == 2
    assert "charging.battery_level: 2 is above 1.0" in out
    code, out = cli_error("fail", VIN, "charging.status", "--reason", "gremlins")
    assert code == 2
    assert "reason" in out


def test_emulator_commands(env: None) -> None:
    assert cli("vehicles", "create", "--vin", VIN, "--scenario", "parked")[0] == 0
    code, out = cli(
        "set", VIN, "charging.battery_level=0.3", "doors.locks_state=unlocked", "--json"
    )
    assert code == 0, out
    code, out = cli("vehicles", "show", VIN, "--json")
    data = json.loads(out)["data"]
    assert data["charging"]["battery_level"]["data"] == 0.3
    assert data["doors"]["locks_state"]["data"] == "unlocked"
    code, out = cli("fail", VIN, "charging.status", "--reason", "unauthorised", "--json")
    assert code == 0
    assert json.loads(out)["failures"]["charging.status"]["reason"] == "unauthorised"
    code, out = cli("fail", VIN, "charging.status", "--json")
    assert json.loads(out)["failures"] == {}
    code, out = cli("behaviour", VIN, "--offline", "--latency", "3", "--json")
    assert json.loads(out)["behaviour"]["offline"] is True
    code, out = cli("behaviour", VIN, "--privacy-mode", "--json")
    assert code == 0, out
    assert json.loads(out)["behaviour"]["privacy_mode"] is True
    code, out = cli("behaviour", VIN, "--no-privacy-mode", "--online")
    assert code == 0, out
    assert "privacy mode" not in out and "offline" not in out
    code, out = cli("behaviour", VIN, "--privacy-mode")
    assert "privacy mode" in out
    code, out = cli("scenario", VIN, "--scenario", "driving", "--seed", "5", "--pause", "--json")
    simulation = json.loads(out)["simulation"]
    assert (simulation["scenario"], simulation["seed"], simulation["running"]) == (
        "driving",
        5,
        False,
    )


def test_replay_prints_identical_json_lines() -> None:
    args = ("replay", "--scenario", "crash", "--seed", "3", "--steps", "120")
    first, second = cli(*args), cli(*args)
    assert first[0] == 0, first[1]
    assert first == second
    lines = [json.loads(line) for line in first[1].splitlines()]
    assert len(lines) == 121
    crashed = [p for p in lines if p["data"].get("crash", {}).get("status")]
    assert crashed[-1]["data"]["crash"]["status"]["data"] == "airbag_triggered"
    code, out = cli_error(
        "replay", "--scenario", "charging", "--seed", "1", "--powertrain", "combustion"
    )
    assert code == 2
    assert "charging" in out


def test_scripted_command_failures(env: None) -> None:
    assert cli("vehicles", "create", "--vin", VIN, "--scenario", "parked")[0] == 0
    code, out = cli(
        "fail-command", VIN, "doors.lock_unlock_doors", "--reason", "execution_timeout",
        "--status", "timed_out", "--json",
    )  # fmt: skip
    assert code == 0, out
    failure = json.loads(out)["commands"]["failures"]["doors.lock_unlock_doors"]
    assert (failure["status"], failure["reason"]) == ("timed_out", "execution_timeout")
    code, out = cli("fail-command", VIN, "doors.lock_unlock_doors", "--json")
    assert code == 0 and json.loads(out)["commands"]["failures"] == {}
    code, err = cli_error("fail-command", VIN, "doors.fly", "--reason", "unknown")
    assert code != 0 and "doors.fly" in err
