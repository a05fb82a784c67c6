"""The schema-v2 stream message and how its `message_id` is derived."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

SCHEMA_VERSION = 2

# {capability: {property: [wrapper, ...]}}
StreamData = dict[str, dict[str, list[dict[str, Any]]]]


def message_id(application_id: str, vin: str, data: StreamData) -> str:
    """64 upper-case hex characters, the same for the same content, so a consumer that
    receives a message twice (MQTT is at-least-once; an SSE client may resume from an
    older id) can drop the duplicate. Canonical content: sorted keys, no whitespace."""
    canonical = orjson.dumps({"vin": vin, "data": data}, option=orjson.OPT_SORT_KEYS)
    digest = hashlib.sha256()
    digest.update(application_id.encode())
    digest.update(b"\n")
    digest.update(canonical)
    return digest.hexdigest().upper()


def encode_message(application_id: str, vin: str, data: StreamData) -> tuple[str, bytes]:
    """Returns (message_id, the message as sent on every transport)."""
    mid = message_id(application_id, vin, data)
    body = orjson.dumps(
        {
            "version": SCHEMA_VERSION,
            "application_id": application_id,
            "message_id": mid,
            "vin": vin,
            "data": data,
        }
    )
    return mid, body
