"""Streaming (schema version 2): permission-filtered data messages over MQTT and SSE.

The worker (`tasks.StreamBuilder`) turns the ingestion outbox's `vehicle_data_changed`
events into one message per application that may read the vehicle, written to a
per-application log (`stream_messages`) in the same transaction that completes the
outbox rows. Transports read that log: Server-Sent Events at `GET /v1/stream`
(`routes.py`) and the MQTT publisher (`tasks.MqttPublisher`).
"""
