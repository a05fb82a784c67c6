"""`autoport streaming mosquitto-config` and `autoport streaming credentials`."""

from __future__ import annotations

import asyncio
import base64
import json
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from autoport.config import Settings
from autoport.db.migrate import upgrade_sync
from autoport.kit.db import create_database
from autoport.streaming.cli import app
from autoport.streaming.mosquitto import password_hash
from tests.streaming.conftest import create_application

runner = CliRunner()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    upgrade_sync(f"sqlite:///{tmp_path / 'autoport.db'}")
    return tmp_path


def make_application(data_dir: Path) -> str:
    async def run() -> str:
        db = create_database(f"sqlite:///{data_dir / 'autoport.db'}")
        await db.connect()
        try:
            return await create_application(db)
        finally:
            await db.close()

    return asyncio.run(run())


def test_credentials_issue_a_password_only_its_hash_is_kept(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_dir = data_dir / "mosquitto"
    monkeypatch.setenv("AUTOPORT_MQTT_CONFIG_DIR", str(conf_dir))
    monkeypatch.setenv("AUTOPORT_MQTT_URL", "mqtt://broker.example:8883")
    app_id = make_application(data_dir)
    result = runner.invoke(app, ["credentials", app_id, "--json"])
    assert result.exit_code == 0, result.output
    issued = json.loads(result.stdout)
    assert issued["username"] == app_id
    assert issued["topic"] == f"sandbox/level13/{app_id}"
    assert (issued["host"], issued["port"], issued["qos"]) == ("broker.example", 8883, 1)
    password = issued["password"]
    assert len(password) >= 32

    passwd = (conf_dir / "passwd").read_text()
    assert password not in passwd
    [line] = [entry for entry in passwd.splitlines() if entry.startswith(app_id + ":")]
    _, _, iterations, salt, _ = line.split(":", 1)[1].split("$")
    assert iterations == "101"
    assert line == f"{app_id}:" + password_hash(password, salt=base64.b64decode(salt))
    assert stat.S_IMODE((conf_dir / "passwd").stat().st_mode) == 0o600
    acl = (conf_dir / "acl").read_text()
    assert f"user {app_id}\ntopic read sandbox/level13/{app_id}\n" in acl

    # Issuing again replaces the password.
    again = json.loads(runner.invoke(app, ["credentials", app_id, "--json"]).stdout)
    assert again["password"] != password


def test_credentials_of_an_unknown_application_fail(data_dir: Path) -> None:
    result = runner.invoke(app, ["credentials", "0" * 24])
    assert result.exit_code == 1
    assert "no application" in result.output


def test_mosquitto_config_prints_a_closed_broker_configuration(data_dir: Path) -> None:
    app_id = make_application(data_dir)
    assert runner.invoke(app, ["credentials", app_id]).exit_code == 0
    result = runner.invoke(app, ["mosquitto-config", "--port", "18830"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "allow_anonymous false" in text
    assert "listener 18830 127.0.0.1" in text
    assert (
        "user autoport-publisher\ntopic write live/level13/#\ntopic write sandbox/level13/#" in text
    )
    assert f"topic read sandbox/level13/{app_id}" in text
    assert "autoport-publisher:$7$101$" in text


def test_mosquitto_config_writes_the_files(data_dir: Path) -> None:
    target = data_dir / "broker"
    result = runner.invoke(app, ["mosquitto-config", "--dir", str(target)])
    assert result.exit_code == 0, result.output
    config = (target / "mosquitto.conf").read_text()
    assert f"password_file {target.resolve() / 'passwd'}" in config
    assert f"acl_file {target.resolve() / 'acl'}" in config
    assert (target / "data").is_dir()
    assert stat.S_IMODE((target / "passwd").stat().st_mode) == 0o600


@pytest.mark.parametrize("url", ["http://broker:1883", "mqtt://", "broker:1883"])
def test_a_malformed_mqtt_url_is_refused(url: str, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="mqtt_url"):
        Settings(data_dir=tmp_path, mqtt_url=url)


def test_credentials_leave_an_edited_mosquitto_conf_alone(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_dir = data_dir / "mosquitto"
    monkeypatch.setenv("AUTOPORT_MQTT_CONFIG_DIR", str(conf_dir))
    assert runner.invoke(app, ["mosquitto-config", "--user", "mosquitto"]).exit_code == 0
    config = (conf_dir / "mosquitto.conf").read_text()
    assert "user mosquitto" in config
    app_id = make_application(data_dir)
    assert runner.invoke(app, ["credentials", app_id]).exit_code == 0
    assert (conf_dir / "mosquitto.conf").read_text() == config
    assert app_id in (conf_dir / "passwd").read_text()
