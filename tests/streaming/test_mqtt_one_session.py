"""One MQTT session per application (issue #38): two consumers with one application's
credentials take the session from each other, because the broker makes every client id
the username (`use_username_as_clientid`, so no application can take over another's
session). MQTT 5 lets a broker say why: DISCONNECT with reason code 0x8E, "Session taken
over", so the consumer can stop instead of reconnecting (paho's loop takes the session
back, for ever). Debian 12's Mosquitto 2.0.11 closes the connection without that packet
(paho then reports 0x80, "Unspecified error"); newer releases send it. Real Mosquitto
configured by autoport, paho clients speaking MQTT 5, each sending a client id of its own
(the broker ignores them). docs/streaming.md, "One consumer per application", says the
patterns to use."""

from __future__ import annotations

import threading
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.reasoncodes import ReasonCode

from autoport.config import Settings
from autoport.kit.db import Database
from tests.streaming.conftest import Broker, create_application, issue_credentials

SESSION_TAKEN_OVER = 0x8E
UNSPECIFIED = 0x80  # what paho reports when the socket closes without a DISCONNECT


class Consumer:
    """A paho client (MQTT 5, persistent session) that records how it was disconnected."""

    def __init__(self, name: str, username: str, password: str, port: int) -> None:
        self.connected = threading.Event()
        self.disconnected = threading.Event()
        self.reasons: list[ReasonCode] = []
        self.client = paho.Client(
            CallbackAPIVersion.VERSION2, client_id=name, protocol=MQTTProtocolVersion.MQTTv5
        )
        self.client.username_pw_set(username, password)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.connect("127.0.0.1", port, clean_start=False)
        self.client.loop_start()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if not reason.is_failure:
            self.connected.set()

    def _on_disconnect(
        self, client: Any, userdata: Any, flags: Any, reason: ReasonCode, props: Any
    ) -> None:
        self.reasons.append(reason)
        self.disconnected.set()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.mark.mqtt
async def test_a_second_consumer_takes_the_session_and_the_first_is_told_why(
    mqtt_settings: Settings, broker: Broker, database: Database
) -> None:
    app_id = await create_application(database)
    password = await issue_credentials(database, app_id)
    await broker.write_config(database)
    await broker.start()
    first = Consumer("consumer-one", app_id, password, broker.port)
    second = None
    try:
        assert first.connected.wait(10), "the first consumer did not connect"
        second = Consumer("consumer-two", app_id, password, broker.port)
        assert second.connected.wait(10), "the second consumer did not connect"
        assert first.disconnected.wait(10), "the first consumer kept the session"
        reason = first.reasons[0]  # (paho reports the closed socket after it, too)
        assert reason.value in (SESSION_TAKEN_OVER, UNSPECIFIED), first.reasons
        assert not second.disconnected.is_set()
    finally:
        first.client.loop_stop()
        if second is not None:
            second.close()
