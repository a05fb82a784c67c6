"""`autoport apps ...`: what a newcomer runs to get credentials (README), with --json."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from autoport.cli import app, register
from tests.cli.datadir import initialised

runner = CliRunner()
register()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    return initialised(tmp_path)


def run_json(*args: str) -> dict[str, object]:
    result = runner.invoke(app, ["apps", *args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_create_list_show_rotate(data_dir: Path) -> None:
    created = run_json(
        "create",
        "--name",
        "Demo",
        "--redirect-uri",
        "https://demo.example/cb",
        "--property",
        "charging.battery_level",
        "--brand",
        "sandbox",
        "--environment",
        "sandbox",
    )
    assert created["environment"] == "sandbox"
    assert str(created["client_secret"]).startswith("ap_cs_")
    assert created["token_url"] == "http://127.0.0.1:8080/sandbox/v1/access_tokens"
    app_id = str(created["app_id"])
    listed = run_json("list", "-e", "sandbox")
    assert [a["app_id"] for a in listed["applications"]] == [app_id]  # type: ignore[attr-defined]
    assert run_json("list")["applications"] == []
    shown = run_json("show", app_id, "-e", "sandbox")
    assert "client_secret" not in shown
    rotated = run_json("rotate-secret", app_id, "-e", "sandbox", "--overlap-seconds", "0")
    assert rotated["client_secret"] != created["client_secret"]
    text = runner.invoke(app, ["apps", "show", app_id, "-e", "sandbox"])
    assert f"app_id:        {app_id}" in text.stdout


def test_add_key_writes_a_private_credentials_file(data_dir: Path) -> None:
    app_id = str(run_json("create", "--name", "Keys")["app_id"])
    target = data_dir / "key.json"
    result = runner.invoke(app, ["apps", "add-key", app_id, "--output", str(target)])
    assert result.exit_code == 0, result.output
    assert oct(os.stat(target).st_mode & 0o777) == "0o600"
    credentials = json.loads(target.read_text())
    assert credentials["private_jwk"]["crv"] == "P-256"
    assert credentials["app_id"] == app_id
    shown = run_json("show", app_id)
    assert shown["keys"][0]["key_id"] == credentials["key_id"]  # type: ignore[index]
    removed = runner.invoke(app, ["apps", "remove-key", app_id, credentials["key_id"]])
    assert removed.exit_code == 0


def test_bad_input_is_a_clear_message(data_dir: Path) -> None:
    result = runner.invoke(app, ["apps", "create", "--name", "X", "--property", "nope.nope"])
    assert result.exit_code == 2
    assert "properties[0]" in result.output
    missing = runner.invoke(app, ["apps", "show", "000000000000000000000000"])
    assert missing.exit_code == 4
    assert "no application" in missing.output


@pytest.mark.parametrize(
    ("environment", "base"),
    [("production", "http://127.0.0.1:8080"), ("sandbox", "http://127.0.0.1:8080/sandbox")],
)
def test_credentials_carry_auth_uri_token_uri_and_url_scheme(
    data_dir: Path, environment: str, base: str
) -> None:
    args = ["create", "--name", "Mobile", "-e", environment, "--client-type", "public"]
    args += ["--url-scheme", "com.example.app", "--redirect-uri", "com.example.app:/callback"]
    created = run_json(*args)
    assert created["auth_uri"] == f"{base}/oauth/new"
    assert created["token_uri"] == f"{base}/v1/access_tokens"
    assert created["token_url"] == created["token_uri"]
    assert created["url_scheme"] == "com.example.app"
    assert created["redirect_uris"] == ["com.example.app:/callback"]
    app_id = str(created["app_id"])
    shown = run_json("show", app_id, "-e", environment)
    applications: Any = run_json("list", "-e", environment)["applications"]
    [listed] = applications
    for view in (shown, listed):
        assert view["auth_uri"] == created["auth_uri"]
        assert view["token_uri"] == created["token_uri"]
        assert view["url_scheme"] == "com.example.app"
    text = runner.invoke(app, ["apps", "show", app_id, "-e", environment]).stdout
    assert f"auth_uri:      {base}/oauth/new" in text
    assert f"token_uri:     {base}/v1/access_tokens" in text
    assert "url_scheme:    com.example.app" in text
    created_text = runner.invoke(app, ["apps", "create", "--name", "Web", "-e", environment])
    assert created_text.exit_code == 0, created_text.output
    assert f"token_uri:     {base}/v1/access_tokens" in created_text.stdout
    assert f"auth_uri:      {base}/oauth/new" in created_text.stdout
    assert "url_scheme:    -" in created_text.stdout


@pytest.mark.parametrize(
    ("args", "source"),
    [
        (["--url-scheme", "https"], "url_scheme"),
        (["--url-scheme", "javascript"], "url_scheme"),
        (["--url-scheme", "com.example.app:"], "url_scheme"),
        (
            ["--url-scheme", "com.example.app", "--redirect-uri", "com.other.app:/cb"],
            "redirect_uris[0]",
        ),
    ],
)
def test_bad_url_scheme_is_a_clear_message_and_stores_nothing(
    data_dir: Path, args: list[str], source: str
) -> None:
    result = runner.invoke(app, ["apps", "create", "--name", "X", *args])
    assert result.exit_code == 2
    assert source in result.output
    assert run_json("list")["applications"] == []


def test_commands_at_creation_and_set_commands(data_dir: Path) -> None:
    created = run_json(
        "create",
        "--name",
        "Remote",
        "--brand",
        "sandbox",
        "--environment",
        "sandbox",
        "--command",
        "doors.lock_unlock_doors",
    )
    assert created["commands"] == ["doors.lock_unlock_doors"]
    changed = run_json(
        "set-commands",
        str(created["app_id"]),
        "-e",
        "sandbox",
        "--command",
        "honk_horn_flash_lights.honk_flash",
    )
    assert changed["commands"] == ["honk_horn_flash_lights.honk_flash"]
    refused = runner.invoke(
        app, ["apps", "set-commands", str(created["app_id"]), "-e", "sandbox", "--command", "x.y"]
    )
    assert refused.exit_code != 0
    assert "commands[0]" in refused.output


def test_create_files_applications_under_one_account_by_name(data_dir: Path) -> None:
    """Each `apps create` used to make an account of its own (issue #38): applications go
    to the environment's account named by --account (default `default`), made once."""
    first = run_json("create", "--name", "One", "-e", "sandbox")
    second = run_json("create", "--name", "Two", "-e", "sandbox")
    assert first["account_id"] == second["account_id"]
    acme = run_json("create", "--name", "Three", "-e", "sandbox", "--account", "Acme")
    again = run_json("create", "--name", "Four", "-e", "sandbox", "--account", "Acme")
    assert acme["account_id"] == again["account_id"] != first["account_id"]
    # Another environment has accounts of its own, even of the same name.
    production = run_json("create", "--name", "Five")
    assert production["account_id"] not in (first["account_id"], acme["account_id"])
    # An account given by id still wins; an unknown one is not found.
    by_id = run_json(
        "create", "--name", "Six", "-e", "sandbox", "--account-id", str(acme["account_id"])
    )
    assert by_id["account_id"] == acme["account_id"]
    missing = runner.invoke(app, ["apps", "create", "--name", "X", "--account-id", "nope"])
    assert missing.exit_code == 4, missing.output
