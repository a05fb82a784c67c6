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
