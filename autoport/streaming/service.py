"""Turning outbox events into per-application stream messages, and the in-process hub
that wakes transports when new messages are committed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import structlog

from autoport.catalog.brands import UNKNOWN_BRAND
from autoport.config import Settings
from autoport.kit import outbox
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment
from autoport.kit.state import AppState, parts_of
from autoport.streaming import mosquitto, repository
from autoport.streaming.metrics import MESSAGES_BUILT
from autoport.streaming.schemas import SCHEMA_VERSION, StreamData, encode_message
from autoport.vehicles import access
from autoport.vehicles.access import Reader

log = structlog.get_logger("autoport.streaming")

CONSUMER = "streaming"
DATA_EVENT = "vehicle_data_changed"
COMMAND_EVENT = "command_changed"
# Other events routed to this consumer change who may read, which the reader lookup sees at
# the next data event; they produce no message and are acknowledged.
ACKNOWLEDGED_EVENTS = frozenset({"authorization_changed", "fleet_clearance_changed"})

StreamKey = tuple[Environment, str]  # (environment, application_id)
# Commits to these are logged messages (StreamHub.listen).
LOG_TABLES = frozenset({"stream_messages"})


def permitted_data(data: Mapping[str, Any], properties: frozenset[str]) -> StreamData:
    """The part of `data` ({capability: {property: wrapper | [wrapper]}}) whose
    "capability.property" is in `properties`; every value becomes a list of wrappers."""
    kept: StreamData = {}
    for capability, values in data.items():
        if not isinstance(values, Mapping):
            continue
        group: dict[str, list[dict[str, Any]]] = {}
        for name, value in values.items():
            if f"{capability}.{name}" not in properties:
                continue
            wrappers = value if isinstance(value, list) else [value]
            wrappers = [w for w in wrappers if isinstance(w, dict)]
            if wrappers:
                group[name] = wrappers
        if group:
            kept[capability] = group
    return kept


@dataclass(frozen=True, slots=True)
class BuiltMessage:
    environment: Environment
    application_id: str
    vin: str
    message_id: str
    body: bytes
    ingested_at: int


def messages_for(event: outbox.OutboxEvent, readers: Iterable[Reader]) -> list[BuiltMessage]:
    """One message per reader that may see at least one of the event's properties."""
    payload = event.payload
    vin = event.vin or payload.get("vin")
    data = payload.get("data")
    if not isinstance(vin, str) or not isinstance(data, Mapping):
        log.warning("stream event without vin or data ignored", outbox_id=event.id)
        return []
    built = []
    for reader in readers:
        visible = permitted_data(data, reader.properties)
        if not visible:
            continue
        mid, body = encode_message(reader.application_id, vin, visible)
        built.append(
            BuiltMessage(event.environment, reader.application_id, vin, mid, body, event.created_at)
        )
    return built


def command_message(event: outbox.OutboxEvent) -> BuiltMessage | None:
    """A `command_changed` message for the application that sent the command."""
    vin = _event_vin(event)
    command = event.payload.get("command")
    if vin is None or event.application_id is None or not isinstance(command, Mapping):
        log.warning("command event without vin, application or command ignored", outbox_id=event.id)
        return None
    mid = f"cmd-{command.get('id')}-{command.get('status')}"
    body = orjson.dumps(
        {
            "version": SCHEMA_VERSION,
            "application_id": event.application_id,
            "message_id": mid,
            "vin": vin,
            "type": COMMAND_EVENT,
            "command": command,
        }
    )
    return BuiltMessage(event.environment, event.application_id, vin, mid, body, event.created_at)


def _event_vin(event: outbox.OutboxEvent) -> str | None:
    vin = event.vin or event.payload.get("vin")
    return vin if isinstance(vin, str) else None


# (environment, vin, brand of the data) -> who may read that data.
ReadersByVin = Mapping[tuple[Environment, str, str], list[Reader]]


def _event_brand(event: outbox.OutboxEvent) -> str:
    brand = event.payload.get("brand")
    return brand if isinstance(brand, str) else UNKNOWN_BRAND


async def lookup_readers(
    conn: Connection, events: list[outbox.OutboxEvent], *, now_us: int
) -> dict[tuple[Environment, str, str], list[Reader]]:
    """Who may read each VIN of the data events, for the brand its data is stored as:
    two queries per environment (more only when a batch holds one VIN under two brands)."""
    wanted: dict[Environment, set[tuple[str, str]]] = {}
    for event in events:
        if event.event_type == DATA_EVENT and (vin := _event_vin(event)) is not None:
            wanted.setdefault(event.environment, set()).add((vin, _event_brand(event)))
    found: dict[tuple[Environment, str, str], list[Reader]] = {}
    for environment, pairs in wanted.items():
        left = sorted(pairs)
        while left:
            # One brand per VIN and query.
            brands: dict[str, str] = {}
            rest = []
            for vin, brand in left:
                if vin in brands:
                    rest.append((vin, brand))
                else:
                    brands[vin] = brand
            per_vin = await access.readers_of_many(
                conn,
                environment=environment,
                vins=sorted(brands),
                now_us=now_us,
                brands=brands,
            )
            for vin, readers in per_vin.items():
                found[(environment, vin, brands[vin])] = readers
            left = rest
    return found


async def write_messages(
    conn: Connection,
    events: list[outbox.OutboxEvent],
    readers: ReadersByVin,
    *,
    now_us: int,
) -> dict[StreamKey, int]:
    """Build and log the messages of events taken from the outbox (`outbox.take`), in the
    caller's transaction, the one that took them. Returns the last sequence number
    written per application."""
    per_app: dict[StreamKey, list[BuiltMessage]] = {}
    for event in events:
        if event.event_type == COMMAND_EVENT:
            # Only the application that sent the command sees it.
            built = command_message(event)
            if built is not None:
                per_app.setdefault((built.environment, built.application_id), []).append(built)
            continue
        if event.event_type != DATA_EVENT:
            if event.event_type not in ACKNOWLEDGED_EVENTS:
                log.warning("unexpected stream event acknowledged", event_type=event.event_type)
            continue
        vin = _event_vin(event)
        if vin is None:
            log.warning("stream event without vin ignored", outbox_id=event.id)
            continue
        key = (event.environment, vin, _event_brand(event))
        for message in messages_for(event, readers.get(key, ())):
            per_app.setdefault((message.environment, message.application_id), []).append(message)

    latest: dict[StreamKey, int] = {}
    rows: list[dict[str, Any]] = []
    # Cursor rows are locked in one global order so that concurrent workers cannot deadlock.
    for app_key in sorted(per_app):
        messages = per_app[app_key]
        environment, application_id = app_key
        first = await repository.allocate_seqs(
            conn,
            environment=environment,
            application_id=application_id,
            count=len(messages),
            now_us=now_us,
        )
        for offset, message in enumerate(messages):
            rows.append(
                {
                    "environment": str(environment),
                    "application_id": application_id,
                    "seq": first + offset,
                    "message_id": message.message_id,
                    "vin": message.vin,
                    "message": message.body.decode(),
                    "ingested_at": message.ingested_at,
                    "created_at": now_us,
                }
            )
        latest[app_key] = first + len(messages) - 1
    if rows:
        await repository.create_messages(conn, rows)
    MESSAGES_BUILT.inc(len(rows))
    return latest


class StreamHub:
    """Wakes this process's SSE streams and MQTT publisher as soon as messages are
    committed: this process's at once (`notify`), other replicas' on PostgreSQL's commit
    notification (`listen`), else by polling (the fallback)."""

    def __init__(self) -> None:
        self._stop_listening: Callable[[], None] | None = None
        self._waiters: dict[StreamKey, asyncio.Event] = {}
        self._any = asyncio.Event()
        # Set by close(): the server is stopping and SSE streams end.
        self.closed = False
        # Bumped by access_changed(): every SSE stream verifies its token again now.
        self.access_generation = 0

    def listen(self, database: Database) -> None:
        """Wake every waiter when another process logs messages (PostgreSQL's commit
        notifications; SQLite hears only this process's commits, which `notify` names),
        until `close`."""

        def logged() -> None:
            if database.sees_other_processes:
                self.wake_all()

        self._stop_listening = database.on_commit(LOG_TABLES, logged)

    def access_changed(self) -> None:
        """A token was revoked, a grant ended or an application was disabled in this
        process: wake every stream to check its caller at once (other processes' streams
        find out at their next periodic check)."""
        self.access_generation += 1
        waiters, self._waiters = self._waiters, {}
        for event in waiters.values():
            event.set()

    def waiter(self, key: StreamKey) -> asyncio.Event:
        """Take the event *before* reading the log: a notify between the read and the
        wait then still wakes the reader."""
        event = self._waiters.get(key)
        if event is None:
            event = self._waiters[key] = asyncio.Event()
            if self.closed:
                event.set()
        return event

    def close(self) -> None:
        """Wake every SSE stream for the last time: each sees `closed` and ends, and
        its client reconnects with Last-Event-ID (to another replica, or to this one
        once restarted) instead of holding the shutdown for its grace period. The MQTT
        publisher is left alone: the lifespan stops it once requests are done."""
        self.closed = True
        if self._stop_listening is not None:
            self._stop_listening()
        for event in self._waiters.values():
            event.set()

    def any_waiter(self) -> asyncio.Event:
        return self._any

    def wake_all(self) -> None:
        """Messages were committed elsewhere, for applications unknown here: every waiter
        reads its log again (finding nothing new costs it one read)."""
        waiters, self._waiters = self._waiters, {}
        for event in waiters.values():
            event.set()
        self._any.set()
        self._any = asyncio.Event()

    def notify(self, keys: Iterable[StreamKey]) -> None:
        woke = False
        for key in keys:
            woke = True
            event = self._waiters.pop(key, None)
            if event is not None:
                event.set()
        if woke:
            self._any.set()
            self._any = asyncio.Event()


# An open stream's row counts this many re-check intervals after its last renewal (it
# renews at each re-check): the streams of a process that died stop counting then.
CONNECTION_LEASE_INTERVALS = 3


def _connection_lease_us(state: AppState) -> int:
    seconds = state.settings.stream_auth_recheck_seconds * CONNECTION_LEASE_INTERVALS
    return int(seconds * 1_000_000)


async def admit_stream(state: AppState, key: StreamKey, *, limit: int) -> str | None:
    """Register one more open SSE stream of the application; its id, or None when the
    application already has `limit` open (in every process: counted in the database)."""
    environment, application_id = key
    connection_id = uuid.uuid4().hex
    now = state.clock.now_us()
    db = state.database
    async with db.transaction() as conn:
        await repository.delete_expired_connections(
            conn, environment=environment, application_id=application_id, now_us=now
        )
        await repository.hold_connection(
            conn,
            connection_id=connection_id,
            environment=environment,
            application_id=application_id,
            now_us=now,
            until_us=now + _connection_lease_us(state),
        )
    # Counted once our row is committed: of two streams racing for the last slot, each
    # sees the other, so both may be refused (and retry), never both admitted.
    count = await repository.get_live_connection_count(
        db.reader, environment=environment, application_id=application_id, now_us=now
    )
    if count > limit:
        await close_stream(state, connection_id)
        return None
    return connection_id


async def renew_stream(state: AppState, key: StreamKey, connection_id: str) -> None:
    now = state.clock.now_us()
    async with state.database.transaction() as conn:
        await repository.hold_connection(
            conn,
            connection_id=connection_id,
            environment=key[0],
            application_id=key[1],
            now_us=now,
            until_us=now + _connection_lease_us(state),
        )


async def close_stream(state: AppState, connection_id: str) -> None:
    async with state.database.transaction() as conn:
        await repository.delete_connection(conn, connection_id)


# ------------------------------------------------------------------ MQTT credentials


async def issue_mqtt_credentials(
    db: Database,
    settings: Settings,
    *,
    environment: Environment,
    application_id: str,
    now_us: int,
) -> dict[str, Any]:
    """A new MQTT password for the application (`autoport streaming credentials` and the
    console): only its hash is stored; the broker's password and ACL files are rewritten
    and the broker reloaded when `mqtt_config_dir` is set. The password is in the answer
    and nowhere else: shown once."""
    password = mosquitto.new_password()
    async with db.transaction() as conn:
        await repository.create_mqtt_password(
            conn,
            environment=environment,
            application_id=application_id,
            password_hash=mosquitto.password_hash(password),
            now_us=now_us,
        )
    written: list[str] = []
    reloaded = False
    if settings.mqtt_config_dir is not None:
        rows = await repository.list_mqtt_credentials(db.reader)
        files = mosquitto.render(settings, directory=settings.mqtt_config_dir, applications=rows)
        # Only the credential files: an operator's edits to mosquitto.conf stay.
        paths = mosquitto.write(files, settings.mqtt_config_dir, only=frozenset({"passwd", "acl"}))
        written = [str(path) for path in paths]
        reloaded = mosquitto.reload(settings.mqtt_config_dir)
    return {**mqtt_connection(settings, environment, application_id), "password": password,
            "files_updated": written, "broker_reloaded": reloaded}  # fmt: skip


def mqtt_connection(
    settings: Settings, environment: Environment, application_id: str
) -> dict[str, Any]:
    """Where and as whom the application subscribes (no password)."""
    address = mosquitto.broker_address(settings)
    return {
        "application_id": application_id,
        "environment": str(environment),
        "host": address.host if address else "127.0.0.1",
        "port": address.port if address else mosquitto.DEFAULT_PORT,
        "tls_port": mosquitto.announced_tls_port(settings),
        "username": application_id,
        "topic": mosquitto.topic_of(environment, application_id),
        "qos": 1,
    }


class StreamingParts(Protocol):
    """The parts streaming reads (autoport.state.Parts; mypy checks it has them)."""

    @property
    def hub(self) -> StreamHub: ...


def hub_of(state: AppState) -> StreamHub:
    """This process's stream hub, built once by the app layer."""
    parts: StreamingParts = parts_of(state)
    return parts.hub


# ------------------------------------------- reads of the console (autoport.console)


async def latest_messages(
    conn: Connection, *, environment: Environment, application_id: str, limit: int
) -> list[repository.LoggedMessage]:
    """The application's newest stream messages, newest first."""
    return await repository.list_latest_messages(
        conn, environment=environment, application_id=application_id, limit=limit
    )


async def mqtt_issued_at(conn: Connection, application_id: str) -> int | None:
    """When the application's MQTT password was issued (None: never)."""
    return await repository.get_mqtt_credentials_issued_at(conn, application_id)
