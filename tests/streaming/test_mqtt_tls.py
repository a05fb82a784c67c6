"""MQTT over TLS end to end: a throwaway CA and server certificate, a real Mosquitto
configured by `autoport streaming mosquitto-config --tls-cert/--tls-key` (a plain
listener for the local publisher, a TLS listener for remote subscribers), credentials
from `autoport streaming credentials`, and autoport's publisher over mqtts://."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import os
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import pytest
import typer
from typer.testing import CliRunner, Result

from autoport.cli import app as root_app
from autoport.cli import register
from autoport.config import Settings, ensure_secrets
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.streaming.cli import app as streaming_app
from autoport.streaming.mosquitto import topic_of
from tests.conftest import service_missing
from tests.helpers.ports import free_port
from tests.streaming.conftest import (
    MOSQUITTO,
    Broker,
    create_application,
    grant_consent,
    ingest,
    live_server,
    new_vin,
    point,
)
from tests.streaming.mqtt import receive
from tests.streaming.pki import Pki, make_pki

pytestmark = pytest.mark.mqtt

runner = CliRunner()


@dataclass
class TlsSetup:
    broker: Broker
    tls_port: int
    pki: Pki
    settings: Settings  # the publisher's: mqtts://localhost:<tls_port> + mqtt_ca_file


def cli_environment(monkeypatch: pytest.MonkeyPatch, settings: Settings, **extra: str) -> None:
    """The environment the `autoport` commands read their settings from."""
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("AUTOPORT_DATABASE_URL", settings.database_url)
    if settings.database_schema:
        monkeypatch.setenv("AUTOPORT_DATABASE_SCHEMA", settings.database_schema)
    for name, value in extra.items():
        monkeypatch.setenv(f"AUTOPORT_{name.upper()}", value)


@pytest.fixture
async def tls_setup(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[TlsSetup]:
    if not os.path.exists(MOSQUITTO):
        service_missing(f"Mosquitto broker binary not found at {MOSQUITTO}")
    pki = make_pki(tmp_path / "pki")
    plain_port, tls_port = free_port(), free_port()
    while tls_port == plain_port:
        tls_port = free_port()
    publisher, _ = ensure_secrets(
        settings.model_copy(
            update={"mqtt_url": f"mqtts://localhost:{tls_port}", "mqtt_ca_file": pki.ca_file}
        )
    )
    conf_dir = tmp_path / "mosquitto"
    cli_environment(
        monkeypatch,
        settings,
        mqtt_url=f"mqtts://localhost:{tls_port}",
        mqtt_ca_file=str(pki.ca_file),
        mqtt_config_dir=str(conf_dir),
    )
    broker = Broker(conf_dir, plain_port, publisher)
    try:
        yield TlsSetup(broker, tls_port, pki, publisher)
    finally:
        await broker.stop()


def invoke(app: typer.Typer, args: list[str]) -> Result:
    """A command in a thread: the commands run their own event loop (asyncio.run)."""
    return runner.invoke(app, args)


async def mosquitto_config(setup: TlsSetup) -> None:
    """The real command, with the TLS listener."""
    args = [
        "mosquitto-config",
        "--port",
        str(setup.broker.port),
        "--tls-cert",
        str(setup.pki.cert_file),
        "--tls-key",
        str(setup.pki.key_file),
        "--tls-port",
        str(setup.tls_port),
        "--tls-bind",
        "127.0.0.1",
    ]
    if os.geteuid() == 0:
        args += ["--user", getpass.getuser()]
    result = await asyncio.to_thread(invoke, streaming_app, args)
    assert result.exit_code == 0, result.output


async def credentials(application_id: str) -> dict[str, object]:
    result = await asyncio.to_thread(
        invoke, streaming_app, ["credentials", application_id, "--json"]
    )
    assert result.exit_code == 0, result.output
    issued: dict[str, object] = json.loads(result.stdout)
    return issued


async def start(setup: TlsSetup) -> None:
    await setup.broker.start()
    await setup.broker.wait_for_port(setup.tls_port)


def trusting(ca_file: Path | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca_file) if ca_file else None)


@contextlib.asynccontextmanager
async def tls_subscriber(
    setup: TlsSetup, username: str, password: str, topic: str, *, host: str = "localhost"
) -> AsyncIterator[aiomqtt.Client]:
    async with aiomqtt.Client(
        host,
        setup.tls_port,
        username=username,
        password=password,
        tls_context=trusting(setup.pki.ca_file),
        timeout=5,
    ) as client:
        await client.subscribe(topic, qos=1)
        yield client


async def an_application_with_data(database: Database) -> tuple[str, str]:
    vin = new_vin()
    app_id = await create_application(database)
    await grant_consent(
        database, application_id=app_id, vin=vin, properties=["charging.battery_level"]
    )
    return app_id, vin


async def test_publisher_over_mqtts_reaches_a_tls_subscriber(
    database: Database, tls_setup: TlsSetup
) -> None:
    app_id, vin = await an_application_with_data(database)
    await mosquitto_config(tls_setup)
    config = (tls_setup.broker.directory / "mosquitto.conf").read_text()
    assert f"listener {tls_setup.broker.port} 127.0.0.1\n" in config
    assert (
        f"listener {tls_setup.tls_port} 127.0.0.1\n"
        f"certfile {tls_setup.pki.cert_file.resolve()}\n"
        f"keyfile {tls_setup.pki.key_file.resolve()}\n"
        "tls_version tlsv1.2\n"
    ) in config
    issued = await credentials(app_id)
    assert issued["tls_port"] == tls_setup.tls_port
    assert (issued["host"], issued["port"]) == ("localhost", tls_setup.tls_port)
    password = str(issued["password"])
    topic = str(issued["topic"])
    await start(tls_setup)

    async with (
        tls_subscriber(tls_setup, app_id, password, topic) as sub,
        live_server(tls_setup.settings),
    ):
        await ingest(database, vin=vin, data={"charging": {"battery_level": point(0.77)}})
        [message] = await receive(sub, 1, timeout=10)
    assert message["application_id"] == app_id
    assert message["data"] == {"charging": {"battery_level": point(0.77)}}
    assert await database.fetch_value("SELECT mqtt_seq FROM stream_cursors") == 1


async def test_untrusted_clients_are_refused_and_the_plain_listener_still_serves(
    database: Database, tls_setup: TlsSetup, tmp_path: Path
) -> None:
    app_id, vin = await an_application_with_data(database)
    await mosquitto_config(tls_setup)
    password = str((await credentials(app_id))["password"])
    topic = topic_of(Environment.sandbox, app_id)
    await start(tls_setup)
    port = tls_setup.tls_port

    # A client trusting another CA, or only the system's store, fails the handshake.
    rogue = make_pki(tmp_path / "rogue", name="some other CA")
    for context in (trusting(rogue.ca_file), trusting(None)):
        with pytest.raises(aiomqtt.MqttError, match="CERTIFICATE_VERIFY_FAILED"):
            async with aiomqtt.Client(
                "localhost", port, username=app_id, password=password, tls_context=context
            ):
                pass
    # TLS 1.2 is still accepted (the listener's tls_version is a minimum).
    tls12 = trusting(tls_setup.pki.ca_file)
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    async with aiomqtt.Client(
        "localhost", port, username=app_id, password=password, tls_context=tls12, timeout=5
    ):
        pass
    # Plain MQTT on the TLS port gets no CONNACK.
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client("127.0.0.1", port, username=app_id, password=password, timeout=2):
            pass
    # Wrong password over TLS: the same password file as the plain listener.
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client(
            "localhost",
            port,
            username=app_id,
            password=password + "x",
            tls_context=trusting(tls_setup.pki.ca_file),
            timeout=5,
        ):
            pass

    # The local publisher on the plain listener; the subscriber over TLS (by IP: the
    # certificate names 127.0.0.1 too).
    plain = tls_setup.settings.model_copy(
        update={"mqtt_url": f"mqtt://127.0.0.1:{tls_setup.broker.port}", "mqtt_ca_file": None}
    )
    async with (
        tls_subscriber(tls_setup, app_id, password, topic, host="127.0.0.1") as sub,
        live_server(plain),
    ):
        await ingest(database, vin=vin, data={"charging": {"battery_level": point(0.5)}})
        [message] = await receive(sub, 1, timeout=10)
    assert message["data"] == {"charging": {"battery_level": point(0.5)}}


async def test_a_publisher_not_trusting_the_broker_publishes_nothing(
    database: Database, tls_setup: TlsSetup, tmp_path: Path
) -> None:
    app_id, vin = await an_application_with_data(database)
    await mosquitto_config(tls_setup)
    await credentials(app_id)
    await start(tls_setup)
    rogue = make_pki(tmp_path / "rogue", name="some other CA")
    distrusting = tls_setup.settings.model_copy(update={"mqtt_ca_file": rogue.ca_file})
    async with live_server(distrusting) as server:
        await ingest(database, vin=vin, data={"charging": {"battery_level": point(0.1)}})
        for _ in range(200):
            if await database.fetch_value("SELECT COUNT(*) FROM stream_messages") == 1:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)
        assert await server.database.fetch_value("SELECT mqtt_seq FROM stream_cursors") == 0


async def test_doctor_checks_the_broker_over_tls(
    database: Database, tls_setup: TlsSetup, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    register()
    await mosquitto_config(tls_setup)
    await start(tls_setup)
    result = await asyncio.to_thread(invoke, root_app, ["doctor"])
    [line] = [line for line in result.output.splitlines() if "] mqtt:" in line]
    assert "[ok  ] mqtt: mqtts://localhost:" in line, result.output
    assert "verified" in line

    rogue = make_pki(tmp_path / "rogue", name="some other CA")
    monkeypatch.setenv("AUTOPORT_MQTT_CA_FILE", str(rogue.ca_file))
    result = await asyncio.to_thread(invoke, root_app, ["doctor"])
    assert result.exit_code == 1
    [line] = [line for line in result.output.splitlines() if "] mqtt:" in line]
    assert "[FAIL] mqtt:" in line
    assert "CERTIFICATE_VERIFY_FAILED" in line
