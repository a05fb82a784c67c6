"""The command line: version, migrate, doctor, admin-token."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoport import __version__
from autoport.cli import app
from tests.cli.datadir import initialised

runner = CliRunner()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    return tmp_path


def test_version() -> None:
    result = runner.invoke(app, ["version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == __version__


def test_migrate_then_doctor_passes(data_dir: Path) -> None:
    result = runner.invoke(app, ["migrate"])
    assert result.exit_code == 0, result.output
    assert (data_dir / "autoport.db").exists()
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "all checks passed" in result.output


def test_doctor_reports_missing_migrations(data_dir: Path) -> None:
    (data_dir / "autoport.db").touch()
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert "FAIL" in result.output
    assert "migrations" in result.output


def test_doctor_reports_unreachable_database(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert "database" in result.output


def test_doctor_reports_unreachable_redis(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner.invoke(app, ["migrate"])
    monkeypatch.setenv("AUTOPORT_REDIS_URL", "redis://127.0.0.1:1/0")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert "redis" in result.output


def test_bad_configuration_is_a_clear_message(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_PORT", "not-a-port")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "configuration error: AUTOPORT_PORT: Input should be a valid integer, unable to "
        "parse string as an integer"
    ]


def test_admin_token_rotation(data_dir: Path) -> None:
    initialised(data_dir)
    result = runner.invoke(app, ["admin-token", "--rotate"])
    assert result.exit_code == 0
    assert result.stdout.strip().startswith("ap_admin_")
    assert result.stdout.strip() not in (data_dir / "secrets.json").read_text()


def test_doctor_reports_an_unreachable_mqtt_broker(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner.invoke(app, ["migrate"])
    monkeypatch.setenv("AUTOPORT_MQTT_URL", "mqtt://publisher:secret@127.0.0.1:1")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert "[FAIL] mqtt: mqtt://127.0.0.1:1" in result.output


def test_doctor_does_not_generate_secrets_to_check_mqtt(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The admin token is shown once by `serve`: doctor must not create it unseen.
    runner.invoke(app, ["migrate"])
    monkeypatch.setenv("AUTOPORT_MQTT_URL", "mqtts://127.0.0.1:1")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert "[FAIL] mqtt: the publisher's password derives from token_hmac_key" in result.output
    assert not (data_dir / "secrets.json").exists()
