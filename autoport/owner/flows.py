"""The owner portal's steps that span a transaction and the network, for the routes to
call: signing in (the sign-in opens, then the brand's proof begins: a code shown in the
vehicle), each step of the ownership proof (autoport.proof.flows) with the sign-in as
the prover, and withdrawing (open streams are told after the commit).

A route reads the form, calls one of these, and renders or redirects with what it
returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from autoport.brands.base import BrandConnector
from autoport.brands.registry import registry_of
from autoport.kit.db import Connection
from autoport.kit.environments import Environment, public_base_url
from autoport.kit.state import AppState
from autoport.owner import service
from autoport.owner.service import Outcome, OwnerSession, Started
from autoport.proof import flows as proof
from autoport.proof.flows import Step
from autoport.proof.service import BACK_TO_OWNER, Method
from autoport.vehicles.access import accounts_cars
from autoport.web.errors import PageError

CALLBACK = "/owner/oem-callback"
WITHDRAWN_IN_PORTAL = "the owner withdrew consent in the owner portal"


@dataclass(slots=True)
class SignInProver:
    """An owner portal sign-in proving ownership of its VIN (autoport.proof.flows.Prover).
    Proven, the sign-in's token is replaced: the new one is `token`."""

    session: OwnerSession
    state: AppState
    old_token: str
    token: str | None = field(default=None)
    back: str = BACK_TO_OWNER

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def environment(self) -> Environment:
        return self.session.environment

    @property
    def brand(self) -> str:
        return self.session.brand

    @property
    def vin(self) -> str:
        return self.session.vin

    @property
    def method(self) -> Method | None:
        return self.session.method

    @property
    def oem_nonce_hash(self) -> str | None:
        return self.session.oem_nonce_hash

    async def keep_nonce(self, conn: Connection, nonce_hash: str, *, now_us: int) -> None:
        if not await service.keep_nonce(conn, self.session, nonce_hash=nonce_hash, now_us=now_us):
            raise PageError("signed_out", 401)

    async def proven(
        self, conn: Connection, subject: str, *, nonce_hash: str | None, now_us: int
    ) -> bool:
        self.token = await service.prove(
            conn,
            self.session,
            key=self.state.token_key,
            settings=self.state.settings,
            old_token=self.old_token,
            subject=subject,
            nonce_hash=nonce_hash,
            now_us=now_us,
        )
        return self.token is not None


def _connector(state: AppState, session: OwnerSession) -> BrandConnector:
    return registry_of(state).connector_for(session.environment, session.brand)


def callback_url(state: AppState, environment: Environment) -> str:
    """Our absolute callback, where a real carmaker's login sends the owner back."""
    return f"{public_base_url(state.settings, environment)}{CALLBACK}"


async def proof_method(
    state: AppState, environment: Environment, *, brand: str, vin: str
) -> Method:
    """How the owner of `vin` proves it: the brand's method (the registry's), except for a
    sandbox car a console user created. Every sandbox method but the vehicle code lets
    anyone in (instant takes the VIN's word, the simulated carmaker login's password is
    public); the code shows on the car's page in its account's console, so only that
    account's people sign in with it, as in consent only its applications get it."""
    method = registry_of(state).verification_method(environment, brand)
    if method is not Method.vehicle_code and await accounts_cars(
        state.database.reader, environment=environment, vins=(vin,)
    ):
        return Method.vehicle_code
    return method


async def sign_in(
    state: AppState,
    environment: Environment,
    *,
    brand: str,
    vin: str,
    method: Method,
    locale: str,
    address: str,
) -> tuple[Started, Step | None]:
    """Open a sign-in for `vin` with the brand's proof `method` (`instant` signs in at
    once) and, for a vehicle code, show the first code in the vehicle after the commit."""
    async with state.database.transaction() as conn:
        started = await service.start(
            conn,
            settings=state.settings,
            key=state.token_key,
            environment=environment,
            brand=brand,
            vin=vin,
            method=method,
            locale=locale,
            now_us=state.clock.now_us(),
        )
    if method is not Method.vehicle_code:
        return started, None
    return started, await new_code(state, started.session, token=started.token, address=address)


def _prover(state: AppState, session: OwnerSession, token: str) -> SignInProver:
    return SignInProver(session, state, token)


async def new_code(state: AppState, session: OwnerSession, *, token: str, address: str) -> Step:
    return await proof.show_new_code(
        state.database,
        _prover(state, session, token),
        settings=state.settings,
        key=state.token_key,
        connector=_connector(state, session),
        address=address,
        now_us=state.clock.now_us(),
    )


async def check_code(
    state: AppState, session: OwnerSession, code: str | None, *, token: str, address: str
) -> tuple[Step, str | None]:
    """A typed code; accepted, the sign-in is proven: the step and the new token."""
    prover = _prover(state, session, token)
    step = await proof.check_code(
        state.database,
        prover,
        code,
        settings=state.settings,
        key=state.token_key,
        address=address,
        now_us=state.clock.now_us(),
    )
    return step, prover.token


async def refusal(state: AppState, session: OwnerSession, *, address: str) -> Step:
    return await proof.refusal(
        state.database.reader,
        _prover(state, session, ""),
        key=state.token_key,
        address=address,
        now_us=state.clock.now_us(),
    )


async def carmaker_login(
    state: AppState, session: OwnerSession, *, token: str, prefix: str
) -> Step:
    return await proof.start_carmaker_login(
        state.database,
        _prover(state, session, token),
        key=state.token_key,
        secret=state.session_key,
        connector=_connector(state, session),
        prefix=prefix,
        callback_url=callback_url(state, session.environment),
        now_us=state.clock.now_us(),
    )


async def carmaker_returned(
    state: AppState, session: OwnerSession, query: Mapping[str, str], *, token: str
) -> tuple[Step, str | None]:
    """The carmaker's login sent the owner back: the step and, proven, the new token."""
    prover = _prover(state, session, token)
    step = await proof.carmaker_returned(
        state.database,
        prover,
        query,
        key=state.token_key,
        secret=state.session_key,
        connector=_connector(state, session),
        callback_url=callback_url(state, session.environment),
        now_us=state.clock.now_us(),
    )
    return step, prover.token


async def withdraw(
    state: AppState,
    environment: Environment,
    authorization_ids: Sequence[str],
    *,
    detail: str = WITHDRAWN_IN_PORTAL,
    vin: str | None = None,
) -> dict[str, Outcome]:
    """End grants at once (`service.revoke_grant`); after the commit, open streams check
    their tokens now when one was withdrawn."""
    async with state.database.transaction() as conn:
        outcomes = await service.revoke_grant(
            conn,
            environment=environment,
            authorization_ids=authorization_ids,
            detail=detail,
            now_us=state.clock.now_us(),
            vin=vin,
        )
    if any(outcome is Outcome.withdrawn for outcome in outcomes.values()):
        state.access_changed()
    return outcomes


async def withdraw_application(
    state: AppState, environment: Environment, vin: str, authorization_id: str
) -> Outcome:
    """Every grant the application of `authorization_id` holds for the vehicle ends
    (`service.withdraw_application`); open streams are told after the commit."""
    async with state.database.transaction() as conn:
        outcome = await service.withdraw_application(
            conn, environment, vin, authorization_id, now_us=state.clock.now_us()
        )
    if outcome is Outcome.withdrawn:
        state.access_changed()
    return outcome


async def withdraw_all(state: AppState, environment: Environment, vin: str) -> dict[str, Outcome]:
    """Every live grant of the vehicle, as `withdraw`."""
    async with state.database.transaction() as conn:
        outcomes = await service.withdraw_all(conn, environment, vin, now_us=state.clock.now_us())
    if any(outcome is Outcome.withdrawn for outcome in outcomes.values()):
        state.access_changed()
    return outcomes
