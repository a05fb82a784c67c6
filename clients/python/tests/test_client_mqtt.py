"""The MQTT consumer (extra `mqtt`) against real Mosquitto configured by autoport's own
commands (`streaming mosquitto-config` with a TLS listener, `streaming credentials`) and a
real `autoport serve` publishing the demo sandbox: the application's topic over TLS,
verified against the test CA, messages once each."""

from __future__ import annotations

import asyncio
import getpass
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import LiveServer, launch

from autoport_client import StreamDisconnected, StreamMessage
from autoport_client.mqtt import mqtt_messages, topic_of
from tests.conftest import service_missing
from tests.helpers.ports import free_port
from tests.streaming.conftest import MOSQUITTO
from tests.streaming.pki import make_pki


@dataclass
class MqttSetup:
    server: LiveServer
    tls_port: int
    ca_file: Path
    password: str


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert process.poll() is None, "mosquitto exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"mosquitto did not open {port}")


@pytest.fixture(scope="module")
def mqtt_setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MqttSetup]:
    if not os.path.exists(MOSQUITTO):
        service_missing(f"Mosquitto broker binary not found at {MOSQUITTO}")
    tmp = Path(tmp_path_factory.mktemp("mqtt"))
    pki = make_pki(tmp / "pki")
    plain, tls = free_port(), free_port()
    config = tmp / "mosquitto"
    server = launch(
        tmp, AUTOPORT_MQTT_URL=f"mqtt://127.0.0.1:{plain}", AUTOPORT_MQTT_CONFIG_DIR=str(config)
    )
    assert server.demo is not None
    command = [
        sys.executable, "-m", "autoport", "streaming", "mosquitto-config", "--dir", str(config),
        "--port", str(plain), "--tls-cert", str(pki.cert_file), "--tls-key", str(pki.key_file),
        "--tls-port", str(tls), "--tls-bind", "127.0.0.1",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command += ["--user", getpass.getuser()]
    done = subprocess.run(command, env=server.env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    broker = subprocess.Popen(
        [MOSQUITTO, "-c", str(config / "mosquitto.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(tls, broker)
        issued = server.cli("streaming", "credentials", server.demo.application_id)
        broker.send_signal(signal.SIGHUP)  # reload passwd and acl
        time.sleep(0.3)
        yield MqttSetup(server, tls, pki.ca_file, str(issued["password"]))
    finally:
        broker.terminate()
        broker.wait(timeout=10)
        server.stop()


def demo_messages(setup: MqttSetup, *, client_id: str) -> AsyncIterator[StreamMessage]:
    """The demo application's messages over the TLS listener, verified against the CA."""
    assert setup.server.demo is not None
    return mqtt_messages(
        host="localhost",
        port=setup.tls_port,
        application_id=setup.server.demo.application_id,
        password=setup.password,
        environment="sandbox",
        ca_file=str(setup.ca_file),
        client_id=client_id,
        clean_session=True,
    )


async def test_mqtt_consumer_over_tls(mqtt_setup: MqttSetup) -> None:
    demo = mqtt_setup.server.demo
    assert demo is not None
    assert topic_of(demo.application_id, "sandbox") == f"sandbox/level13/{demo.application_id}"
    received: list[StreamMessage] = []

    async def consume() -> None:
        async for message in demo_messages(mqtt_setup, client_id="client-tests"):
            received.append(message)
            if len(received) == 3:
                return

    await asyncio.wait_for(consume(), 30)
    assert {message.application_id for message in received} == {demo.application_id}
    assert {message.vin for message in received} <= set(demo.vins.values())
    assert len({message.message_id for message in received}) == 3
    assert all(message.event_id is None for message in received)


async def test_mqtt_consumer_refuses_an_untrusted_broker(mqtt_setup: MqttSetup) -> None:
    demo = mqtt_setup.server.demo
    assert demo is not None
    # aiomqtt reports the failed TLS handshake as its MqttError.
    with pytest.raises(Exception) as caught:
        async with asyncio.timeout(10):
            async for _ in mqtt_messages(
                host="localhost",
                port=mqtt_setup.tls_port,
                application_id=demo.application_id,
                password=mqtt_setup.password,
                environment="sandbox",
            ):
                break  # pragma: no cover - the system trust store does not know the test CA
    assert "certificate" in repr(caught.value).lower() or "ssl" in repr(caught.value).lower()


async def test_a_second_consumer_of_the_application_ends_the_first_with_the_reason(
    mqtt_setup: MqttSetup,
) -> None:
    """One MQTT session per application (the broker makes the client id the username): a
    second connection with the same credentials takes it over. The consumer says so,
    naming the pattern to use, instead of an opaque "Disconnected" (issue #38)."""
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    demo = mqtt_setup.server.demo
    assert demo is not None
    first_message = asyncio.Event()

    async def consume() -> None:
        async for _ in demo_messages(mqtt_setup, client_id="first-consumer"):
            first_message.set()

    consuming = asyncio.create_task(consume())
    await asyncio.wait_for(first_message.wait(), 30)
    second = paho.Client(CallbackAPIVersion.VERSION2, client_id="second-consumer")
    second.username_pw_set(demo.application_id, mqtt_setup.password)
    second.tls_set(ca_certs=str(mqtt_setup.ca_file))
    second.connect("localhost", mqtt_setup.tls_port)
    second.loop_start()
    try:
        with pytest.raises(StreamDisconnected) as ended:
            await asyncio.wait_for(consuming, 15)
    finally:
        second.disconnect()
        second.loop_stop()
    assert "another connection with the same credentials" in str(ended.value)
    assert "One consumer per application" in str(ended.value)
