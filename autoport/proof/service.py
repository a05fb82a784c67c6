"""The ownership proof: one interface over the carmakers' different processes, for the
consent pages (autoport.consent) and the owner portal's sign-in (autoport.owner) alike.

Each brand verifies one way, decided by its connector in the brand registry
(`autoport.brands.registry.registry_of(state).verification_method(environment, brand)`;
in the sandbox environment the `sandbox_connector_verification_method(s)` settings):

- `instant`: the sandbox's method; ownership is taken as proven once the VIN is entered.
- `vehicle_code`: the vehicle shows a one-time code on its display; the owner types it.
  The code is stored hashed for checking and, separately, as what the vehicle's screen
  shows (the sandbox emulator reads it through `current_vehicle_code`). A code verifies
  only the session and VIN it was shown for. Tries and codes shown are counted per VIN
  and per client address across sessions, in the database (consent_throttles): too
  many wrong tries lock the VIN (or the address) out for a while, too many codes wait
  for the window to end.
- `oem_login`: the owner signs in at the carmaker, which sends them back with a signed
  result bound to the consent session by a single-use nonce. autoport ships a simulated
  carmaker login for the sandbox (autoport.sandbox.oem_login), speaking the same signed
  protocol.
- `owner_portal`: nothing to check here; the grant is created `pending` and the carmaker
  reports the owner's decision later (CLI / admin API -> set_authorization_status).

This module holds what happens in one transaction (codes, counters, signed states);
`flows.py` runs the steps that also ask the vehicle or the carmaker over the network,
each outside any transaction.
"""

from __future__ import annotations

import enum
import secrets
import uuid
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from autoport.brands.base import VerificationMethod
from autoport.catalog.brands import MAKER_CODES, MakerCodes
from autoport.config import Settings
from autoport.kit import crypto, throttles
from autoport.kit.crypto import same, token_hash
from autoport.kit.db import Connection
from autoport.kit.environments import Environment
from autoport.kit.keyring import accepted, stable
from autoport.proof import repository
from autoport.vehicles.vin import vin_problem

MICROS = 1_000_000
VEHICLE_CODE_DIGITS = 6
OEM_STATE_SECONDS = 600
OEM_RESULT_SECONDS = 120
# Where the carmaker's login returns the owner: the consent pages (default) or the
# owner portal's sign-in (autoport.owner), which proves ownership the same way.
BACK_TO_CONSENT = "consent"
BACK_TO_OWNER = "owner"


# The method names are the brand connectors' (autoport.brands): the registry decides
# which one a brand uses (`registry_of(state).verification_method(environment, brand)`).
Method = VerificationMethod


def grant_starts_pending(method: Method) -> bool:
    """owner_portal: the code is issued now, the carmaker approves later."""
    return method is Method.owner_portal


def vehicle_subject(key: bytes, environment: Environment, vin: str) -> str:
    """A stable id for the owner of a vehicle when the method knows no owner account
    (derived from the first key of the ring: the same after a key rotation)."""
    return token_hash(stable(key), f"consent-subject:{environment}:{vin}")[:32]


def account_subject(key: bytes, environment: Environment, brand: str, account: str) -> str:
    """A stable id of an owner's carmaker account (oem_login); as `vehicle_subject`."""
    return token_hash(stable(key), f"consent-subject:{environment}:{brand}:{account.lower()}")[:32]


# ------------------------------------------------------------------------ the VIN


@dataclass(frozen=True, slots=True)
class VinProblem:
    """Why a typed VIN cannot be the vehicle to prove: `detail` in the API's words, and
    what the pages say (templates/vin_problem.html): `kind` is length, ioq, chars or
    maker, with the count typed, the characters refused or the carmakers it belongs to."""

    detail: str
    kind: str
    count: int = 0
    chars: str = ""
    makers: str = ""

    def values(self) -> dict[str, Any]:
        return {"kind": self.kind, "count": self.count, "chars": self.chars, "makers": self.makers}


_VIN_ALPHABET = frozenset("ABCDEFGHJKLMNPRSTUVWXYZ0123456789")


def check_vin(
    typed: str | None, brand: str, maker_codes: MakerCodes = MAKER_CODES
) -> tuple[str, VinProblem | None]:
    """The VIN as the owner typed it, cleaned (spaces and lower case are fixed, not
    refused), and why it cannot be `brand`'s vehicle, if it cannot: a grant for one brand
    must never cover another carmaker's vehicle (`maker_codes`: the registry's)."""
    cleaned = "".join((typed or "").split()).upper()
    problem = vin_problem(cleaned)
    if problem is not None:
        if len(cleaned) != 17:
            return cleaned, VinProblem(problem, "length", count=len(cleaned))
        if set(cleaned) & {"I", "O", "Q"}:
            return cleaned, VinProblem(problem, "ioq")
        refused = " ".join(sorted({c for c in cleaned if c not in _VIN_ALPHABET}))
        return cleaned, VinProblem(problem, "chars", chars=refused)
    maker = maker_codes.problem(cleaned, brand)
    if maker is not None:
        makers = ", ".join(sorted(maker_codes.makers(cleaned) or ()))
        return cleaned, VinProblem(maker, "maker", makers=makers)
    return cleaned, None


# ------------------------------------------------------------------------ vehicle_code


class CodeCheck(enum.Enum):
    accepted = "accepted"
    wrong = "wrong"
    # Tries ran out with this one, or earlier: the VIN (or the address) is locked out.
    locked = "locked"
    # No live code for this session and VIN (expired, used, or never issued): ask for
    # a new one.
    expired = "expired"


@dataclass(frozen=True, slots=True)
class CodeResult:
    outcome: CodeCheck
    attempts_left: int = 0
    locked_until_us: int | None = None


class Counter(enum.StrEnum):
    """What is counted across sessions (consent_throttles.kind): code tries and codes
    shown, each per VIN and per client address."""

    vin_tries = "vin_tries"
    address_tries = "address_tries"
    vin_codes = "vin_codes"
    address_codes = "address_codes"


TRIES = (Counter.vin_tries, Counter.address_tries)
CODES = (Counter.vin_codes, Counter.address_codes)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why no code may be entered or shown now, and until when. `locked`: too many wrong
    codes (for the VIN or from the address); `codes`: as many codes were shown as the
    window allows. The same for every VIN, known to a carmaker or not."""

    reason: Literal["locked", "codes"]
    until_us: int


@dataclass(frozen=True, slots=True)
class Claim:
    """Whom the counters name: the VIN, and the client's address (its keyed hash: the
    table holds no addresses)."""

    environment: Environment
    vin: str
    address: str

    def subject(self, counter: Counter) -> str:
        return self.vin if counter in (Counter.vin_tries, Counter.vin_codes) else self.address


def claim(key: bytes, environment: Environment, vin: str, address: str) -> Claim:
    return Claim(environment, vin, token_hash(key, f"consent-address:{address}")[:32])


def _limit(settings: Settings, counter: Counter) -> int:
    return {
        Counter.vin_tries: settings.consent_vehicle_code_attempts,
        Counter.address_tries: settings.consent_vehicle_code_ip_attempts,
        Counter.vin_codes: settings.consent_vehicle_code_issues,
        Counter.address_codes: settings.consent_vehicle_code_ip_issues,
    }[counter]


def _code_hash(key: bytes, code_id: str, code: str) -> str:
    # The id is mixed in so two identical codes never share a hash.
    return token_hash(key, f"vehicle-code:{code_id}:{code}")


async def refusal(
    conn: Connection, who: Claim, *, counters: tuple[Counter, ...] = TRIES + CODES, now_us: int
) -> Refusal | None:
    """A running lockout (before a block of codes: it says more), else None."""
    blocks = await throttles.list_blocks(
        conn,
        environment=who.environment,
        subjects={str(counter): who.subject(counter) for counter in counters},
        now_us=now_us,
    )
    locked = [until for kind, until in blocks.items() if Counter(kind) in TRIES]
    if locked:
        return Refusal("locked", max(locked))
    if blocks:
        return Refusal("codes", max(blocks.values()))
    return None


async def _take(
    conn: Connection, who: Claim, counter: Counter, *, settings: Settings, now_us: int
) -> throttles.Taken:
    return await throttles.take(
        conn,
        environment=who.environment,
        kind=str(counter),
        subject=who.subject(counter),
        window_us=settings.consent_vehicle_code_window_seconds * MICROS,
        now_us=now_us,
    )


async def _block(
    conn: Connection, who: Claim, counter: Counter, *, until: int, now_us: int
) -> None:
    await throttles.block(
        conn,
        environment=who.environment,
        kind=str(counter),
        subject=who.subject(counter),
        until_us=until,
        now_us=now_us,
    )


@dataclass(frozen=True, slots=True)
class IssuedCode:
    code: str
    expires_at_us: int


async def issue_vehicle_code(
    conn: Connection,
    *,
    key: bytes,
    settings: Settings,
    who: Claim,
    session_id: str,
    keep_display_code: bool,
    now_us: int,
) -> IssuedCode | Refusal:
    """A fresh code for the vehicle's display, replacing this session's earlier ones; a
    Refusal instead while the VIN or the address is locked out or has been shown as
    many codes as the window allows. The code itself is kept only where the emulated
    display reads it from the store (`keep_display_code`); otherwise the caller hands
    it to the brand's connector and only its hash stays."""
    refused = await refusal(conn, who, now_us=now_us)
    if refused is not None:
        return refused
    for counter in CODES:
        taken = await _take(conn, who, counter, settings=settings, now_us=now_us)
        if taken.blocked_until is not None:
            return Refusal("codes", taken.blocked_until)
        if taken.hits > _limit(settings, counter):
            await _block(conn, who, counter, until=taken.window_ends, now_us=now_us)
            return Refusal("codes", taken.window_ends)
    await repository.retire_session_codes(conn, session_id=session_id, now_us=now_us)
    code = f"{secrets.randbelow(10**VEHICLE_CODE_DIGITS):0{VEHICLE_CODE_DIGITS}d}"
    code_id = uuid.uuid4().hex
    expires_at = now_us + settings.consent_vehicle_code_seconds * MICROS
    await repository.create_code(
        conn,
        code_id=code_id,
        environment=who.environment,
        vin=who.vin,
        session_id=session_id,
        code_hash=_code_hash(key, code_id, code),
        display_code=code if keep_display_code else None,
        now_us=now_us,
        expires_at=expires_at,
    )
    return IssuedCode(code, expires_at)


async def check_vehicle_code(
    conn: Connection,
    *,
    key: bytes,
    settings: Settings,
    who: Claim,
    session_id: str,
    code: str,
    now_us: int,
) -> CodeResult:
    """Check a typed code against the session's live code for `who.vin`. Every try is
    counted per VIN and per address before the comparison (parallel guesses each take
    one: the counter's row stays locked to this transaction); the last allowed wrong try
    locks the VIN (and blanks its display) or the address out."""
    refused = await refusal(conn, who, counters=TRIES, now_us=now_us)
    if refused is not None:
        return CodeResult(CodeCheck.locked, locked_until_us=refused.until_us)
    live = await repository.get_live_code(
        conn, session_id=session_id, environment=who.environment, vin=who.vin, now_us=now_us
    )
    if live is None:
        return CodeResult(CodeCheck.expired)
    lockout_until = now_us + settings.consent_vehicle_code_lockout_seconds * MICROS
    left: dict[Counter, int] = {}
    for counter in TRIES:
        taken = await _take(conn, who, counter, settings=settings, now_us=now_us)
        if taken.blocked_until is not None:
            return CodeResult(CodeCheck.locked, locked_until_us=taken.blocked_until)
        left[counter] = _limit(settings, counter) - taken.hits
        if left[counter] < 0:  # the limit was lowered meanwhile
            await _block(conn, who, counter, until=lockout_until, now_us=now_us)
            return CodeResult(CodeCheck.locked, locked_until_us=lockout_until)
    code_id, expected = live
    entered = "".join(code.split())
    # A code shown just before a key rotation is hashed under the previous key.
    if any(same(_code_hash(used, code_id, entered), expected) for used in accepted(key)):
        if not await repository.consume_code(conn, code_id=code_id, now_us=now_us):
            return CodeResult(CodeCheck.expired)
        # The owner proved it: the VIN's count starts over; the address gets its try back
        # (many owners may share one address).
        await throttles.forget(
            conn, environment=who.environment, kind=Counter.vin_tries, subject=who.vin
        )
        await throttles.refund(
            conn,
            environment=who.environment,
            kind=Counter.address_tries,
            subject=who.address,
        )
        return CodeResult(CodeCheck.accepted)
    spent = [counter for counter in TRIES if left[counter] == 0]
    if spent:
        for counter in spent:
            await _block(conn, who, counter, until=lockout_until, now_us=now_us)
        if Counter.vin_tries in spent:
            await repository.retire_vin_codes(
                conn, environment=who.environment, vin=who.vin, now_us=now_us
            )
        else:
            await repository.retire_session_codes(conn, session_id=session_id, now_us=now_us)
        return CodeResult(CodeCheck.locked, locked_until_us=lockout_until)
    return CodeResult(CodeCheck.wrong, attempts_left=min(left.values()))


async def retire_session_codes(conn: Connection, *, session_id: str, now_us: int) -> None:
    """The session's live codes stop working and leave the display (another VIN was
    entered: a code verifies only the VIN it was shown for)."""
    await repository.retire_session_codes(conn, session_id=session_id, now_us=now_us)


async def forget_session_codes(conn: Connection, *, session_id: str) -> None:
    """A sign-in ended (signed out): its codes go at once."""
    await repository.delete_session_codes(conn, session_id=session_id)


async def purge(conn: Connection, *, now_us: int, keep_seconds: int) -> None:
    """Forget codes that expired more than `keep_seconds` ago and counters with nothing
    left to count (their window and block both ended): a lockout runs its full time."""
    await repository.delete_expired_codes(conn, before_us=now_us - keep_seconds * MICROS)
    await throttles.delete_spent(conn, now_us=now_us)


async def current_vehicle_code(
    conn: Connection, *, environment: Environment, vin: str, now_us: int
) -> str | None:
    """What the vehicle's display shows now: the newest live code for the VIN, or None."""
    return await repository.get_display_code(conn, environment=environment, vin=vin, now_us=now_us)


# -------------------------------------------------------------------------- oem_login


def sign(secret: bytes, purpose: str, payload: dict[str, Any]) -> str:
    """A signed step token (autoport.kit.crypto.sign): the purpose is part of the MAC, so
    a token made for one step is never accepted by another."""
    return crypto.sign(secret, purpose, orjson.dumps(payload))


def unsign(secret: bytes, purpose: str, token: str, *, now_us: int) -> dict[str, Any] | None:
    """The payload of a token signed for `purpose` and not expired (`exp`, µs); else None."""
    # Signed with the session secret of its day (autoport.kit.keyring).
    data = next(
        (found for key in accepted(secret) if (found := crypto.verify(key, purpose, token))),
        None,
    )
    if data is None:
        return None
    try:
        payload = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("exp"), int):
        return None
    if payload["exp"] < now_us:
        return None
    return payload


@dataclass(frozen=True, slots=True)
class CarmakerAnswer:
    """A team's carmaker confirmed `account` (its owner account id) for our state's
    `nonce`: what the consent pages and the owner portal accept, once."""

    nonce: str
    account: str


def new_oem_nonce() -> str:
    return secrets.token_urlsafe(24)


def nonce_hash(key: bytes, nonce: str) -> str:
    return token_hash(key, f"oem-nonce:{nonce}")


def oem_state(
    secret: bytes,
    *,
    session_id: str,
    brand: str,
    vin: str,
    nonce: str,
    now_us: int,
    back: str = BACK_TO_CONSENT,
) -> str:
    """What the consent pages (or the owner portal: `back`) send to the carmaker's login
    (the `state` it returns)."""
    payload = {
        "sid": session_id,
        "brand": brand,
        "vin": vin,
        "nonce": nonce,
        "exp": now_us + OEM_STATE_SECONDS * MICROS,
        "back": back,
    }
    return sign(secret, "oem-state", payload)


def oem_result(secret: bytes, *, state: dict[str, Any], account: str, now_us: int) -> str:
    """What the (simulated) carmaker sends back after a successful login: the owner's
    account, bound to the consent session's nonce."""
    payload = {
        "sid": state["sid"],
        "nonce": state["nonce"],
        "vin": state["vin"],
        "account": account,
        "exp": now_us + OEM_RESULT_SECONDS * MICROS,
        "back": state.get("back", BACK_TO_CONSENT),
    }
    return sign(secret, "oem-result", payload)
