"""Vehicle commands: who may send which command to which vehicle, accepting it (once,
whatever the retries), waiting for it, and reading it back.

Access (interface.md, Vehicle commands): the caller must be allowed to read the vehicle
exactly as for the pull (an approved grant inside its window, or an approved fleet
clearance; the brand activated) and its token must hold `<capability>.set.<property>` for
every property the command writes. A vehicle token carries the set scopes of the commands
the owner granted; a client_credentials token those of the commands the application
registered, which an approved fleet clearance allows. Another application's command is
404 (it does not exist for the caller).

Execution happens in autoport.commands.tasks; this module only accepts commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from dataclasses import dataclass, field

import orjson

from autoport.catalog.commands import COMMANDS, Command
from autoport.catalog.validation import DataPointError
from autoport.commands import repository
from autoport.commands.schemas import CommandIn, CommandRow
from autoport.kit import outbox
from autoport.kit.auth import Caller, CallerKind
from autoport.kit.clock import MICROS
from autoport.kit.db import Connection
from autoport.kit.errors import ApiError
from autoport.kit.ratelimit import RateLimiter, rate_limiter
from autoport.kit.state import AppState
from autoport.vehicle_data.service import check_vin, readable_properties

COMMAND_EVENT = "command_changed"
IDEMPOTENCY_WINDOW_US = 24 * 3600 * MICROS
IDEMPOTENCY_KEY_MAX = 255
PATH = "/v1/vehicle-commands"


# ------------------------------------------------------------------ in-process wake-ups


@dataclass
class CommandHub:
    """Wakes this process's worker when a command is accepted here, and `Prefer: wait`
    requests when one finishes here. Other processes' changes are found by polling."""

    work: asyncio.Event = field(default_factory=asyncio.Event)
    waiters: dict[str, list[asyncio.Event]] = field(default_factory=dict)

    def accepted(self) -> None:
        self.work.set()

    def changed(self, command_id: str) -> None:
        for event in self.waiters.pop(command_id, ()):
            event.set()

    def waiter(self, command_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self.waiters.setdefault(command_id, []).append(event)
        return event

    def forget(self, command_id: str, event: asyncio.Event) -> None:
        events = self.waiters.get(command_id)
        if events is not None and event in events:
            events.remove(event)
            if not events:
                del self.waiters[command_id]


def hub_of(state: AppState) -> CommandHub:
    """The app's hub, built once by the app layer (autoport.state)."""
    return state.part(CommandHub)


def limiter_of(state: AppState) -> RateLimiter:
    return rate_limiter(state, "cmd", state.settings.vehicle_command_rate_limit)


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


async def authorize(state: AppState, caller: Caller, vin: str, command: Command) -> str:
    """The brand the caller reaches `vin` through; 403 saying why not (the missing scope
    named)."""
    _, brand = await readable_properties(state, caller, vin)
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
    return brand


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


async def emit(conn: Connection, command: CommandRow, now_us: int) -> None:
    """`command_changed` to webhooks and streams, in the transaction of the change."""
    await outbox.emit(
        conn,
        environment=command.environment,
        event_type=COMMAND_EVENT,
        payload={"vin": command.vin, "brand": command.brand, "command": command.as_dict()},
        now_us=now_us,
        vin=command.vin,
        application_id=command.application_id,
    )


# --------------------------------------------------------------------------- accept


@dataclass(frozen=True, slots=True)
class Accepted:
    command: CommandRow
    replayed: bool  # the Idempotency-Key named a command accepted before
    rate_headers: dict[str, str]


async def submit(
    state: AppState,
    caller: Caller,
    vin: str,
    body: CommandIn,
    *,
    idempotency_key: str | None,
) -> Accepted:
    """Accept a command (pending) or find the one its Idempotency-Key names."""
    check_vin(vin)
    key = check_idempotency_key(idempotency_key)
    command = find_command(body.capability, body.command)
    arguments = check_arguments(command, body.arguments)
    brand = await authorize(state, caller, vin, command)
    digest = request_hash(vin, command.capability, command.name, arguments)
    environment = caller.environment
    now = state.clock.now_us()
    db = state.database
    if key is not None:
        found = await _replay(state, caller, key, digest, now)
        if found is not None:
            return Accepted(found, True, {})
    verdict = await limiter_of(state).hit(f"{environment}:{vin}")
    headers = verdict.headers()
    if not verdict.allowed:
        raise ApiError(
            429,
            f"the vehicle's command limit of {verdict.limit} is used up; "
            f"retry in {headers['Retry-After']} s",
            headers=headers,
        )
    command_id = str(uuid.uuid4())
    authorization_id = caller.grant.authorization_id if caller.grant is not None else None
    deadline = now + int(state.settings.vehicle_command_timeout_seconds * MICROS)
    values: dict[str, object] = {
        "id": command_id,
        "environment": str(environment),
        "application_id": caller.application_id,
        "authorization_id": authorization_id,
        "vin": vin,
        "brand": brand,
        "capability": command.capability,
        "command": command.name,
        "arguments": orjson.dumps(arguments).decode(),
        "idempotency_key": key,
        "request_hash": digest,
        "inflight": repository.inflight_key(vin, command.capability),
        "created_at": now,
        "deadline_at": deadline,
    }
    row: CommandRow | None = None
    async with db.transaction() as conn:
        if await repository.insert(conn, values):
            # What was stored, without reading it back.
            row = CommandRow(
                id=command_id,
                environment=environment,
                application_id=caller.application_id,
                authorization_id=authorization_id,
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
                deadline_at=deadline,
            )
            await emit(conn, row, now)
    if row is not None:
        hub_of(state).accepted()
        return Accepted(row, False, headers)
    # A concurrent request with the same key won the insert, or the capability is busy.
    if key is not None:
        found = await _replay(state, caller, key, digest, now)
        if found is not None:
            return Accepted(found, True, headers)
    busy = await repository.in_flight(db.reader, environment, vin, command.capability)
    if busy is None:
        raise ApiError(409, "the command collided with another one; send it again", source="vin")
    mine = busy.application_id == caller.application_id
    raise ApiError(
        409,
        f"command {busy.id if mine else '(of another application)'} is {busy.status} for "
        f"{command.capability} of this vehicle; one command per capability is in flight "
        "at a time: wait for it to finish",
        title="Conflict",
        source="capability",
        headers={**headers, "Location": f"{PATH}/{busy.id}"} if mine else headers,
    )


async def _replay(
    state: AppState, caller: Caller, key: str, digest: str, now: int
) -> CommandRow | None:
    """The command this application accepted with `key` in the last 24 h; 422 when the
    key came with another request (a key names one request, RFC draft
    ietf-httpapi-idempotency-key-header §2.7). An older key is forgotten."""
    db = state.database
    found = await repository.by_idempotency_key(
        db.reader, caller.environment, caller.application_id, key
    )
    if found is None:
        return None
    if found.created_at + IDEMPOTENCY_WINDOW_US <= now:
        async with db.transaction() as conn:
            await repository.forget_idempotency_key(conn, found.id)
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


async def get_for(state: AppState, caller: Caller, command_id: str) -> CommandRow:
    """The caller's command; 404 for another application's, another environment's, and
    (for a vehicle token) another vehicle's."""
    row = await repository.get(state.database.reader, caller.environment, command_id)
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


async def wait_finished(state: AppState, row: CommandRow, seconds: float) -> CommandRow:
    """The command once finished, or as it is after `seconds`."""
    if row.finished or seconds <= 0:
        return row
    hub = hub_of(state)
    loop = asyncio.get_running_loop()
    ends = loop.time() + seconds
    poll = min(0.1, state.settings.vehicle_command_poll_seconds)
    while True:
        event = hub.waiter(row.id)
        try:
            current = await repository.get(state.database.reader, row.environment, row.id)
            if current is None or current.finished:
                return current or row
            left = ends - loop.time()
            if left <= 0:
                return current
            # Finished here: woken at once; finished by another process: polled.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=min(poll, left))
        finally:
            hub.forget(row.id, event)
