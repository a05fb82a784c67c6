"""The ownership proof's steps that ask the vehicle or the carmaker: each runs its own
transactions and awaits the network only between them, never inside one.

The consent pages and the owner portal's sign-in prove ownership the same way; what
differs is whoever proves (a consent session, an owner sign-in) and what being proven
changes for it. That is a `Prover`: it names the session, brand, VIN and method, keeps
the carmaker login's nonce, and records the proof (`proven`) in the step's transaction.

A route reads the form, calls one of these, and shows the `Step` it returns:

    step = await flows.check_code(db, prover, form.get("code"), ...)
    if step.proven: return see_other(next_page)
    return render("verify.html", **step.page(now_us), headers=step.headers(now_us))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

import structlog

from autoport.brands.base import BrandConnector, ConnectorError
from autoport.config import Settings
from autoport.kit.crypto import same
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment
from autoport.proof import service
from autoport.proof.service import CodeCheck, Method, Refusal

log = structlog.get_logger("autoport.proof")

MICROS = 1_000_000


class Prover(Protocol):
    """Whoever proves ownership of `vin`: a consent session or an owner sign-in."""

    @property
    def session_id(self) -> str: ...
    @property
    def environment(self) -> Environment: ...
    @property
    def brand(self) -> str: ...
    @property
    def vin(self) -> str: ...
    @property
    def method(self) -> Method | None: ...
    @property
    def oem_nonce_hash(self) -> str | None: ...
    @property
    def back(self) -> str:
        """Where the carmaker's login returns: service.BACK_TO_CONSENT or BACK_TO_OWNER."""
        ...

    async def keep_nonce(self, conn: Connection, nonce_hash: str, *, now_us: int) -> None:
        """Remember the carmaker login's nonce (only its hash); a prover that cannot
        (its session ended meanwhile) raises its own page error."""

    async def proven(
        self, conn: Connection, subject: str, *, nonce_hash: str | None, now_us: int
    ) -> bool:
        """Record that `subject` owns the vehicle (with a carmaker's answer: only while
        `nonce_hash` is the nonce kept, taken in the same statement). False when the
        session changed meanwhile."""


@dataclass(frozen=True, slots=True)
class Step:
    """What a step of the proof came to, for the page to say."""

    proven: bool = False
    status: int = 200
    # wrong | expired_code | unreachable | oem_failed | oem_unreachable
    notice: str | None = None
    attempts_left: int | None = None
    refused: Refusal | None = None
    sent: bool = False  # a new code is on the vehicle's display
    go_to: str | None = None  # the carmaker's login, where the browser goes next

    def page(self) -> dict[str, Any]:
        """The proof's part of the verify page's context (templates/proof_steps.html)."""
        refused = self.refused
        return {
            "notice": self.notice,
            "attempts_left": self.attempts_left,
            "locked_until": refused.until_us if refused and refused.reason == "locked" else None,
            "codes_until": refused.until_us if refused and refused.reason == "codes" else None,
            "request_sent": self.sent,
        }

    def headers(self, now_us: int) -> dict[str, str]:
        """When to come back after a refusal, for the browser and for anyone scripting
        the pages."""
        if self.refused is None or self.status != 429:
            return {}
        wait_us = self.refused.until_us - now_us
        return {"Retry-After": str(max(1, -(-wait_us // MICROS)))}


def _who(prover: Prover, key: bytes, address: str) -> service.Claim:
    # The counters are per VIN and per client address, across both surfaces.
    return service.claim(key, prover.environment, prover.vin, address)


async def refusal(
    conn: Connection, prover: Prover, *, key: bytes, address: str, now_us: int
) -> Step:
    """Why no code can be entered or shown now (said before the owner types anything)."""
    if prover.method is not Method.vehicle_code:
        return Step()
    refused = await service.refusal(conn, _who(prover, key, address), now_us=now_us)
    return Step(refused=refused)


async def show_new_code(
    db: Database,
    prover: Prover,
    *,
    settings: Settings,
    key: bytes,
    connector: BrandConnector,
    address: str,
    now_us: int,
) -> Step:
    """Issue a code (its hash kept, the session's earlier codes retired) and, after that
    transaction, put it on the vehicle's display through the brand's connector. Refused
    while the VIN or the address is locked out or out of codes (429)."""
    async with db.transaction() as conn:
        issued = await service.issue_vehicle_code(
            conn,
            key=key,
            settings=settings,
            who=_who(prover, key, address),
            session_id=prover.session_id,
            keep_display_code=connector.code_display_in_store,
            now_us=now_us,
        )
    if isinstance(issued, Refusal):
        return Step(status=429, refused=issued)
    try:
        await connector.show_vehicle_code(
            environment=prover.environment,
            vin=prover.vin,
            code=issued.code,
            expires_at_us=issued.expires_at_us,
        )
    except ConnectorError as error:
        log.warning("vehicle code not delivered", vin=prover.vin, error=str(error))
        return Step(status=503, notice="unreachable")
    return Step(sent=True)


async def check_code(
    db: Database,
    prover: Prover,
    code: str | None,
    *,
    settings: Settings,
    key: bytes,
    address: str,
    now_us: int,
) -> Step:
    """Check a typed code and, accepted, record the proof, in one transaction that is
    committed whatever the outcome: a wrong try counts."""
    async with db.transaction() as conn:
        result = await service.check_vehicle_code(
            conn,
            key=key,
            settings=settings,
            who=_who(prover, key, address),
            session_id=prover.session_id,
            code=code or "",
            now_us=now_us,
        )
        proven = result.outcome is CodeCheck.accepted and await prover.proven(
            conn,
            service.vehicle_subject(key, prover.environment, prover.vin),
            nonce_hash=None,
            now_us=now_us,
        )
    if proven:
        return Step(proven=True)
    if result.outcome is CodeCheck.wrong:
        # Said the same way for every VIN, known to anyone or not.
        return Step(status=422, notice="wrong", attempts_left=result.attempts_left)
    if result.outcome is CodeCheck.locked and result.locked_until_us is not None:
        return Step(status=429, refused=Refusal("locked", result.locked_until_us))
    return Step(status=422, notice="expired_code")


async def start_carmaker_login(
    db: Database,
    prover: Prover,
    *,
    key: bytes,
    secret: bytes,
    connector: BrandConnector,
    prefix: str,
    callback_url: str,
    now_us: int,
) -> Step:
    """Where the owner signs in at the carmaker: a signed state bound to a fresh
    single-use nonce (kept hashed), sent to the sandbox's simulated login (under
    `prefix`) or to the team connector's login URL (asked after the transaction)."""
    nonce = service.new_oem_nonce()
    async with db.transaction() as conn:
        await prover.keep_nonce(conn, service.nonce_hash(key, nonce), now_us=now_us)
    signed = service.oem_state(
        secret, session_id=prover.session_id, brand=prover.brand, vin=prover.vin,
        nonce=nonce, now_us=now_us, back=prover.back,
    )  # fmt: skip
    served_here = connector.oem_login_page(prover.brand)
    if served_here is not None:
        return Step(go_to=f"{prefix}{served_here}?{urlencode({'state': signed})}")
    try:
        login_url = await connector.oem_login_url(
            environment=prover.environment,
            vin=prover.vin,
            state=signed,
            redirect_uri=callback_url,
        )
    except ConnectorError as error:
        log.warning("carmaker login unavailable", error=str(error))
        return Step(status=503, notice="oem_unreachable")
    return Step(go_to=login_url)


async def carmaker_returned(
    db: Database,
    prover: Prover,
    query: Mapping[str, str],
    *,
    key: bytes,
    secret: bytes,
    connector: BrandConnector,
    callback_url: str,
    now_us: int,
) -> Step:
    """The carmaker's login sent the owner back: take its answer, once.

    The sandbox's simulated login signs its answer (`result`: the account, bound to our
    nonce). A team's carmaker answers its own way: our `state` is checked first (its
    signature, purpose, expiry, session, brand, VIN and the nonce kept now), then the
    connector exchanges the answer for the owner's account (network, outside any
    transaction), and a transaction takes the nonce with the proof."""
    if prover.method is not Method.oem_login:
        return Step(status=403, notice="oem_failed")
    if connector.oem_login_page(prover.brand) is not None:
        payload = service.unsign(secret, "oem-result", query.get("result", ""), now_us=now_us)
        if (
            payload is None
            or payload.get("sid") != prover.session_id
            or payload.get("vin") != prover.vin
            or not isinstance(payload.get("nonce"), str)
            or not isinstance(payload.get("account"), str)
        ):
            return Step(status=403, notice="oem_failed")
        nonce, account = str(payload["nonce"]), str(payload["account"])
    else:
        state = service.unsign(secret, "oem-state", query.get("state", ""), now_us=now_us)
        if (
            state is None
            or state.get("sid") != prover.session_id
            or state.get("brand") != prover.brand
            or state.get("vin") != prover.vin
            or not isinstance(state.get("nonce"), str)
            or prover.oem_nonce_hash is None
            or not same(prover.oem_nonce_hash, service.nonce_hash(key, state["nonce"]))
        ):
            # Forged, expired, another session's, or already used: the carmaker is not asked.
            return Step(status=403, notice="oem_failed")
        try:
            confirmed = await connector.oem_login_owner(
                environment=prover.environment,
                vin=prover.vin,
                callback=query,
                redirect_uri=callback_url,
            )
        except ConnectorError as error:
            log.warning("carmaker login not confirmed", vin=prover.vin, error=str(error))
            return Step(status=503, notice="oem_unreachable")
        if not confirmed:
            return Step(status=403, notice="oem_failed")
        nonce, account = str(state["nonce"]), confirmed
    subject = service.account_subject(key, prover.environment, prover.brand, account)
    async with db.transaction() as conn:
        proven = await prover.proven(
            conn, subject, nonce_hash=service.nonce_hash(key, nonce), now_us=now_us
        )
    return Step(proven=True) if proven else Step(status=403, notice="oem_failed")
