"""`autoport streaming mosquitto-config` and `autoport streaming credentials`."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from autoport.config import Settings, ensure_secrets
from autoport.kit.db import create_database
from autoport.streaming.cli import app
from autoport.streaming.mosquitto import broker_address, password_hash
from tests.cli.datadir import initialised
from tests.conftest import service_missing
from tests.streaming.conftest import create_application
from tests.streaming.pki import Pki, make_pki

runner = CliRunner()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    return initialised(tmp_path)


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
    assert issued["tls_port"] is None  # no TLS listener configured
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


def test_credentials_take_the_environment_option_of_every_command(data_dir: Path) -> None:
    """`-e/--environment` as every other command takes it (issue #38: `No such option`);
    an application of the other environment is not found there."""
    app_id = make_application(data_dir)  # a sandbox application
    for option in ("--environment", "-e"):
        result = runner.invoke(app, ["credentials", app_id, option, "sandbox", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["environment"] == "sandbox"
    elsewhere = runner.invoke(app, ["credentials", app_id, "-e", "production"])
    assert elsewhere.exit_code == 4
    assert f"no application with id {app_id} in production" in elsewhere.output


def test_credentials_of_an_unknown_application_fail(data_dir: Path) -> None:
    result = runner.invoke(app, ["credentials", "0" * 24])
    assert result.exit_code == 4
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
    # A client's id is its username (no takeover of another's session); the broker is
    # found by its own pid file to be reloaded.
    assert "use_username_as_clientid true" in config
    assert f"pid_file {target.resolve() / 'mosquitto.pid'}" in config
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


# ---------------------------------------------------------------- TLS


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")


def tls_args(cert: Path, key: Path) -> list[str]:
    return ["mosquitto-config", "--tls-cert", str(cert), "--tls-key", str(key)]


def test_mosquitto_config_adds_a_tls_listener(data_dir: Path, pki: Pki) -> None:
    result = runner.invoke(app, [*tls_args(pki.cert_file, pki.key_file), "--port", "18830"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "listener 18830 127.0.0.1\n" in text  # the plain one stays
    assert (
        "listener 8883\n"  # every interface by default
        f"certfile {pki.cert_file.resolve()}\nkeyfile {pki.key_file.resolve()}\n"
        "tls_version tlsv1.2\n"
    ) in text
    # One password file and ACL for both listeners.
    assert "per_listener_settings false" in text
    assert text.count("password_file ") == 1
    assert text.count("acl_file ") == 1


def test_mosquitto_config_takes_the_tls_listener_from_the_settings(
    data_dir: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_MQTT_TLS_CERT", str(pki.cert_file))
    monkeypatch.setenv("AUTOPORT_MQTT_TLS_KEY", str(pki.key_file))
    monkeypatch.setenv("AUTOPORT_MQTT_TLS_PORT", "18883")
    result = runner.invoke(app, ["mosquitto-config", "--tls-bind", "10.0.0.5"])
    assert result.exit_code == 0, result.output
    assert f"listener 18883 10.0.0.5\ncertfile {pki.cert_file.resolve()}\n" in result.stdout

    # ... and `credentials` tells applications where TLS is.
    app_id = make_application(data_dir)
    issued = json.loads(runner.invoke(app, ["credentials", app_id, "--json"]).stdout)
    assert issued["tls_port"] == 18883
    text = runner.invoke(app, ["credentials", app_id]).stdout
    assert "tls_port: 18883" in text


def test_mqtts_publisher_keeps_the_plain_listener_on_1883(
    data_dir: Path, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_MQTT_URL", "mqtts://broker.example:8883")
    # Publishing over TLS to a broker configured without a TLS listener: a note.
    result = runner.invoke(app, ["mosquitto-config"])
    assert result.exit_code == 0, result.output
    assert "listener 1883 127.0.0.1\n" in result.stdout
    assert "no TLS listener on that port" in result.output

    monkeypatch.setenv("AUTOPORT_MQTT_TLS_CERT", str(pki.cert_file))
    monkeypatch.setenv("AUTOPORT_MQTT_TLS_KEY", str(pki.key_file))
    result = runner.invoke(app, ["mosquitto-config"])
    assert result.exit_code == 0, result.output
    assert "listener 1883 127.0.0.1\n" in result.stdout
    assert "listener 8883\n" in result.stdout
    assert "note:" not in result.output

    # An option replaces its setting only: the other file still comes from the settings.
    other_key = make_pki(tmp_path / "other").key_file
    result = runner.invoke(app, ["mosquitto-config", "--tls-key", str(other_key)])
    assert result.exit_code == 2
    assert f"--tls-key: {other_key} is not the PEM private key of {pki.cert_file}" in (
        result.output
    )


def test_empty_tls_settings_are_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MQTT_CA_FILE", "MQTT_TLS_CERT", "MQTT_TLS_KEY"):
        monkeypatch.setenv(f"AUTOPORT_{name}", "")
    settings = Settings(data_dir=tmp_path)
    assert (settings.mqtt_ca_file, settings.mqtt_tls_cert, settings.mqtt_tls_key) == (
        None,
        None,
        None,
    )


def test_credentials_text_says_when_there_is_no_tls_listener(data_dir: Path) -> None:
    app_id = make_application(data_dir)
    result = runner.invoke(app, ["credentials", app_id])
    assert result.exit_code == 0, result.output
    assert "tls_port: (no TLS listener)" in result.stdout


@pytest.mark.parametrize(
    ("which", "option", "message"),
    [
        ("missing-cert", "--tls-cert", "no such file"),
        ("missing-key", "--tls-key", "no such file"),
        ("cert-is-a-directory", "--tls-cert", "not a file"),
        ("cert-not-pem", "--tls-cert", "not a PEM certificate"),
        ("key-of-another-cert", "--tls-key", "is not the PEM private key of"),
        ("encrypted-key", "--tls-key", "encrypted"),
    ],
)
def test_mosquitto_config_refuses_unusable_tls_files_and_writes_nothing(
    data_dir: Path, pki: Pki, tmp_path: Path, which: str, option: str, message: str
) -> None:
    from cryptography.hazmat.primitives import serialization

    cert, key = pki.cert_file, pki.key_file
    if which == "missing-cert":
        cert = tmp_path / "nope.pem"
    elif which == "missing-key":
        key = tmp_path / "nope.key"
    elif which == "cert-is-a-directory":
        cert = tmp_path
    elif which == "cert-not-pem":
        cert = key
    elif which == "key-of-another-cert":
        key = make_pki(tmp_path / "other").key_file
    else:
        loaded = serialization.load_pem_private_key(pki.key_file.read_bytes(), None)
        key = tmp_path / "encrypted.key"
        key.write_bytes(
            loaded.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(b"secret"),
            )
        )
    target = data_dir / "broker"
    result = runner.invoke(app, [*tls_args(cert, key), "--dir", str(target)])
    assert result.exit_code == 2, result.output
    assert f"{option}: " in result.output
    assert message in result.output
    assert not target.exists()


def test_mosquitto_config_names_the_setting_of_a_missing_file(
    data_dir: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_MQTT_TLS_CERT", str(data_dir / "gone.pem"))
    monkeypatch.setenv("AUTOPORT_MQTT_TLS_KEY", str(pki.key_file))
    result = runner.invoke(app, ["mosquitto-config"])
    assert result.exit_code == 2
    assert "AUTOPORT_MQTT_TLS_CERT: no such file" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tls-cert", "CERT"], "--tls-cert and --tls-key go together"),
        (["--tls-key", "KEY"], "--tls-cert and --tls-key go together"),
        (["--tls-port", "8884"], "--tls-port/--tls-bind need a TLS listener"),
        (
            ["--tls-cert", "CERT", "--tls-key", "KEY", "--tls-port", "1883"],
            "--tls-port: the TLS and the plain listener both use port 1883",
        ),
    ],
)
def test_mosquitto_config_refuses_incomplete_tls_options(
    data_dir: Path, pki: Pki, args: list[str], message: str
) -> None:
    args = [{"CERT": str(pki.cert_file), "KEY": str(pki.key_file)}.get(arg, arg) for arg in args]
    target = data_dir / "broker"
    result = runner.invoke(app, ["mosquitto-config", "--dir", str(target), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (target / "mosquitto.conf").exists()


def test_mqtts_url_is_tls_on_8883_by_default(tmp_path: Path, pki: Pki) -> None:
    settings = Settings(
        data_dir=tmp_path,
        mqtt_url="mqtts://user:pw@broker.example",
        mqtt_ca_file=pki.ca_file,
    )
    address = broker_address(settings)
    assert address is not None
    assert (address.host, address.port, address.tls) == ("broker.example", 8883, True)
    context = address.tls_context()
    assert context is not None
    assert context.check_hostname
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert settings.safe_summary()["mqtt"] == "mqtts://broker.example:8883"
    plain = broker_address(Settings(data_dir=tmp_path, mqtt_url="mqtt://u:p@broker.example"))
    assert plain is not None
    assert (plain.port, plain.tls, plain.tls_context()) == (1883, False, None)


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"mqtt_url": "mqtts://"}, "mqtts://"),
        ({"mqtt_url": "mqtts://broker:port"}, "bad port"),
        ({"mqtt_url": "mqtts://broker:99999"}, "bad port"),
        ({"mqtt_url": "mqtts://broker", "mqtt_ca_file": "missing.pem"}, "no such file"),
        ({"mqtt_url": "mqtts://broker", "mqtt_ca_file": "NOT-PEM"}, "not a readable PEM file"),
        ({"mqtt_url": "mqtt://broker", "mqtt_ca_file": "CA"}, "AUTOPORT_MQTT_URL must be mqtts://"),
        ({"mqtt_ca_file": "CA"}, "AUTOPORT_MQTT_URL must be mqtts://"),
        ({"mqtt_tls_cert": "CA"}, "AUTOPORT_MQTT_TLS_CERT and AUTOPORT_MQTT_TLS_KEY go together"),
    ],
)
def test_bad_mqtts_settings_are_refused(
    tmp_path: Path, pki: Pki, update: dict[str, str], message: str
) -> None:
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello")
    values = {
        name: {"CA": str(pki.ca_file), "NOT-PEM": str(not_pem)}.get(value, value)
        for name, value in update.items()
    }
    with pytest.raises(ValidationError, match=r"(?i)mqtt") as error:
        Settings(data_dir=tmp_path, **values)  # type: ignore[arg-type]
    assert message in str(error.value)


def test_bad_mqtts_settings_are_a_clear_cli_error(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_MQTT_URL", "mqtts://broker.example")
    monkeypatch.setenv("AUTOPORT_MQTT_CA_FILE", str(data_dir / "missing-ca.pem"))
    result = runner.invoke(app, ["mosquitto-config"])
    assert result.exit_code == 2
    assert "configuration error" in result.output
    assert "AUTOPORT_MQTT_CA_FILE" in result.output
    assert "no such file" in result.output


def test_mosquitto_config_refuses_an_unreadable_key(
    data_dir: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite may run as root, which reads any file: a denied open, as for other users.
    real_open = Path.open

    def open_(self: Path, *args: object, **kwargs: object) -> object:
        if self == pki.key_file:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", open_)
    result = runner.invoke(app, tls_args(pki.cert_file, pki.key_file))
    assert result.exit_code == 2
    assert f"--tls-key: cannot read {pki.key_file}: Permission denied" in result.output


@pytest.mark.parametrize("command", [["mosquitto-config"], ["credentials", "0" * 24]])
def test_commands_migrate_an_unmigrated_database_first(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A data directory whose database file exists but was never migrated (an older
    # install, or `autoport migrate` not run): the embedded database is migrated first.
    ensure_secrets(Settings(data_dir=tmp_path, database_url=None))
    (tmp_path / "autoport.db").touch()
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    result = runner.invoke(app, command)
    assert "no such table" not in result.output
    assert result.exit_code == (0 if command[0] == "mosquitto-config" else 4), result.output


def test_an_unmigrated_postgresql_database_is_refused_with_the_command_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import uuid

    url = os.environ.get("AUTOPORT_TEST_POSTGRES_URL")
    if not url:
        service_missing("PostgreSQL leg: AUTOPORT_TEST_POSTGRES_URL is not set")
    ensure_secrets(Settings(data_dir=tmp_path, database_url=None))
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    assert url is not None
    monkeypatch.setenv("AUTOPORT_DATABASE_URL", url)
    # A schema nobody migrated (never created: nothing to clean up).
    monkeypatch.setenv("AUTOPORT_DATABASE_SCHEMA", f"autoport_unmigrated_{uuid.uuid4().hex[:8]}")
    result = runner.invoke(app, ["mosquitto-config"])
    assert result.exit_code == 2
    assert "run `autoport migrate`" in result.output


def test_reload_signals_only_a_mosquitto_named_by_the_pid_file(tmp_path: Path) -> None:
    import subprocess

    from autoport.streaming.mosquitto import PID_FILE, reload

    assert reload(tmp_path) is False  # no pid file
    # A stale pid file whose pid now belongs to another program: left alone.
    other = subprocess.Popen(["sleep", "30"])
    try:
        (tmp_path / PID_FILE).write_text(f"{other.pid}\n")
        assert reload(tmp_path) is False
        assert other.poll() is None  # SIGHUP would have ended it
    finally:
        other.kill()
        other.wait()
