"""The consent flow's logic: the entry point's checks, the session, each step, and the
owner's decision. Routes (routes.py) only parse forms and render what this returns.

The authorization code and the grant's later status changes belong to the authorization
server: `decide` and `report_owner_decision` call autoport.oauth.service directly, inside
the consent's own transaction.

The service boundary (docs/development.md): each function takes a `Connection` first
(the caller's transaction, or `database.reader` for reads) and awaits no network; the
steps that ask the vehicle or the carmaker run in flows.py (the ownership proof's,
autoport.proof.flows, around these functions' transactions).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import structlog

from autoport.catalog.brands import MAKER_CODES, MakerCodes, canonical_brand
from autoport.config import Settings
from autoport.consent import repository
from autoport.consent.repository import Application, Session
from autoport.kit import environments, uris
from autoport.kit.clock import from_iso
from autoport.kit.crypto import new_token, same, token_hash
from autoport.kit.db import Connection
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.keyring import accepted
from autoport.oauth import pkce
from autoport.oauth import service as oauth
from autoport.proof import service as proof
from autoport.proof.service import Method, grant_starts_pending
from autoport.vehicles.access import another_accounts_car
from autoport.vehicles.vin import vin_problem
from autoport.web import locale
from autoport.web.errors import PageError

log = structlog.get_logger("autoport.consent")

MICROS = 1_000_000
# RFC 7636 §4.2: 43-128 characters of the unreserved set.
MAX_STATE_LENGTH = 2048


# ---------------------------------------------------------------------- entry point


@dataclass(frozen=True, slots=True)
class EntryRequest:
    """The query of `GET {auth_url}`, as sent (strings or None)."""

    client_id: str | None
    redirect_uri: str | None
    app_id: str | None
    state: str | None
    validity_start_date: str | None
    validity_end_date: str | None
    brand: str | None
    vin: str | None
    locale: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    response_type: str | None = None


@dataclass(frozen=True, slots=True)
class RedirectError:
    """An error the application learns about through its redirect URI."""

    redirect_uri: str
    error: str
    description: str
    state: str | None
    issuer: str

    @property
    def url(self) -> str:
        params = {"error": self.error, "error_description": self.description}
        return authorization_response(self.redirect_uri, params, self.state, self.issuer)


@dataclass(frozen=True, slots=True)
class Started:
    session_token: str
    locale: str


@dataclass(frozen=True, slots=True)
class Entry:
    """An entry request that passed every check: the session to open."""

    values: dict[str, Any]
    failure: RedirectError  # what the application learns if the session cannot be stored


def authorization_response(
    redirect_uri: str, params: dict[str, str], state: str | None, issuer: str
) -> str:
    """Where the owner's browser goes back to the application, success or error: the
    answer's parameters, the application's `state`, and `iss`, the environment's issuer
    (RFC 9207: a client that talks to several authorization servers, or to both our
    environments, can tell whose response it got, which stops mix-up attacks)."""
    answer = dict(params)
    if state is not None:
        answer["state"] = state
    answer["iss"] = issuer
    return with_query(redirect_uri, answer)


def with_query(uri: str, params: dict[str, str]) -> str:
    """Append parameters to a registered redirect URI, keeping its own query. A bare
    scheme (`com.example.app`, a mobile app's) becomes `com.example.app:/?...`: an
    absolute URI whose query platform URI parsers read (RFC 8252 §7.1's form)."""
    if uris.is_bare_scheme(uri):
        uri = f"{uri}:/"
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def _instant(text: str | None, name: str) -> int | None:
    if text is None or text == "":
        return None
    try:
        return from_iso(text)
    except ValueError:
        raise ValueError(f"{name} is not an ISO 8601 date and time: {text[:40]!r}") from None


async def check_entry(
    conn: Connection,
    *,
    settings: Settings,
    environment: Environment,
    request: EntryRequest,
    accept_language: str | None,
    now_us: int,
) -> Entry | RedirectError:
    """Check the entry point's parameters: the session to open (`open_session`).

    Raises PageError when the client or redirect URI is not trustworthy (RFC 6749
    §4.1.2.1: never redirect then); returns RedirectError for every other problem."""
    if not request.client_id:
        raise PageError("missing_client")
    app = await repository.get_application_by_client_id(
        conn, environment=environment, client_id=request.client_id
    )
    if app is None:
        raise PageError("unknown_client")
    if (
        not request.redirect_uri
        or request.redirect_uri not in app.redirect_uris
        # Registered before redirect URIs were checked strictly, and would not pass now.
        or uris.origin(request.redirect_uri) is None
    ):
        raise PageError("bad_redirect_uri")
    state = request.state
    redirect_uri = request.redirect_uri
    issuer = environments.issuer(settings, environment)

    def fail(error: str, description: str) -> RedirectError:
        return RedirectError(redirect_uri, error, description, state, issuer)

    if state is not None and len(state) > MAX_STATE_LENGTH:
        return fail("invalid_request", f"state is longer than {MAX_STATE_LENGTH} characters")
    if app.disabled:
        return fail("unauthorized_client", "the application is disabled")
    if not request.app_id:
        return fail("invalid_request", "app_id is required")
    if not same(request.app_id.upper(), app.id):
        return fail("invalid_request", "app_id does not belong to client_id")
    if request.response_type not in (None, "code"):
        return fail("invalid_request", "response_type must be code")
    if not app.brands:
        return fail("unauthorized_client", "the application has no activated brand")
    if not app.properties:
        return fail("invalid_request", "the application requests no data")
    must_use_pkce = pkce.required(
        public=app.client_type == "public",
        confidential_must=settings.oauth_pkce_required_for_confidential_clients,
    )
    problem = pkce.challenge_problem(
        request.code_challenge, request.code_challenge_method, must=must_use_pkce
    )
    if problem:
        return fail("invalid_request", problem)
    try:
        valid_from = _instant(request.validity_start_date, "validity_start_date")
        valid_until = _instant(request.validity_end_date, "validity_end_date")
    except ValueError as error:
        return fail("invalid_request", str(error))
    if valid_from is None or valid_from < now_us:
        valid_from = now_us
    if valid_until is not None and valid_until <= valid_from:
        return fail(
            "invalid_request", "validity_end_date must be after validity_start_date and now"
        )
    brand: str | None = None
    if request.brand:
        brand = canonical_brand(request.brand)
        if brand is None:
            return fail("invalid_request", f"brand is not a known carmaker: {request.brand[:40]}")
        if brand not in app.brands:
            return fail("invalid_request", f"brand {brand} is not activated for the application")
    elif len(app.brands) == 1:
        brand = app.brands[0]
    vin: str | None = None
    if request.vin:
        vin_error = vin_problem(request.vin)
        if vin_error:
            return fail("invalid_request", f"vin {vin_error}")
        vin = request.vin
    values = {
        "id": uuid.uuid4().hex,
        "environment": environment,
        "application_id": app.id,
        "redirect_uri": request.redirect_uri,
        "state": state,
        "code_challenge": request.code_challenge or None,
        "code_challenge_method": pkce.DEFAULT_METHOD if request.code_challenge else None,
        "valid_from": valid_from,
        "valid_until": valid_until,
        "locale": locale.negotiate(request.locale, accept_language=accept_language),
        "brand": brand,
        "vin": vin,
        "method": None,
        "created_at": now_us,
        "expires_at": now_us + settings.consent_session_seconds * MICROS,
    }
    # The database busy or away: the application may retry (RFC 6749 §4.1.2.1).
    busy = fail("temporarily_unavailable", "the service is busy; please try again")
    return Entry(values, busy)


async def open_session(conn: Connection, entry: Entry, *, key: bytes) -> Started:
    """Store the checked entry's session; its cookie's token."""
    token = new_token("cs_")
    await repository.create_session(
        conn, token_hash=session_token_hash(key, token), values=entry.values
    )
    return Started(session_token=token, locale=entry.values["locale"])


def session_token_hash(key: bytes, token: str) -> str:
    return token_hash(key, f"consent-session:{token}")


# ------------------------------------------------------------------------- the steps


@dataclass(frozen=True, slots=True)
class Context:
    """A live session with its application, as the pages need them."""

    session: Session
    application: Application


async def load(
    conn: Connection, *, key: bytes, environment: Environment, token: str | None, now_us: int
) -> Context:
    """The open session of this browser; PageError('expired') when there is none."""
    if not token:
        raise PageError("no_session")
    session = None
    # Sessions opened before a key rotation are found under the previous key.
    for used in accepted(key):
        session = await repository.get_session_by_token_hash(
            conn, environment=environment, token_hash=session_token_hash(used, token)
        )
        if session is not None:
            break
    if session is None:
        raise PageError("no_session")
    if session.completed_at is not None:
        raise PageError("finished")
    if session.expires_at <= now_us:
        raise PageError("expired", 410)
    app = await repository.get_application(
        conn, environment=environment, application_id=session.application_id
    )
    if app is None:
        raise PageError("unknown_client")
    return Context(session, app)


async def _update(conn: Connection, ctx: Context, now_us: int, **values: Any) -> None:
    ok = await repository.update_open_session(
        conn, session_id=ctx.session.id, now_us=now_us, **values
    )
    if not ok:
        raise PageError("expired", 410)


async def set_locale(conn: Connection, ctx: Context, *, wanted: str, now_us: int) -> str:
    chosen = locale.supported(wanted) or ctx.session.locale
    if chosen != ctx.session.locale:
        await _update(conn, ctx, now_us, locale=chosen)
    return chosen


class FormProblem(Exception):
    """Input the owner can correct: the page is shown again with the message."""

    def __init__(self, field: str, message: str, status: int = 422, **values: Any) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.status = status
        self.values = values


async def choose_brand(conn: Connection, ctx: Context, *, brand: str | None, now_us: int) -> None:
    chosen = canonical_brand(brand or "")
    if chosen is None or chosen not in ctx.application.brands:
        raise FormProblem("brand", "choose_brand")
    changes: dict[str, Any] = {"brand": chosen}
    if chosen != ctx.session.brand:
        # Another brand may verify differently: start verification over.
        changes |= {"method": None, "verified_at": None, "subject": None, "oem_nonce_hash": None}
    await _update(conn, ctx, now_us, **changes)


async def enter_vin(
    conn: Connection,
    ctx: Context,
    *,
    key: bytes,
    vin: str | None,
    method: Method,
    now_us: int,
    maker_codes: MakerCodes = MAKER_CODES,
) -> None:
    """Record the VIN and the brand's proof `method` (the one the brand registry names
    for the session's brand), after checking the VIN's manufacturer code against the
    brand (`maker_codes`: the registry's). Entering a VIN (another or the same) voids the
    session's codes and proof: a code verifies only the VIN it was shown for. `instant`
    and `owner_portal` need nothing more here (autoport.proof)."""
    if ctx.session.brand is None:
        raise PageError("step_order")
    cleaned, problem = proof.check_vin(vin, ctx.session.brand, maker_codes)
    if problem is not None:
        raise FormProblem("vin", problem.detail, vin=vin or "", **problem.values())
    env = ctx.session.environment
    if await another_accounts_car(
        conn, environment=env, application_id=ctx.application.id, vin=cleaned
    ):
        # A console user's sandbox car is its account's alone (vehicles.access); the
        # page does not say whose.
        raise FormProblem(
            "vin", "this vehicle cannot be connected to this application", vin=vin or "",
            kind="unavailable",
        )  # fmt: skip
    changes: dict[str, Any] = {
        "vin": cleaned,
        "method": str(method),
        "verified_at": None,
        "subject": None,
        "oem_nonce_hash": None,
    }
    if method in (Method.instant, Method.owner_portal):
        # Nothing for the owner to do here: instant proves nothing more in the sandbox,
        # and owner_portal asks the carmaker after the decision.
        changes |= {"verified_at": now_us, "subject": proof.vehicle_subject(key, env, cleaned)}
    await _update(conn, ctx, now_us, **changes)
    await proof.retire_session_codes(conn, session_id=ctx.session.id, now_us=now_us)


async def keep_nonce(conn: Connection, ctx: Context, *, nonce_hash: str, now_us: int) -> None:
    """The carmaker login's nonce (its hash), replacing any earlier one."""
    if ctx.session.vin is None or ctx.session.method != Method.oem_login:
        raise PageError("step_order")
    await _update(conn, ctx, now_us, oem_nonce_hash=nonce_hash)


async def record_proof(
    conn: Connection, ctx: Context, *, subject: str, nonce_hash: str | None, now_us: int
) -> bool:
    """Ownership proven for `subject`: a vehicle code (only while the session still names
    the VIN the code was checked for) or a carmaker's answer (once: the nonce is taken in
    the same statement)."""
    session = ctx.session
    if session.vin is None:
        return False
    if nonce_hash is None:
        return await repository.verify_session_vin(
            conn, session_id=session.id, vin=session.vin, subject=subject, now_us=now_us
        )
    return await repository.take_oem_nonce(
        conn, session_id=session.id, nonce_hash=nonce_hash, subject=subject, now_us=now_us
    )


def requires_verification(ctx: Context) -> bool:
    return ctx.session.verified_at is None or ctx.session.subject is None


@dataclass(frozen=True, slots=True)
class Decision:
    redirect_url: str
    authorization_id: str | None = None


async def decide(
    conn: Connection,
    ctx: Context,
    *,
    approve: bool,
    issuer: str,
    now_us: int,
) -> Decision:
    """The owner's answer. Approve: the grant row and a code, in one transaction with
    the session's completion, so a double submit cannot mint two grants. `issuer`: the
    session's environment's (environments.issuer), sent back as `iss`."""
    session, app = ctx.session, ctx.application
    if not approve:
        if not await repository.complete_session(
            conn, session_id=session.id, authorization_id=None, now_us=now_us
        ):
            raise PageError("finished")
        return Decision(
            RedirectError(
                session.redirect_uri,
                "access_denied",
                "the vehicle owner denied the request",
                session.state,
                issuer,
            ).url
        )
    if session.vin is None or session.brand is None or requires_verification(ctx):
        raise PageError("step_order")
    method = Method(session.method or Method.instant)
    authorization_id = str(uuid.uuid4())
    status = "pending" if grant_starts_pending(method) else "approved"
    if not await repository.complete_session(
        conn, session_id=session.id, authorization_id=authorization_id, now_us=now_us
    ):
        raise PageError("finished")
    await repository.create_authorization(
        conn,
        values={
            "id": authorization_id,
            "environment": session.environment,
            "application_id": app.id,
            "vin": session.vin,
            "brand": session.brand,
            "properties": app.properties,
            "commands": app.commands,
            "status": status,
            "subject": session.subject,
            "valid_from": session.valid_from,
            "valid_until": session.valid_until,
            "created_at": now_us,
            "updated_at": now_us,
        },
    )
    code = await oauth.issue_authorization_code(
        conn,
        environment=session.environment,
        application_id=app.id,
        authorization_id=authorization_id,
        redirect_uri=session.redirect_uri,
        code_challenge=session.code_challenge,
        code_challenge_method=session.code_challenge_method,
        now_us=now_us,
    )
    url = authorization_response(session.redirect_uri, {"code": code}, session.state, issuer)
    return Decision(url, authorization_id)


def server_error_url(ctx: Context, issuer: str) -> str:
    return RedirectError(
        ctx.session.redirect_uri,
        "server_error",
        "the consent could not be recorded; please try again",
        ctx.session.state,
        issuer,
    ).url


# ------------------------------------------------------------- carmaker's decision


class StatusProblem(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def report_owner_decision(
    conn: Connection,
    *,
    environment: Environment,
    authorization_id: str,
    approved: bool,
    now_us: int,
    detail: str | None = None,
) -> str:
    """The carmaker reports the owner's decision on a pending (owner_portal) grant.
    Returns the new status; StatusProblem(404/409) when there is nothing to decide."""
    new_status = "approved" if approved else "rejected"
    current = await repository.get_authorization_status(
        conn, environment=environment, authorization_id=authorization_id
    )
    if current is None:
        raise StatusProblem(404, f"no authorization {authorization_id} in {environment}")
    if current != "pending":
        raise StatusProblem(409, f"authorization {authorization_id} is {current}, not pending")
    try:
        # The conditional UPDATE (pending -> new status) + authorization_changed.
        changed = await oauth.set_authorization_status(
            conn,
            environment=environment,
            authorization_id=authorization_id,
            status=new_status,
            now_us=now_us,
            detail=detail,
        )
    except ApiError as error:
        # Decided by a parallel call between the read above and the UPDATE.
        raise StatusProblem(error.status, error.detail) from None
    if not changed:
        raise StatusProblem(409, f"authorization {authorization_id} is already {new_status}")
    return new_status
