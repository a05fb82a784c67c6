"""Background work of streaming: the message builder (outbox -> stream log, with log
pruning) and the MQTT publisher (stream log -> broker). Both can run in every replica
at once: outbox rows and publish cursors are leased, never shared."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import structlog

from autoport.kit import outbox
from autoport.kit.db import Connection
from autoport.kit.periodic import wait_for
from autoport.kit.retention import prune_in_batches
from autoport.kit.state import AppState
from autoport.streaming import mosquitto, repository
from autoport.streaming.metrics import MESSAGES_PUBLISHED, PUBLISH_LAG
from autoport.streaming.mosquitto import BrokerAddress, broker_address, topic_of
from autoport.streaming.service import (
    CONSUMER,
    hub_of,
    lookup_readers,
    write_messages,
)

log = structlog.get_logger("autoport.streaming")

BATCH = 500
# What the builder waits on: commits that may have added events.
OUTBOX_TABLES = frozenset({"outbox"})
# Woken by every commit, the builder would claim each commit's events alone; instead the
# next batch starts no sooner than its last one took divided by BUSY_SHARE (so it works
# at most that share of the time, and under steady ingestion the events of many commits
# share one claim), and never more than BATCH_GAP_SECONDS after the last one started.
# At light load a batch takes ~1 ms: an event waits at most ~4 ms for the next one,
# where a fixed gap of 20 ms made it wait up to 20 ms (the p50 and p99 of every stream).
BUSY_SHARE = 0.25
BATCH_GAP_SECONDS = 0.02
PRUNE_EVERY_SECONDS = 60.0
# The publisher waits this long for a wake-up (StreamHub: this process's messages, and
# on PostgreSQL other replicas'), then looks anyway.
MQTT_POLL_SECONDS = 1.0
MQTT_LEASE_SECONDS = 30.0
MQTT_PUBLISH_TIMEOUT = 10.0
MAX_BACKOFF_SECONDS = 30.0
# Messages paho keeps in flight before it waits for PUBACKs.
IN_FLIGHT = 200
# How often the publisher compares the broker's password file with the enabled
# applications' credentials (a disabled application's are removed, the broker reloaded).
CREDENTIALS_SYNC_SECONDS = 5.0
# One replica at a time holds the broker connection (the broker makes a client's id its
# username, so two connections as the publisher would disconnect each other): it renews
# this lease every RENEW seconds; another replica takes over once it has lapsed.
CONNECTION_LEASE = "mqtt-publisher"
CONNECTION_LEASE_SECONDS = 15.0
CONNECTION_RENEW_SECONDS = 5.0


class LostConnectionLease(Exception):
    """Another replica holds the publisher's broker connection now."""


def _worker_id(kind: str) -> str:
    return f"{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class StreamBuilder:
    """Claims the streaming consumer's outbox events and writes the messages."""

    def __init__(self, state: AppState) -> None:
        self.state = state
        self.hub = hub_of(state)
        self.worker_id = _worker_id("stream-builder")
        self.batch = BATCH
        self._next_prune = 0.0

    async def run_once(self) -> int:
        """One batch; returns the number of events handled."""
        db = self.state.database
        now = self.state.clock.now_us()
        # A cheap read first: an idle poll must not take SQLite's write lock.
        if not await outbox.any_due(db, consumer=CONSUMER, now_us=now):
            return 0
        # One transaction takes the events out of the outbox and logs their messages:
        # no lease to write and clear (a crash before the commit leaves the events where
        # they were), one commit a batch.
        async with db.transaction() as conn:
            events = await outbox.take(conn, consumer=CONSUMER, now_us=now, limit=self.batch)
            if not events:
                return 0
            readers = await lookup_readers(conn, events, now_us=now)
            latest = await write_messages(conn, events, readers, now_us=now)
        self.hub.notify(latest)
        return len(events)

    async def prune(self) -> int:
        settings = self.state.settings
        before = self.state.clock.now_us() - int(settings.stream_retention_hours * 3_600_000_000)

        async def batch_of(conn: Connection, batch: int) -> int:
            return await repository.prune(
                conn,
                before_us=before,
                keep_unpublished=settings.mqtt_url is not None,
                batch=batch,
            )

        # In short transactions, as the history (docs/operations.md, Retention).
        return await prune_in_batches(self.state, batch_of)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        settings = self.state.settings
        db = self.state.database
        wake = asyncio.Event()
        stop = db.on_commit(OUTBOX_TABLES, wake.set)
        try:
            while True:
                # Cleared before looking: a commit from here on ends the wait below.
                wake.clear()
                started = loop.time()
                handled = await self._batch(loop)
                finished = loop.time()
                if handled >= self.batch:
                    continue
                # Until an outbox commit: every process's on PostgreSQL, where the poll
                # only catches a lost notification; on SQLite this process's, and other
                # processes' (`autoport` commands, replicas on one file) by polling.
                poll = (
                    settings.stream_safety_poll_seconds
                    if db.sees_other_processes
                    else settings.stream_poll_seconds
                )
                await wait_for(wake, poll)
                # Spaced by how long batches take (BUSY_SHARE), at most the gap (or the
                # poll, if shorter).
                took = finished - started
                gap = min(took / BUSY_SHARE, BATCH_GAP_SECONDS, settings.stream_poll_seconds)
                rest = started + gap - loop.time()
                if rest > 0:
                    await asyncio.sleep(rest)
        finally:
            stop()

    async def _batch(self, loop: asyncio.AbstractEventLoop) -> int:
        """One batch and, when due, the log's pruning; the number of events handled."""
        try:
            handled = await self.run_once()
            if loop.time() >= self._next_prune:
                self._next_prune = loop.time() + PRUNE_EVERY_SECONDS
                pruned = await self.prune()
                if pruned:
                    log.info("stream messages pruned", count=pruned)
        except asyncio.CancelledError:
            raise
        except Exception:
            # The events stay in the outbox (their lease expires); keep serving.
            log.exception("stream builder batch failed")
            await asyncio.sleep(1.0)
            return 0
        return handled


class MqttPublisher:
    """Publishes each application's log to its topic at QoS 1. The cursor moves only
    after the broker's PUBACK for every message up to it; on any failure the client
    reconnects with backoff and republishes from the cursor (at-least-once: duplicates
    carry the same message_id)."""

    def __init__(self, state: AppState, address: BrokerAddress) -> None:
        self.state = state
        self.address = address
        self.hub = hub_of(state)
        self.worker_id = _worker_id("mqtt-publisher")
        self.connected = asyncio.Event()
        self._acks = asyncio.Event()

    async def run(self) -> None:
        import aiomqtt

        backoff = 0.2
        while True:
            try:
                if not await self._hold_connection():
                    # Another replica publishes; take over if its lease lapses.
                    await asyncio.sleep(CONNECTION_RENEW_SECONDS)
                    continue
                async with aiomqtt.Client(
                    self.address.host,
                    self.address.port,
                    username=self.address.username,
                    password=self.address.password,
                    identifier=self.worker_id,
                    timeout=MQTT_PUBLISH_TIMEOUT,
                    keepalive=15,
                    max_inflight_messages=IN_FLIGHT,
                    tls_context=self.address.tls_context(),
                ) as client:
                    self._hook_acks(client)
                    log.info(
                        "mqtt publisher connected",
                        host=self.address.host,
                        port=self.address.port,
                        tls=self.address.tls,
                    )
                    self.connected.set()
                    backoff = 0.2
                    await self._publish_forever(client)
            except asyncio.CancelledError:
                # Stopping: hand the connection to another replica at once.
                with contextlib.suppress(Exception):
                    await self._release()
                raise
            except Exception as error:
                # Includes aiomqtt.MqttError: broker down, refused, or a publish timeout.
                self.connected.clear()
                log.warning("mqtt publisher disconnected", error=str(error), retry_in=backoff)
                with contextlib.suppress(Exception):
                    await self._release()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    async def _hold_connection(self) -> bool:
        now = self.state.clock.now_us()
        return await repository.take_lease(
            self.state.database,
            name=CONNECTION_LEASE,
            holder=self.worker_id,
            now_us=now,
            until_us=now + int(CONNECTION_LEASE_SECONDS * 1_000_000),
        )

    async def _release(self) -> None:
        async with self.state.database.transaction() as conn:
            await repository.release_mqtt_leases(conn, worker_id=self.worker_id)
            await repository.release_lease(conn, name=CONNECTION_LEASE, holder=self.worker_id)

    async def _publish_forever(self, client: object) -> None:
        loop = asyncio.get_running_loop()
        next_sync = next_renew = loop.time()
        while True:
            if loop.time() >= next_renew:
                next_renew = loop.time() + CONNECTION_RENEW_SECONDS
                if not await self._hold_connection():
                    raise LostConnectionLease("another replica holds the broker connection")
            if loop.time() >= next_sync:
                next_sync = loop.time() + CREDENTIALS_SYNC_SECONDS
                await self.sync_credentials()
            waiter = self.hub.any_waiter()
            published = await self.publish_due(client)
            if not published:
                await wait_for(waiter, MQTT_POLL_SECONDS)

    async def sync_credentials(self) -> bool:
        """Make the broker's password file and ACL (in `mqtt_config_dir`) those of the
        enabled applications, and reload the broker, when they differ: an application
        disabled anywhere (admin API, CLI, another replica) loses its broker access, and
        its open connections end, within CREDENTIALS_SYNC_SECONDS. Returns whether the
        files were rewritten."""
        directory = self.state.settings.mqtt_config_dir
        if directory is None:
            return False
        installed = mosquitto.installed_applications(directory, publisher=self.address.username)
        if installed is None:
            return False  # the operator has not written the broker's files there
        rows = await repository.list_mqtt_credentials(self.state.database.reader)
        if installed == {(application_id, hashed) for _, application_id, hashed in rows}:
            return False
        files = mosquitto.render(self.state.settings, directory=directory, applications=rows)
        try:
            mosquitto.write(files, directory, only=frozenset({"passwd", "acl"}))
        except OSError as error:
            # Publishing goes on; the next pass tries again.
            log.warning("mqtt credential files not writable", error=str(error))
            return False
        reloaded = mosquitto.reload(directory)
        log.info("mqtt credentials updated", applications=len(rows), broker_reloaded=reloaded)
        return True

    async def publish_due(self, client: object) -> int:
        db = self.state.database
        if not await repository.any_mqtt_due(db.reader):
            return 0
        due = await repository.claim_mqtt_due(
            db,
            worker_id=self.worker_id,
            now_us=self.state.clock.now_us(),
            lease_us=int(MQTT_LEASE_SECONDS * 1_000_000),
            limit=100,
        )
        counts = await asyncio.gather(*(self._publish_app(client, item) for item in due))
        return sum(counts)

    async def _publish_batch(self, client: Any, topic: str, bodies: list[bytes]) -> None:
        """Publish at QoS 1 and return once the broker acknowledged every message.

        Why paho directly: aiomqtt's `publish` awaits one message at a time and scans
        all pending calls on each (quadratic); here paho queues the batch, keeps its
        in-flight window full by itself, and one event per PUBACK batch wakes us."""
        import aiomqtt
        from paho.mqtt.client import MQTT_ERR_SUCCESS

        paho = client._client
        disconnected: asyncio.Future[None] = client._disconnected
        infos = []
        for body in bodies:
            info = paho.publish(topic, body, 1)
            if info.rc != MQTT_ERR_SUCCESS:
                raise aiomqtt.MqttCodeError(info.rc, "could not publish")
            infos.append(info)
        deadline = asyncio.get_running_loop().time() + MQTT_PUBLISH_TIMEOUT
        acked = 0
        while True:
            # PUBACKs arrive in order, so scanning from the first unacknowledged is linear.
            while acked < len(infos) and infos[acked].is_published():
                acked += 1
            if acked == len(infos):
                return
            if disconnected.done():
                raise aiomqtt.MqttError("disconnected before every PUBACK arrived")
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise aiomqtt.MqttError("timed out waiting for PUBACKs")
            self._acks.clear()
            await wait_for(self._acks, min(left, 0.5))

    def _hook_acks(self, client: Any) -> None:
        """Wake `_publish_batch` on each PUBACK (paho calls back on the loop's thread)."""
        paho = client._client
        original = paho.on_publish

        def on_publish(*args: Any) -> None:
            original(*args)
            self._acks.set()

        paho.on_publish = on_publish

    async def _publish_app(self, client: object, due: repository.MqttDue) -> int:
        db = self.state.database
        if await repository.get_application_disabled(db.reader, due.application_id):
            # Logged before it was disabled: not delivered (the cursor moves past it).
            async with db.transaction() as conn:
                await repository.advance_mqtt(
                    conn,
                    environment=due.environment,
                    application_id=due.application_id,
                    seq=due.last_seq,
                    worker_id=self.worker_id,
                )
            return 0
        messages = await repository.list_messages_after(
            db.reader,
            environment=due.environment,
            application_id=due.application_id,
            after=due.mqtt_seq,
            limit=BATCH,
        )
        if messages:
            topic = topic_of(due.environment, due.application_id)
            await self._publish_batch(client, topic, [m.message.encode() for m in messages])
            upto = messages[-1].seq
        else:
            # Nothing logged beyond the cursor: pruned while MQTT was off.
            upto = due.last_seq
        async with db.transaction() as conn:
            await repository.advance_mqtt(
                conn,
                environment=due.environment,
                application_id=due.application_id,
                seq=upto,
                worker_id=self.worker_id,
            )
        now = self.state.clock.now_us()
        MESSAGES_PUBLISHED.labels("mqtt").inc(len(messages))
        for m in messages:
            PUBLISH_LAG.labels("mqtt").observe(max(0, now - m.ingested_at) / 1_000_000)
        return len(messages)


@contextlib.asynccontextmanager
async def streaming_worker(state: AppState) -> AsyncIterator[None]:
    """The builder always runs (SSE is built in); the MQTT publisher when configured."""
    tasks = [asyncio.create_task(StreamBuilder(state).run(), name="stream-builder")]
    address = broker_address(state.settings)
    if address is not None:
        tasks.append(
            asyncio.create_task(MqttPublisher(state, address).run(), name="mqtt-publisher")
        )
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
