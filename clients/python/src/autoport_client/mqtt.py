"""MQTT consumer of an application's stream (extra `mqtt`: pip install
'autoport-client[mqtt]', which brings aiomqtt).

    async for message in mqtt_messages(host="broker.example.com", application_id=APP_ID,
                                       password=PASSWORD, environment="production"):
        ...

The topic is `{live|sandbox}/level13/{application_id}` (the broker's ACL allows only
your own); QoS 1 with a persistent session (fixed client id, clean_session off), so the
broker keeps what arrives while you are away. Delivery is at-least-once: messages are
de-duplicated by `message_id`. TLS is on by default (port 8883, host name checked,
`ca_file` for a private CA); `tls=False` is for a broker on the same machine."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator

from autoport_client._core import Deduplicator
from autoport_client.errors import AutoportError, StreamDisconnected
from autoport_client.types import Environment, StreamMessage


def topic_of(application_id: str, environment: Environment) -> str:
    return f"{'live' if environment == 'production' else 'sandbox'}/level13/{application_id}"


async def mqtt_messages(
    *,
    host: str,
    application_id: str,
    password: str,
    environment: Environment = "production",
    port: int | None = None,
    tls: bool = True,
    ca_file: str | None = None,
    client_id: str | None = None,
    clean_session: bool = False,
) -> AsyncIterator[StreamMessage]:
    """The application's messages, once each (by `message_id`), until cancelled.

    Raises `StreamDisconnected` when the broker closes the connection: another connection
    with the application's credentials took its one session over (docs/streaming.md)."""
    try:
        import aiomqtt
    except ImportError as missing:  # pragma: no cover - depends on the install
        raise AutoportError(
            "the MQTT consumer needs the mqtt extra: pip install 'autoport-client[mqtt]'"
        ) from missing
    context: ssl.SSLContext | None = None
    if tls:
        context = ssl.create_default_context(cafile=ca_file)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
    seen = Deduplicator()
    subscribed = False
    try:
        async with aiomqtt.Client(
            hostname=host,
            port=port if port is not None else (8883 if tls else 1883),
            username=application_id,
            password=password,
            identifier=client_id or f"autoport-client-{application_id}",
            clean_session=clean_session,
            tls_context=context,
        ) as client:
            await client.subscribe(topic_of(application_id, environment), qos=1)
            subscribed = True
            async for raw in client.messages:
                message = StreamMessage.from_dict(json.loads(raw.payload))
                if seen.first_time(message.message_id):
                    yield message
    except aiomqtt.MqttError as error:
        if not subscribed:
            raise  # connecting failed: refused, TLS, unreachable
        # The broker makes every client id the username: one session per application.
        raise StreamDisconnected(
            f"the broker closed the connection ({error}). Only one consumer holds an "
            "application's MQTT session: another connection with the same credentials "
            "(a second process or consumer) takes it over; run one consumer, or one "
            "application per consumer (docs/streaming.md, One consumer per application)"
        ) from error


__all__ = ["mqtt_messages", "topic_of"]
