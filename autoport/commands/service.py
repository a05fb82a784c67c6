"""Vehicle commands: who may send which command to which vehicle, accepting it (once,
whatever the retries), waiting for it, and reading it back.

Access (interface.md, Vehicle commands): the caller must be allowed to read the vehicle
exactly as for the pull (an approved grant inside its window, or an approved fleet
clearance; the brand activated) and its token must hold `<capability>.set.<property>` for
every property the command writes. A vehicle token carries the set scopes of the commands
the owner granted; a client_credentials token those of the commands the application
registered, which an approved fleet clearance allows. Another application's command is
404 (it does not exist for the caller).

Execution happens in autoport.commands.tasks; this module accepts commands, records
their status changes (with their `command_changed` events) and answers them.

Service boundary (docs/development.md): the functions that touch the database take a
`Connection` first, except `submit` and `view` (see their comments).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import orjson

from autoport.brands.base import CommandOutcome
from autoport.catalog.commands import COMMANDS, Command
from autoport.catalog.validation import DataPointError
from autoport.commands import repository
from autoport.commands.schemas import CANCELLED, EXECUTED, PENDING, SENT, CommandIn, CommandRow
from autoport.kit import outbox
from autoport.kit.auth import Caller, CallerKind
from autoport.kit.clock import MICROS
from autoport.kit.db import Connection
from autoport.kit.errors import ApiError
from autoport.kit.periodic import wait_for
from autoport.kit.ratelimit import RateLimiter
from autoport.kit.state import AppState, parts_of
from autoport.vehicle_data.service import by_capability, check_vin, stored_vehicle, visible
from autoport.vehicles.access import (
    DATA_SCOPE,
    Lost,
    Standing,
    Way,
    brand_serves,
    readable_properties,
    standings,
)

COMMAND_EVENT = "command_changed"
IDEMPOTENCY_WINDOW_US = 24 * 3600 * MICROS
IDEMPOTENCY_KEY_MAX = 255
PATH = "/v1/vehicle-commands"


# ------------------------------------------------------------------ in-process wake-ups


@dataclass(eq=False)
class Waiter:
    """One `Prefer: wait` request's wake-up, with the command as it changed (in hand: no
    read of it again)."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    row: CommandRow | None = None


@dataclass
class CommandHub:
    """Wakes this process's worker when a command is accepted here, and `Prefer: wait`
    requests when one changes here (handing them the changed command). Other processes'
    changes are found by polling."""

    work: asyncio.Event = field(default_factory=asyncio.Event)
    waiters: dict[str, list[Waiter]] = field(default_factory=dict)
    # (environment, application id) -> its `Prefer: wait` requests waiting in this process.
    waiting: dict[tuple[str, str], int] = field(default_factory=dict)

    def accepted(self) -> None:
        self.work.set()

    def changed(self, row: CommandRow) -> None:
        for waiter in self.waiters.pop(row.id, ()):
            waiter.row = row
            waiter.event.set()

    def waiter(self, command_id: str) -> Waiter:
        waiter = Waiter()
        self.waiters.setdefault(command_id, []).append(waiter)
        return waiter

    def forget(self, command_id: str, waiter: Waiter) -> None:
        waiters = self.waiters.get(command_id)
        if waiters is not None and waiter in waiters:
            waiters.remove(waiter)
            if not waiters:
                del self.waiters[command_id]


@contextlib.asynccontextmanager
async def wait_slot(state: AppState, caller: Caller, wait: float | None) -> AsyncIterator[None]:
    """Around a request that will wait (`Prefer: wait`): one of the application's
    `vehicle_command_max_waiting_per_application` places in this process, or 429 before
    anything is done (no command accepted: the client retries, or sends without waiting
    and reads the command later). Each waiter holds a connection and, for a command
    another process runs, reads it every 0.1 s: an application must not hold them all."""
    if wait is None:
        yield
        return
    hub = hub_of(state)
    key = (str(caller.environment), caller.application_id)
    limit = state.settings.vehicle_command_max_waiting_per_application
    if hub.waiting.get(key, 0) >= limit:
        raise ApiError(
            429,
            f"Prefer: this application already has {limit} requests waiting for commands, "
            "the most it may; send without Prefer: wait and read the command (or follow "
            "command_changed), or retry",
            title="Too Many Requests",
            source="Prefer",
            headers={"Retry-After": "1"},
        )
    hub.waiting[key] = hub.waiting.get(key, 0) + 1
    try:
        yield
    finally:
        left = hub.waiting[key] - 1
        if left:
            hub.waiting[key] = left
        else:
            del hub.waiting[key]


class CommandsParts(Protocol):
    """The parts commands read (autoport.state.Parts; mypy checks it has them)."""

    @property
    def command_hub(self) -> CommandHub: ...
    # Commands per vehicle, apart from reads (a parked car's 12 V battery).
    @property
    def command_limit(self) -> RateLimiter: ...


def hub_of(state: AppState) -> CommandHub:
    """The app's hub, built once by the app layer (autoport.state)."""
    parts: CommandsParts = parts_of(state)
    return parts.command_hub


def limiter_of(state: AppState) -> RateLimiter:
    parts: CommandsParts = parts_of(state)
    return parts.command_limit


# --------------------------------------------------------------------------- checks


def find_command(capability: str, name: str) -> Command:
    command = COMMANDS.get(capability, name)
    if command is not None:
        return command
    if not COMMANDS.of_capability(capability):
        raise ApiError(
            422,
            f"capability: {capability!r} has no commands (or does not exist)",
            source="capability",
        )
    known = ", ".join(c.name for c in COMMANDS.of_capability(capability))
    raise ApiError(
        422, f"command: {capability} has no command {name!r} (it has: {known})", source="command"
    )


def check_arguments(command: Command, arguments: object) -> dict[str, object]:
    try:
        return command.validate(arguments)
    except DataPointError as error:
        raise ApiError(422, str(error), source=error.path) from None


async def authorize(
    state: AppState, caller: Caller, vin: str, command: Command
) -> tuple[frozenset[str], str]:
    """What the caller may read of `vin` and the brand it reaches `vin` through; 403
    saying why not (the missing scope named)."""
    readable, brand = await readable_properties(state, caller, vin)
    for scope in command.scopes:
        if not caller.has_scope(scope):
            how = (
                "the owner did not grant this command"
                if caller.kind is CallerKind.vehicle
                else "the application did not register this command"
            )
            raise ApiError(
                403,
                f"the access token lacks the scope '{scope}' ({how}: {command.key})",
                source="scope",
            )
    return readable, brand


def check_idempotency_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not key or len(key) > IDEMPOTENCY_KEY_MAX or not key.isprintable():
        raise ApiError(
            400,
            f"Idempotency-Key: must be 1 to {IDEMPOTENCY_KEY_MAX} printable characters",
            source="Idempotency-Key",
        )
    return key


def request_hash(vin: str, capability: str, command: str, arguments: dict[str, object]) -> str:
    body = orjson.dumps(
        {"vin": vin, "capability": capability, "command": command, "arguments": arguments},
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.sha256(body).hexdigest()


async def emit(conn: Connection, commands: Sequence[CommandRow], now_us: int) -> None:
    """`command_changed` of each command to webhooks and streams, in the transaction of
    the change, in one statement. Every status change reaches the stream (its log is
    read back by SSE clients resuming); the webhooks consumer gets the event only when
    the application's webhook subscribes to it (otherwise it would consume the row
    without a delivery: a third of a command's outbox rows, written and read for
    nothing). Read in the same transaction, so a subscription committed before the change
    gets it."""
    if not commands:
        return
    hooks = await repository.list_webhook_subscriptions(conn, [c.application_id for c in commands])
    subscribed = {key for key, events in hooks.items() if COMMAND_EVENT in events}
    await outbox.emit_many(
        conn,
        [
            outbox.NewEvent(
                environment=command.environment,
                event_type=COMMAND_EVENT,
                payload={"vin": command.vin, "brand": command.brand, "command": command.as_dict()},
                vin=command.vin,
                application_id=command.application_id,
                consumers=None
                if (str(command.environment), command.application_id) in subscribed
                else _STREAM_ONLY,
            )
            for command in commands
        ],
        now_us=now_us,
    )


_STREAM_ONLY = ("streaming",)


@dataclass(frozen=True, slots=True)
class Claimed:
    sent: list[CommandRow]  # to be handed to the carmaker now
    cancelled: list[CommandRow]  # their access was withdrawn: never sent


# The spec's failure reason of a command cancelled because its access was withdrawn.
WITHDRAWN_REASON = "unauthorised"


def _way(row: CommandRow) -> Way:
    return Way(row.environment, row.application_id, row.vin, row.authorization_id)


def withdrawn(row: CommandRow, standing: Standing | Lost) -> str | None:
    """Why the access `row` was accepted under no longer allows it, or None: the same
    rule as at submit (`authorize`), read again: the grant or clearance, the application
    enabled, the brand activated, and every `set` scope of the command granted (by the
    owner through an authorization, registered by the application through a clearance)."""
    if isinstance(standing, Lost):
        return standing.reason
    if standing.brand != row.brand:
        return f"the access is now for the brand {standing.brand!r}, not {row.brand!r}"
    command = COMMANDS.get(row.capability, row.command)
    key = f"{row.capability}.{row.command}"
    granted = set(COMMANDS.scopes_for(k for k in standing.commands if COMMANDS.by_key(k)))
    missing = [scope for scope in (command.scopes if command else (key,)) if scope not in granted]
    if not missing:
        return None
    holder = (
        "the owner's authorization no longer grants"
        if row.authorization_id is not None
        else "the application no longer registers"
    )
    return f"{holder} {key} (scope '{missing[0]}')"


# (status, failure reason, description) -> the commands that end so.
_Outcomes = dict[tuple[str, str | None, str | None], list[CommandRow]]


async def claim(conn: Connection, *, worker_id: str, now_us: int, limit: int) -> Claimed:
    """Take up to `limit` due pending commands: each is `sent` (committed before any
    connector call, see autoport.commands.tasks), or `cancelled` when the access it was
    accepted under no longer allows it. Access is read again here, in this transaction,
    holding what it read (vehicles.access.standings): a withdrawal committed before is
    seen, one arriving meanwhile waits until these commands are recorded as sent (from
    then on the command is with the carmaker)."""
    due = await repository.lock_due(conn, now_us=now_us, limit=limit)
    if not due:
        return Claimed([], [])
    verdicts = await standings(conn, {_way(row) for row in due}, now_us=now_us, hold=True)
    sent: list[CommandRow] = []
    refused: _Outcomes = {}
    for row in due:
        reason = withdrawn(row, verdicts[_way(row)])
        if reason is None:
            sent.append(replace(row, status=SENT, sent_at=now_us, updated_at=now_us))
        else:
            description = f"{reason} before the command was sent; it was never sent"
            refused.setdefault((CANCELLED, WITHDRAWN_REASON, description), []).append(row)
    await repository.mark_sent(
        conn, command_ids=[row.id for row in sent], worker_id=worker_id, now_us=now_us
    )
    cancelled = await _record(conn, refused, now_us=now_us, expected=(PENDING,))
    await emit(conn, [*sent, *cancelled], now_us)
    return Claimed(sent, cancelled)


async def _record(
    conn: Connection, groups: _Outcomes, *, now_us: int, expected: tuple[str, ...]
) -> list[CommandRow]:
    """One UPDATE per outcome; the commands it finished (those still in an `expected`
    status), built from the rows in hand. Their events are the caller's to emit."""
    finished: list[CommandRow] = []
    for (status, reason, description), rows in groups.items():
        done = await repository.finish(
            conn,
            command_ids=[row.id for row in rows],
            status=status,
            reason=reason,
            description=description,
            now_us=now_us,
            expected=expected,
        )
        finished.extend(
            replace(
                row,
                status=status,
                failure_reason=reason,
                failure_description=description,
                updated_at=now_us,
                finished_at=now_us,
            )
            for row in rows
            if row.id in done
        )
    return finished


async def finish(
    conn: Connection,
    results: Sequence[tuple[CommandRow, CommandOutcome]],
    *,
    now_us: int,
    expected: tuple[str, ...],
) -> list[CommandRow]:
    """Record the outcomes of many commands: one UPDATE per distinct outcome (nearly
    always one: `executed`) and one statement for their events. Only commands still in
    an `expected` status change; the finished ones are returned, built from the rows in
    hand."""
    groups: _Outcomes = {}
    for row, outcome in results:
        reason = None if outcome.status == EXECUTED else (outcome.reason or "unknown")
        description = None if reason is None else outcome.description
        groups.setdefault((outcome.status, reason, description), []).append(row)
    finished = await _record(conn, groups, now_us=now_us, expected=expected)
    await emit(conn, finished, now_us)
    return finished


# --------------------------------------------------------------------------- accept


@dataclass(frozen=True, slots=True)
class Accepted:
    command: CommandRow
    replayed: bool  # the Idempotency-Key named a command accepted before
    rate_headers: dict[str, str]
    # What the caller may read of the vehicle, checked while authorizing (for `view`).
    readable: frozenset[str]
    brand: str


async def submit(
    state: AppState,
    caller: Caller,
    vin: str,
    body: CommandIn,
    *,
    idempotency_key: str | None,
) -> Accepted:
    """Accept a command (pending) or find the one its Idempotency-Key names.

    AppState, not a Connection (the measured hot path, bench/commands.py): the access
    check is the pull's (`readable_properties`, on AppState with its cached reads), the
    rate limiter may ask Redis (network I/O, never inside a transaction) and a rejected
    insert is explained by reads on the reader; only the insert and its event need the
    write transaction, which stays two statements long (`create`)."""
    check_vin(vin)
    key = check_idempotency_key(idempotency_key)
    command = find_command(body.capability, body.command)
    arguments = check_arguments(command, body.arguments)
    readable, brand = await authorize(state, caller, vin, command)
    digest = request_hash(vin, command.capability, command.name, arguments)
    environment = caller.environment
    now = state.clock.now_us()
    db = state.database
    if key is not None:
        found = await _replay(state, caller, vin, key, digest, now)
        if found is not None:
            return Accepted(found, True, {}, readable, brand)
    verdict = await limiter_of(state).hit(f"{environment}:{vin}")
    headers = verdict.headers()
    if not verdict.allowed:
        raise ApiError(
            429,
            f"the vehicle's command limit of {verdict.limit} is used up; "
            f"retry in {headers['Retry-After']} s",
            headers=headers,
        )
    row = CommandRow(
        id=str(uuid.uuid4()),
        environment=environment,
        application_id=caller.application_id,
        authorization_id=caller.grant.authorization_id if caller.grant is not None else None,
        vin=vin,
        brand=brand,
        capability=command.capability,
        command=command.name,
        arguments=arguments,
        status="pending",
        failure_reason=None,
        failure_description=None,
        idempotency_key=key,
        request_hash=digest,
        created_at=now,
        updated_at=now,
        sent_at=None,
        finished_at=None,
        deadline_at=now + int(state.settings.vehicle_command_timeout_seconds * MICROS),
    )
    async with db.transaction() as conn:
        created = await create(conn, row)
    if created:
        hub_of(state).accepted()
        return Accepted(row, False, headers, readable, brand)
    # A concurrent request with the same key won the insert, or the capability is busy.
    if key is not None:
        found = await _replay(state, caller, vin, key, digest, now)
        if found is not None:
            return Accepted(found, True, headers, readable, brand)
    busy = await repository.get_by_inflight(db.reader, environment, vin, command.capability)
    if busy is None:
        raise ApiError(409, "the command collided with another one; send it again", source="vin")
    if busy.application_id != caller.application_id:
        # Another application's command: that one is in flight is all this caller learns
        # (not its id, status, or whose it is).
        raise ApiError(
            409,
            f"a command of {command.capability} is in flight for this vehicle; one command "
            "per capability is in flight at a time: wait for it to finish",
            title="Conflict",
            source="capability",
            headers=headers,
        )
    raise ApiError(
        409,
        f"command {busy.id} is {busy.status} for {command.capability} of this vehicle; one "
        "command per capability is in flight at a time: wait for it to finish",
        title="Conflict",
        source="capability",
        headers={**headers, "Location": f"{PATH}/{busy.id}"},
    )


async def create(conn: Connection, row: CommandRow) -> bool:
    """Store a new pending command and its event; False when its Idempotency-Key or its
    vehicle's capability is taken (nothing is written then)."""
    stored = await repository.create(
        conn,
        {
            "id": row.id,
            "environment": str(row.environment),
            "application_id": row.application_id,
            "authorization_id": row.authorization_id,
            "vin": row.vin,
            "brand": row.brand,
            "capability": row.capability,
            "command": row.command,
            "arguments": orjson.dumps(row.arguments).decode(),
            "idempotency_key": row.idempotency_key,
            "request_hash": row.request_hash,
            "inflight": repository.inflight_key(row.vin, row.capability),
            "created_at": row.created_at,
            "deadline_at": row.deadline_at,
        },
    )
    if stored:
        await emit(conn, [row], row.created_at)
    return stored


async def _replay(
    state: AppState, caller: Caller, vin: str, key: str, digest: str, now: int
) -> CommandRow | None:
    """The command this application accepted for `vin` with `key` in the last 24 h; 422
    when the key came with another request (a key names one request, RFC draft
    ietf-httpapi-idempotency-key-header §2.7). An older key is forgotten. A key is the
    application's for one vehicle: the same key for another vehicle is another command
    (and never tells about this one: a vehicle token reaches its own vehicle only)."""
    db = state.database
    found = await repository.get_by_idempotency_key(
        db.reader, caller.environment, caller.application_id, vin, key
    )
    if found is None:
        return None
    if found.created_at + IDEMPOTENCY_WINDOW_US <= now:
        async with db.transaction() as conn:
            await repository.update(conn, found.id, idempotency_key=None)
        return None
    if found.request_hash != digest:
        raise ApiError(
            422,
            f"Idempotency-Key: was used for another request (command {found.id}); "
            "a key names one request for 24 hours",
            source="Idempotency-Key",
        )
    return found


# --------------------------------------------------------------------------- read


async def get_for(conn: Connection, caller: Caller, command_id: str) -> CommandRow:
    """The caller's command; 404 for another application's, another environment's, and
    (for a vehicle token) another vehicle's."""
    row = await repository.get(conn, caller.environment, command_id)
    if (
        row is None
        or row.application_id != caller.application_id
        or (caller.grant is not None and caller.grant.vin != row.vin)
    ):
        raise ApiError(404, f"no command {command_id!r}", source="id")
    return row


def wanted_wait(prefer: str | None, settings_max: float) -> float | None:
    """`Prefer: wait=N` (RFC 7240 §4.3) in seconds, cut to the setting; None without one
    (an invalid value is ignored, as the RFC asks)."""
    if not prefer:
        return None
    for preference in prefer.split(","):
        token = preference.strip().partition(";")[0]
        name, eq, value = token.partition("=")
        if name.strip().lower() != "wait" or not eq:
            continue
        value = value.strip().strip('"')
        if value.isdigit():
            return min(float(value), settings_max)
    return None


async def wait_finished(
    conn: Connection, hub: CommandHub, row: CommandRow, seconds: float, *, poll: float
) -> CommandRow:
    """The command once finished, or as it is after `seconds`. `row` is current (just
    stored or read): a change made in this process is handed over by the hub; one made
    by another process is found by reading every `poll` seconds."""
    if row.finished or seconds <= 0:
        return row
    loop = asyncio.get_running_loop()
    ends = loop.time() + seconds
    current = row
    while True:
        left = ends - loop.time()
        if left <= 0:
            return current
        waiter = hub.waiter(row.id)
        try:
            await wait_for(waiter.event, min(poll, left))
        finally:
            hub.forget(row.id, waiter)
        if waiter.row is not None:
            current = waiter.row
        else:
            current = await repository.get(conn, row.environment, row.id) or current
        if current.finished:
            return current


async def access_now(state: AppState, caller: Caller, vin: str) -> tuple[frozenset[str], str]:
    """What `caller` may read of `vin` as the database says now (its grant or clearance,
    the application, the brand), never as its token said when the request began: a
    `Prefer: wait` answer is built seconds later, and an owner may have withdrawn
    meanwhile. Nothing readable (an empty set) when the access is gone."""
    way = Way(
        caller.environment,
        caller.application_id,
        vin,
        caller.grant.authorization_id if caller.grant is not None else None,
    )
    standing = (await standings(state.database.reader, [way], now_us=state.clock.now_us()))[way]
    if isinstance(standing, Lost) or not caller.has_scope(DATA_SCOPE):
        return frozenset(), ""
    return standing.properties, standing.brand


def written_properties(row: CommandRow) -> frozenset[str]:
    """ "capability.property" of what the command wrote: its arguments and the properties
    it sets to a fixed value."""
    command = COMMANDS.get(row.capability, row.command)
    constants = command.constants if command is not None else ()
    return frozenset(f"{row.capability}.{name}" for name in (*row.arguments, *constants))


async def view(
    state: AppState,
    caller: Caller,
    row: CommandRow,
    *,
    access: tuple[frozenset[str], str] | None = None,
) -> dict[str, Any]:
    """The command as its answers show it: with `state`, once it is executed, the stored
    values of the properties it wrote that the caller may read now (the pull's layout;
    `{}` when none), like the capability's new state the carmakers' own APIs answer.
    `access` is the caller's (readable properties, brand) when already checked.

    AppState: the read access is the pull's (`readable_properties`, on AppState)."""
    body = row.as_dict()
    if row.status != EXECUTED:
        body["state"] = None
        return body
    if access is None:
        try:
            access = await readable_properties(state, caller, row.vin)
        except ApiError:
            access = (frozenset(), row.brand)  # no read access now: no values
    readable, brand = access
    wanted = written_properties(row) & readable
    found: dict[str, Any] = {}
    if wanted:
        stored = await stored_vehicle(state.database, environment=row.environment, vin=row.vin)
        if stored is not None and brand_serves(brand, stored["brand"], row.environment):
            found = visible(orjson.loads(stored["document"]), by_capability(wanted))
    body["state"] = found
    return body
