"""The owner portal's logic: sign-in by proof of ownership (the consent flow's methods,
autoport.proof), what the owner sees of each grant, withdrawing, and the vehicle's data
for download. Routes (routes.py) parse forms and render what this returns.

Access rule: a session reaches only the vehicles its proof covers (`vehicles_of`): the
VIN signed in with, and for a carmaker login every vehicle granted by that account; a
sandbox car a console user created only through the code shown on its console page.

The service boundary (docs/development.md): each function takes a `Connection` first
(the caller's transaction, or `database.reader` for reads) and awaits no network; the
steps that ask the vehicle or the carmaker run in flows.py (the ownership proof's,
autoport.proof.flows), which also tells open streams of a withdrawal
(`AppState.access_changed`) after its commit.
"""

from __future__ import annotations

import csv
import enum
import io
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson
import structlog

from autoport.catalog.brands import BRANDS, MAKER_CODES, MakerCodes, brand_name, canonical_brand
from autoport.catalog.commands import COMMANDS
from autoport.config import Settings
from autoport.history import service as history
from autoport.kit.clock import to_iso
from autoport.kit.crypto import new_token, token_hash
from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.oauth import service as oauth
from autoport.owner import reads, repository
from autoport.proof import service as proof
from autoport.proof.service import Method
from autoport.vehicles.access import accounts_cars, sandbox_only_problem

log = structlog.get_logger("autoport.owner")

MICROS = 1_000_000
DAY_US = reads.DAY_US
# "Recently ended" grants and the read count look back this far.
RECENT_DAYS = 30
HISTORY_PAGE_ROWS = 1000
# The page lists this many of an application's latest commands (access.json: all).
PAGE_COMMANDS = 10


# ---------------------------------------------------------------------- the session


@dataclass(frozen=True, slots=True)
class OwnerSession:
    id: str
    environment: Environment
    locale: str
    brand: str
    vin: str
    method: Method
    subject: str | None
    verified_at: int | None
    oem_nonce_hash: str | None
    expires_at: int

    @property
    def signed_in(self) -> bool:
        return self.verified_at is not None and self.subject is not None


def session_token_hash(key: bytes, token: str) -> str:
    # Its own purpose string: a consent session's token never finds an owner session.
    return token_hash(key, f"owner-session:{token}")


def _session(row: Row | dict[str, Any]) -> OwnerSession:
    return OwnerSession(
        id=row["id"],
        environment=Environment(row["environment"]),
        locale=row["locale"],
        brand=row["brand"],
        vin=row["vin"],
        method=Method(row["method"]),
        subject=row["subject"],
        verified_at=row["verified_at"],
        oem_nonce_hash=row["oem_nonce_hash"],
        expires_at=row["expires_at"],
    )


async def load(
    conn: Connection, *, key: bytes, environment: Environment, token: str | None, now_us: int
) -> OwnerSession | None:
    """The live session of this cookie in this environment, or None."""
    if not token:
        return None
    row = await repository.get_session_by_token_hash(
        conn,
        environment=str(environment),
        token_hash=session_token_hash(key, token),
        now_us=now_us,
    )
    return None if row is None else _session(row)


async def set_locale(conn: Connection, session: OwnerSession, locale: str) -> None:
    await repository.update_locale(conn, session_id=session.id, locale=locale)


async def sign_out(conn: Connection, session: OwnerSession) -> None:
    """The session and its codes go at once (not at expiry)."""
    await proof.forget_session_codes(conn, session_id=session.id)
    await repository.delete_session(conn, session_id=session.id)


class FormProblem(Exception):
    """The sign-in form's input is wrong: the field and what to say."""

    def __init__(
        self, field: str, kind: str, detail: str, vin: proof.VinProblem | None = None
    ) -> None:
        super().__init__(detail)
        self.field = field
        self.kind = kind
        self.detail = detail
        self.vin = vin  # what is wrong with the VIN, in the page's words


def brands_for(environment: Environment) -> list[str]:
    """The carmakers an owner can sign in with here, by name (every one but the sandbox's
    in production; in the sandbox the emulated carmaker serves them all)."""
    return sorted(
        (b for b in BRANDS if sandbox_only_problem(b, environment) is None), key=brand_name
    )


def check_sign_in(
    environment: Environment,
    brand: str | None,
    vin: str | None,
    *,
    maker_codes: MakerCodes = MAKER_CODES,
) -> tuple[str, str]:
    """(canonical brand, cleaned VIN), or FormProblem naming the field (a VIN whose
    manufacturer code contradicts the brand by `maker_codes`: the registry's on a request)."""
    chosen = canonical_brand(brand or "")
    if chosen is None or sandbox_only_problem(chosen, environment) is not None:
        raise FormProblem("brand", "brand", "choose the carmaker of your vehicle")
    cleaned, problem = proof.check_vin(vin, chosen, maker_codes)
    if problem is not None:
        raise FormProblem("vin", "vin", f"vin: {problem.detail}", problem)
    return chosen, cleaned


@dataclass(frozen=True, slots=True)
class Started:
    token: str
    session: OwnerSession


async def start(
    conn: Connection,
    *,
    settings: Settings,
    key: bytes,
    environment: Environment,
    brand: str,
    vin: str,
    method: Method,
    locale: str,
    now_us: int,
) -> Started:
    """Open a sign-in for `vin` with the brand's method. `instant` (the sandbox's) proves
    ownership at once; the other methods continue on the proof page."""
    token = new_token()
    session_id = f"own_{uuid.uuid4().hex}"
    values: dict[str, Any] = {
        "id": session_id,
        "environment": str(environment),
        "token_hash": session_token_hash(key, token),
        "locale": locale,
        "brand": brand,
        "vin": vin,
        "method": str(method),
        "subject": None,
        "verified_at": None,
        "oem_nonce_hash": None,
        "created_at": now_us,
        "expires_at": now_us + settings.owner_session_seconds * MICROS,
    }
    instant = method is Method.instant
    if instant:
        values |= {
            "subject": proof.vehicle_subject(key, environment, vin),
            "verified_at": now_us,
        }
    await repository.create_session(conn, values)
    return Started(token, _session(values))


async def prove(
    conn: Connection,
    session: OwnerSession,
    *,
    key: bytes,
    settings: Settings,
    old_token: str,
    subject: str,
    nonce_hash: str | None,
    now_us: int,
) -> str | None:
    """Ownership proven (autoport.proof): a new token replaces the sign-in's (a cookie
    planted before the proof is worth nothing after it); None when the session was
    proven or changed meanwhile (with a carmaker's answer: its nonce was taken)."""
    new = new_token()
    ok = await repository.prove(
        conn,
        session_id=session.id,
        old_hash=session_token_hash(key, old_token),
        new_hash=session_token_hash(key, new),
        subject=subject,
        expires_at=now_us + settings.owner_session_seconds * MICROS,
        now_us=now_us,
        nonce_hash=nonce_hash,
    )
    return new if ok else None


async def keep_nonce(
    conn: Connection, session: OwnerSession, *, nonce_hash: str, now_us: int
) -> bool:
    """The carmaker login's nonce (its hash); False when the sign-in ended meanwhile."""
    return await repository.update_nonce(
        conn, session_id=session.id, nonce_hash=nonce_hash, now_us=now_us
    )


# -------------------------------------------------------------------------- vehicles


async def vehicles_of(conn: Connection, session: OwnerSession) -> list[str]:
    """The vehicles this session may see: the one signed in with, and with a carmaker
    login every vehicle that account granted access to."""
    if not session.signed_in or session.subject is None:
        return []
    vins = {session.vin}
    if session.method is Method.oem_login:
        vins.update(
            await repository.list_vins_of_subject(
                conn,
                environment=str(session.environment),
                brand=session.brand,
                subject=session.subject,
            )
        )
    if session.method is not Method.vehicle_code:
        # The sandbox's instant proof takes the VIN's word and its carmaker login any
        # address with a public password: neither reaches a console user's car (its
        # owners sign in with the code on the car's page; see owner.flows.proof_method),
        # also where the car was created after the sign-in.
        vins -= await accounts_cars(conn, environment=session.environment, vins=vins)
    return sorted(vins)


class NotYours(Exception):
    """Another vehicle than the session proved (the page says the same as for a VIN
    nobody knows: nothing about it is revealed)."""


async def require_vehicle(conn: Connection, session: OwnerSession, vin: str) -> str:
    if vin not in await vehicles_of(conn, session):
        raise NotYours(vin)
    return vin


@dataclass(frozen=True, slots=True)
class SentCommand:
    """A command an application sent to the vehicle under the owner's grant."""

    id: str
    key: str  # "capability.command", the catalog's key
    status: str  # pending | sent | executed | failed | timed_out | cancelled
    failure_reason: str | None
    created_at: int
    finished_at: int | None

    def label(self, locale: str) -> str:
        capability, _, name = self.key.partition(".")
        command = COMMANDS.get(capability, name)
        return self.key if command is None else command.label(locale)


@dataclass(frozen=True, slots=True)
class GrantView:
    id: str
    application_id: str
    application: str
    operator: str
    brand: str
    properties: tuple[str, ...]
    status: str  # approved | pending | rejected | revoked | expired
    valid_from: int
    valid_until: int | None
    granted_at: int
    ended_at: int | None
    last_read_at: int | None
    reads_30_days: int
    # Filled by with_commands: the latest (or all) commands sent under this grant.
    sent_commands: tuple[SentCommand, ...] = ()
    commands_sent: int = 0

    @property
    def live(self) -> bool:
        return self.status in ("approved", "pending")

    @property
    def commands(self) -> tuple[str, ...]:
        # Scopes that let the application act on the vehicle (`capability.set.x`).
        return tuple(p for p in self.properties if ".set." in p)

    @property
    def data(self) -> tuple[str, ...]:
        return tuple(p for p in self.properties if ".set." not in p)


@dataclass(frozen=True, slots=True)
class ApplicationView:
    """One application as the owner sees it: its grants for the vehicle (newest first)
    inside one entry. An application may hold several grants for one vehicle (each
    consent is its own grant: two people of a household may each use the application
    for the same car); withdrawing the application ends every one of them."""

    id: str
    name: str
    operator: str
    grants: tuple[GrantView, ...]

    @property
    def live(self) -> bool:
        return any(grant.live for grant in self.grants)

    @property
    def status(self) -> str:
        """approved while any grant is; else pending while any is; else the newest
        grant's end (revoked, rejected, expired)."""
        for wanted in ("approved", "pending"):
            if any(grant.status == wanted for grant in self.grants):
                return wanted
        return self.grants[0].status

    @property
    def ended_at(self) -> int | None:
        return None if self.live else max((g.ended_at or 0 for g in self.grants), default=None)

    @property
    def withdraw_id(self) -> str:
        """The grant that names this entry in the portal's withdraw link (any of them
        names the application): the newest live one."""
        return next((grant.id for grant in self.grants if grant.live), self.grants[0].id)

    @property
    def last_read_at(self) -> int | None:
        return max((g.last_read_at for g in self.grants if g.last_read_at), default=None)

    @property
    def reads_30_days(self) -> int:
        return sum(grant.reads_30_days for grant in self.grants)

    def _current(self) -> tuple[GrantView, ...]:
        # What it may do now: its live grants' union; once all ended, what they covered.
        return tuple(grant for grant in self.grants if grant.live) or self.grants

    @property
    def data(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(item for g in self._current() for item in g.data))

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(item for g in self._current() for item in g.commands))

    @property
    def sent_commands(self) -> tuple[SentCommand, ...]:
        sent = sorted(
            (command for grant in self.grants for command in grant.sent_commands),
            key=lambda command: command.created_at,
            reverse=True,
        )
        return tuple(sent[:PAGE_COMMANDS])

    @property
    def commands_sent(self) -> int:
        return sum(grant.commands_sent for grant in self.grants)


def by_application(views: Sequence[GrantView]) -> list[ApplicationView]:
    """The grants grouped per application, in the order of each one's newest grant."""
    grouped: dict[str, list[GrantView]] = {}
    for view in views:
        grouped.setdefault(view.application_id, []).append(view)
    return [
        ApplicationView(first.application_id, first.application, first.operator, tuple(found))
        for found in grouped.values()
        for first in found[:1]
    ]


async def grants(
    conn: Connection, environment: Environment, vin: str, *, now_us: int
) -> list[GrantView]:
    """Every grant of the vehicle that is live or ended in the last 30 days, with its
    reads (the caller writes this process's unflushed counts first, `reads.flush`, so
    they show)."""
    now = now_us
    since = now - RECENT_DAYS * DAY_US
    rows = await repository.list_grants_of_vin(
        conn, environment=str(environment), vin=vin, ended_since=since
    )
    counted = {
        row["authorization_id"]: row
        for row in await repository.list_reads(
            conn,
            authorization_ids=[row["id"] for row in rows],
            since_day=(now // DAY_US) - RECENT_DAYS + 1,
        )
    }
    views = []
    for row in rows:
        status = row["status"]
        ended_at = row["updated_at"] if status in ("revoked", "rejected") else None
        if status == "approved" and row["valid_until"] is not None and row["valid_until"] <= now:
            status, ended_at = "expired", row["valid_until"]
        read = counted.get(row["id"])
        views.append(
            GrantView(
                id=row["id"],
                application_id=row["application_id"],
                application=row["app_name"],
                operator=row["operator"],
                brand=row["brand"],
                properties=tuple(orjson.loads(row["properties"])),
                status=status,
                valid_from=row["valid_from"],
                valid_until=row["valid_until"],
                granted_at=row["created_at"],
                ended_at=ended_at,
                last_read_at=None if read is None else read["last_read_at"],
                reads_30_days=0 if read is None else int(read["recent"] or 0),
            )
        )
    return views


async def with_commands(
    conn: Connection,
    environment: Environment,
    vin: str,
    views: Sequence[GrantView],
    *,
    latest: int | None = PAGE_COMMANDS,
) -> list[GrantView]:
    """The grants with the commands their applications sent to this vehicle in this
    environment under them (`latest` per grant, None: all) and how many in all. Only the
    grants the owner sees are asked for; fleet clearances' commands are not the owner's."""
    rows = await repository.list_commands_of_grants(
        conn,
        environment=str(environment),
        vin=vin,
        authorization_ids=[view.id for view in views],
        latest=latest,
    )
    sent: dict[str, list[SentCommand]] = {}
    totals: dict[str, int] = {}
    for row in rows:
        totals[row["authorization_id"]] = int(row["total"])
        sent.setdefault(row["authorization_id"], []).append(
            SentCommand(
                id=row["id"],
                key=f"{row['capability']}.{row['command']}",
                status=row["status"],
                failure_reason=row["failure_reason"],
                created_at=row["created_at"],
                finished_at=row["finished_at"],
            )
        )
    return [
        replace(
            view, sent_commands=tuple(sent.get(view.id, ())), commands_sent=totals.get(view.id, 0)
        )
        for view in views
    ]


# -------------------------------------------------------------------------- withdraw


class Outcome(enum.StrEnum):
    withdrawn = "withdrawn"
    # Revoked or rejected before: nothing changed, nothing emitted.
    already = "already"
    not_found = "not_found"


async def revoke_grant(
    conn: Connection,
    *,
    environment: Environment,
    authorization_ids: Sequence[str],
    detail: str,
    now_us: int,
    vin: str | None = None,
) -> dict[str, Outcome]:
    """End grants at once: status `revoked`, every access and refresh token of them
    revoked, `authorization_changed` (`action: revoked`) emitted. After the commit the
    caller tells open SSE streams to check their tokens now (`AppState.access_changed`)
    when one was withdrawn; stream messages are built only for approved grants
    (autoport.vehicles.access), so none follows. The owner portal (with `vin`: only grants
    of that vehicle) and the admin API both call this."""
    outcomes: dict[str, Outcome] = {}
    for authorization_id in authorization_ids:
        if vin is not None and (
            await repository.get_grant_of_vin(
                conn, environment=str(environment), vin=vin, authorization_id=authorization_id
            )
            is None
        ):
            outcomes[authorization_id] = Outcome.not_found
            continue
        try:
            changed = await oauth.set_authorization_status(
                conn,
                environment=environment,
                authorization_id=authorization_id,
                status="revoked",
                now_us=now_us,
                detail=detail,
            )
        except ApiError as error:
            # 404: no such grant here; 409: it was rejected (it never started).
            outcomes[authorization_id] = (
                Outcome.not_found if error.status == 404 else Outcome.already
            )
            continue
        outcomes[authorization_id] = Outcome.withdrawn if changed else Outcome.already
    return outcomes


async def withdraw_application(
    conn: Connection, environment: Environment, vin: str, authorization_id: str, *, now_us: int
) -> Outcome:
    """Withdraw the application that holds grant `authorization_id` of the vehicle: every
    grant it holds for the vehicle ends (`revoke_grant`). not_found for a grant of
    another vehicle or environment (nothing about it is revealed), already when none of
    the application's grants for the vehicle was live."""
    grant = await repository.get_grant_of_vin(
        conn, environment=str(environment), vin=vin, authorization_id=authorization_id
    )
    if grant is None:
        return Outcome.not_found
    ids = await repository.list_live_grant_ids(
        conn, environment=str(environment), vin=vin, application_id=grant["application_id"]
    )
    outcomes = await revoke_grant(
        conn,
        environment=environment,
        authorization_ids=ids,
        detail="the owner withdrew consent in the owner portal",
        now_us=now_us,
        vin=vin,
    )
    withdrawn = any(outcome is Outcome.withdrawn for outcome in outcomes.values())
    return Outcome.withdrawn if withdrawn else Outcome.already


async def withdraw_all(
    conn: Connection, environment: Environment, vin: str, *, now_us: int
) -> dict[str, Outcome]:
    """Withdraw every live grant of the vehicle (`revoke_grant`'s outcomes)."""
    ids = await repository.list_live_grant_ids(conn, environment=str(environment), vin=vin)
    return await revoke_grant(
        conn,
        environment=environment,
        authorization_ids=ids,
        detail="the owner withdrew consent in the owner portal",
        now_us=now_us,
        vin=vin,
    )


# ------------------------------------------------------------------------- your data


def _iso(us: int | None) -> str | None:
    return None if us is None else to_iso(us)


async def _history(
    conn: Connection, environment: Environment, vin: str
) -> AsyncIterator[list[history.Stored]]:
    """The whole history in pages: one page in memory at a time."""
    async for page in history.vehicle_history(
        conn, environment=str(environment), vin=vin, page_rows=HISTORY_PAGE_ROWS
    ):
        yield page


def _latest_items(document: dict[str, Any]) -> list[tuple[str, str, Any]]:
    items = []
    for capability, properties in sorted(document.items()):
        if not isinstance(properties, dict):
            continue
        for name, value in sorted(properties.items()):
            items.append((capability, name, value))
    return items


def _timestamp_of(value: Any) -> Any:
    return value.get("timestamp") if isinstance(value, dict) else None


async def export_json(
    conn: Connection, environment: Environment, vin: str, *, now_us: int
) -> AsyncIterator[bytes]:
    """{"vin", "environment", "exported_at", "latest": {...}, "history": [...]}, written
    as it is read (`conn`: the database's reader, each page reads what is committed)."""
    latest = await repository.get_latest_document(conn, environment=str(environment), vin=vin)
    head = {
        "vin": vin,
        "environment": str(environment),
        "exported_at": to_iso(now_us),
        "brand": None if latest is None else latest["brand"],
        "latest": {} if latest is None else orjson.loads(latest["document"]),
    }
    yield orjson.dumps(head)[:-1] + b',"history":['
    first = True
    async for page in _history(conn, environment, vin):
        chunk = b",".join(
            orjson.dumps(
                {
                    "capability": row.capability,
                    "property": row.property,
                    "timestamp": to_iso(row.timestamp),
                    "received_at": to_iso(row.received_at),
                    "value": orjson.Fragment(row.value),
                }
            )
            for row in page
        )
        yield chunk if first else b"," + chunk
        first = False
    yield b"]}\n"


# A spreadsheet's columns: the value on its own, its unit beside it (a quantity's
# `{value, unit}`), and a failure's reason and words instead of a value.
CSV_COLUMNS = (
    "kind",
    "capability",
    "property",
    "timestamp",
    "received_at",
    "value",
    "unit",
    "failure_reason",
    "failure_description",
)


def _csv_rows(rows: list[Sequence[Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows(rows)
    return buffer.getvalue().encode()


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    # An object (coordinates, say): its JSON, the one form every spreadsheet can keep.
    return orjson.dumps(value).decode()


def _csv_value(wrapper: Any) -> tuple[str, str, str, str]:
    """(value, unit, failure reason, failure description) of one stored wrapper."""
    if not isinstance(wrapper, dict):
        return _cell(wrapper), "", "", ""
    failure = wrapper.get("failure")
    reason = description = ""
    if isinstance(failure, dict):
        reason = str(failure.get("reason") or "")
        description = str(failure.get("description") or "")
    if "data" not in wrapper:
        return "", "", reason, description
    data = wrapper["data"]
    if isinstance(data, dict) and set(data) == {"value", "unit"}:
        return _cell(data["value"]), str(data["unit"]), reason, description
    return _cell(data), "", reason, description


def _wrappers(value: Any) -> list[Any]:
    # A property with several values (a list of wrappers) is a row per value.
    return value if isinstance(value, list) else [value]


async def export_csv(conn: Connection, environment: Environment, vin: str) -> AsyncIterator[bytes]:
    """One row per value: `latest` rows first, then every `history` row; the value, its
    unit and a failure's reason and description each in a column of their own."""
    yield _csv_rows([CSV_COLUMNS])
    latest = await repository.get_latest_document(conn, environment=str(environment), vin=vin)
    if latest is not None:
        document = orjson.loads(latest["document"])
        yield _csv_rows(
            [
                ("latest", capability, name, _timestamp_of(item) or "", "", *_csv_value(item))
                for capability, name, value in _latest_items(document)
                for item in _wrappers(value)
            ]
        )
    async for page in _history(conn, environment, vin):
        yield _csv_rows(
            [
                (
                    "history",
                    row.capability,
                    row.property,
                    to_iso(row.timestamp),
                    to_iso(row.received_at),
                    *_csv_value(orjson.loads(row.value)),
                )
                for row in page
            ]
        )


async def access_record(
    conn: Connection, environment: Environment, vin: str, *, now_us: int
) -> bytes:
    """Every grant of the vehicle the portal shows, with its reads per day and every
    command its application sent to the vehicle under it (the caller flushes this
    process's read counts first, as for `grants`)."""
    views = await with_commands(
        conn, environment, vin, await grants(conn, environment, vin, now_us=now_us), latest=None
    )
    per_day = await repository.list_reads_per_day(
        conn, authorization_ids=[view.id for view in views]
    )
    days: dict[str, list[dict[str, Any]]] = {}
    for row in per_day:
        days.setdefault(row["authorization_id"], []).append(
            {
                "day": to_iso(row["day"] * DAY_US)[:10],
                "reads": row["reads"],
                "last_read_at": to_iso(row["last_read_at"]),
            }
        )
    record = {
        "vin": vin,
        "environment": str(environment),
        "exported_at": to_iso(now_us),
        "grants": [
            {
                "authorization_id": view.id,
                "application": view.application,
                "operator": view.operator,
                "brand": view.brand,
                "status": view.status,
                "properties": list(view.properties),
                "valid_from": _iso(view.valid_from),
                "valid_until": _iso(view.valid_until),
                "granted_at": _iso(view.granted_at),
                "ended_at": _iso(view.ended_at),
                "last_read_at": _iso(view.last_read_at),
                "reads_last_30_days": view.reads_30_days,
                "reads_per_day": days.get(view.id, []),
                "commands_sent": view.commands_sent,
                "commands": [
                    {
                        "id": command.id,
                        "command": command.key,
                        "label": command.label("en-GB"),
                        "status": command.status,
                        "failure_reason": command.failure_reason,
                        "requested_at": _iso(command.created_at),
                        "finished_at": _iso(command.finished_at),
                    }
                    for command in view.sent_commands
                ],
            }
            for view in views
        ],
    }
    return orjson.dumps(record, option=orjson.OPT_INDENT_2)
