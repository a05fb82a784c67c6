"""`autoport providers create|list|revoke`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoport.ingestion.cli import app
from tests.cli.datadir import initialised

runner = CliRunner()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("AUTOPORT_DATABASE_URL", raising=False)
    return initialised(tmp_path)


def test_create_list_revoke(data_dir: Path) -> None:
    created = runner.invoke(app, ["create", "--name", "acme feed", "-e", "sandbox", "--json"])
    assert created.exit_code == 0, created.output
    provider = json.loads(created.stdout)
    assert provider["secret"].startswith("ap_ingest_")
    assert provider["environment"] == "sandbox"
    listed = runner.invoke(app, ["list", "-e", "sandbox", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [r["id"] for r in rows] == [provider["id"]]
    assert "secret" not in rows[0]
    assert provider["secret"] not in (data_dir / "autoport.db").read_bytes().decode("latin-1")
    revoked = runner.invoke(app, ["revoke", provider["id"], "--json"])
    assert revoked.exit_code == 0, revoked.output
    assert json.loads(revoked.stdout)["revoked_at"] is not None
    again = runner.invoke(app, ["revoke", provider["id"]])
    assert again.exit_code == 4
    assert "no active provider" in again.output


def test_create_needs_a_name(data_dir: Path) -> None:
    result = runner.invoke(app, ["create", "--name", "  "])
    assert result.exit_code == 2


def test_brands_and_auto_approval_are_provider_settings(data_dir: Path) -> None:
    created = runner.invoke(
        app, ["create", "--name", "bmw feed", "--brand", "BMW", "--brand", "mini", "--json"]
    )
    assert created.exit_code == 0, created.output
    provider = json.loads(created.stdout)
    assert provider["brands"] == ["bmw", "mini"]
    assert provider["auto_approve_clearances"] is False  # off unless asked for
    changed = runner.invoke(
        app, ["set", provider["id"], "--brand", "bmw", "--auto-approve-clearances", "--json"]
    )
    assert changed.exit_code == 0, changed.output
    assert json.loads(changed.stdout)["brands"] == ["bmw"]
    assert json.loads(changed.stdout)["auto_approve_clearances"] is True
    assert "warning" in changed.stderr
    listed = runner.invoke(app, ["list"])
    assert "AUTO-APPROVES CLEARANCES" in listed.stdout
    off = runner.invoke(app, ["set", provider["id"], "--no-auto-approve-clearances", "--json"])
    assert json.loads(off.stdout)["auto_approve_clearances"] is False
    assert runner.invoke(app, ["set", "prv_nope", "--brand", "bmw"]).exit_code == 4  # not found


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--brand", "trabant"], "unknown brand"),
        (["--brand", "sandbox"], "only in the sandbox environment"),
    ],
)
def test_bad_provider_brands_are_refused_naming_the_option(
    data_dir: Path, args: list[str], words: str
) -> None:
    result = runner.invoke(app, ["create", "--name", "feed", *args])
    assert result.exit_code == 2
    assert "--brand" in result.output and words in result.output
    assert json.loads(runner.invoke(app, ["list", "--json"]).stdout) == []
