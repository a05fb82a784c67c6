"""The consent steps that span a transaction and the network, for the routes to call:
entering the VIN (the session changes, then the brand's proof begins: a code shown in
the vehicle), and each step of the ownership proof (autoport.proof.flows) with the
consent session as the prover.

A route reads the form, calls one of these, and renders what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoport.brands.base import BrandConnector
from autoport.brands.registry import registry_of
from autoport.consent import service
from autoport.consent.service import Context
from autoport.kit.db import Connection
from autoport.kit.environments import Environment, public_base_url
from autoport.kit.state import AppState
from autoport.proof import flows as proof
from autoport.proof.flows import Step
from autoport.proof.service import BACK_TO_CONSENT, Method
from autoport.web.errors import PageError

CALLBACK = "/oauth/consent/oem-callback"


@dataclass(frozen=True, slots=True)
class SessionProver:
    """A consent session proving ownership of its VIN (autoport.proof.flows.Prover)."""

    ctx: Context
    back: str = BACK_TO_CONSENT

    @property
    def session_id(self) -> str:
        return self.ctx.session.id

    @property
    def environment(self) -> Environment:
        return self.ctx.session.environment

    @property
    def brand(self) -> str:
        return self.ctx.session.brand or ""

    @property
    def vin(self) -> str:
        return self.ctx.session.vin or ""

    @property
    def method(self) -> Method | None:
        method = self.ctx.session.method
        return None if method is None else Method(method)

    @property
    def oem_nonce_hash(self) -> str | None:
        return self.ctx.session.oem_nonce_hash

    async def keep_nonce(self, conn: Connection, nonce_hash: str, *, now_us: int) -> None:
        await service.keep_nonce(conn, self.ctx, nonce_hash=nonce_hash, now_us=now_us)

    async def proven(
        self, conn: Connection, subject: str, *, nonce_hash: str | None, now_us: int
    ) -> bool:
        return await service.record_proof(
            conn, self.ctx, subject=subject, nonce_hash=nonce_hash, now_us=now_us
        )


def _connector(state: AppState, ctx: Context) -> BrandConnector:
    if ctx.session.brand is None:
        raise PageError("step_order")
    return registry_of(state).connector_for(ctx.session.environment, ctx.session.brand)


def callback_url(state: AppState, environment: Environment) -> str:
    """Our absolute callback, where a real carmaker's login sends the owner back."""
    return f"{public_base_url(state.settings, environment)}{CALLBACK}"


async def load(state: AppState, environment: Environment, token: str | None) -> Context:
    """The browser's open session (PageError when there is none)."""
    return await service.load(
        state.database.reader,
        key=state.token_key,
        environment=environment,
        token=token,
        now_us=state.clock.now_us(),
    )


async def enter_vin(
    state: AppState, ctx: Context, vin: str | None, *, token: str, address: str
) -> tuple[Context, Step | None]:
    """Record the VIN with the brand's proof method and, for a vehicle code, show the
    first code in the vehicle (after the commit). The session as it is now, and the
    code's step (None when the method shows none). FormProblem for a VIN to correct."""
    if ctx.session.brand is None:
        raise PageError("step_order")
    registry = registry_of(state)
    # One source of truth: the brand's connector says how ownership is proven.
    method = registry.verification_method(ctx.session.environment, ctx.session.brand)
    async with state.database.transaction() as conn:
        await service.enter_vin(
            conn,
            ctx,
            key=state.token_key,
            vin=vin,
            method=method,
            now_us=state.clock.now_us(),
            maker_codes=registry.maker_codes,
        )
    ctx = await load(state, ctx.session.environment, token)
    if method is not Method.vehicle_code:
        return ctx, None
    return ctx, await new_code(state, ctx, address=address)


async def new_code(state: AppState, ctx: Context, *, address: str) -> Step:
    """A new code on the vehicle's display."""
    if ctx.session.vin is None or ctx.session.method != Method.vehicle_code:
        raise PageError("step_order")
    return await proof.show_new_code(
        state.database,
        SessionProver(ctx),
        settings=state.settings,
        key=state.token_key,
        connector=_connector(state, ctx),
        address=address,
        now_us=state.clock.now_us(),
    )


async def check_code(state: AppState, ctx: Context, code: str | None, *, address: str) -> Step:
    """A typed code: every try counts; accepted, the session is verified."""
    if ctx.session.vin is None or ctx.session.method != Method.vehicle_code:
        raise PageError("step_order")
    return await proof.check_code(
        state.database,
        SessionProver(ctx),
        code,
        settings=state.settings,
        key=state.token_key,
        address=address,
        now_us=state.clock.now_us(),
    )


async def refusal(state: AppState, ctx: Context, *, address: str) -> Step:
    """Why no code can be entered or shown now, said before the owner types anything."""
    return await proof.refusal(
        state.database.reader,
        SessionProver(ctx),
        key=state.token_key,
        address=address,
        now_us=state.clock.now_us(),
    )


async def carmaker_login(state: AppState, ctx: Context, *, prefix: str) -> Step:
    """Where the owner signs in at the carmaker (`Step.go_to`)."""
    session = ctx.session
    if session.vin is None or session.brand is None or session.method != Method.oem_login:
        raise PageError("step_order")
    return await proof.start_carmaker_login(
        state.database,
        SessionProver(ctx),
        key=state.token_key,
        secret=state.session_key,
        connector=_connector(state, ctx),
        prefix=prefix,
        callback_url=callback_url(state, session.environment),
        now_us=state.clock.now_us(),
    )


async def carmaker_returned(state: AppState, ctx: Context, query: dict[str, str]) -> Step:
    """The carmaker's login sent the owner back (`Step.proven` when it confirmed)."""
    return await proof.carmaker_returned(
        state.database,
        SessionProver(ctx),
        query,
        key=state.token_key,
        secret=state.session_key,
        connector=_connector(state, ctx),
        callback_url=callback_url(state, ctx.session.environment),
        now_us=state.clock.now_us(),
    )
