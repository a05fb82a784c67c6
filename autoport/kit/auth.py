"""Who is calling: the contract between the authorization server (autoport.oauth), which
turns a bearer token into a `Caller`, and every feature that serves data to one.

Features never look at tokens. They declare `caller: CallerDep` and receive a verified
Caller of the request's environment, or the request has already been answered 401.
The admin API uses `AdminDep` (the operator's admin token).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from autoport.config import current_admin_token_sha256
from autoport.kit.crypto import same, sha256_hex
from autoport.kit.environments import Environment, environment_of
from autoport.kit.errors import ApiError
from autoport.kit.state import state_of


class GrantStatus(enum.StrEnum):
    pending = "pending"
    approved = "approved"
    rejected = "rejected"
    revoked = "revoked"


class CallerKind(enum.StrEnum):
    # A token from the consent flow: bound to one vehicle and the owner's grant.
    vehicle = "vehicle"
    # A client_credentials token: the application itself (eligibility, fleet).
    application = "application"


@dataclass(frozen=True, slots=True)
class Grant:
    """The owner's authorization behind a vehicle token."""

    authorization_id: str
    vin: str
    # The brand the owner consented for: the grant serves only that brand's data.
    brand: str
    # Granted properties as "capability.property" (e.g. "charging.battery_level").
    properties: frozenset[str]
    status: GrantStatus
    valid_from_us: int
    valid_until_us: int | None


@dataclass(frozen=True, slots=True)
class Caller:
    environment: Environment
    kind: CallerKind
    application_id: str  # the application's internal id (stable, never shown to owners)
    client_id: str
    scopes: frozenset[str]
    # The properties the application asked for when registered ("capability.property").
    application_properties: frozenset[str]
    grant: Grant | None = None  # set for CallerKind.vehicle
    # Brands activated for the application (canonical spelling, see catalog.brands).
    application_brands: frozenset[str] = frozenset()
    # When the access token expires (µs): long-lived responses (SSE) end then.
    expires_at_us: int | None = None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


# The authorization server installs the function that verifies a bearer token; it raises
# ApiError(401) itself when the token is missing, unknown, expired, revoked, or of the
# other environment.
Authenticator = Callable[[Request, Environment], Awaitable[Caller]]


async def current_caller(request: Request) -> Caller:
    authenticate: Authenticator | None = getattr(request.app.state, "authenticator", None)
    if authenticate is None:
        raise ApiError(503, "no authorization server is configured", title="Unavailable")
    caller = await authenticate(request, environment_of(request))
    # For the request pipeline, which counts the request against the application once
    # answered (usage and metrics: autoport.kit.usage.application_requests).
    request.scope.setdefault("state", {})["application_id"] = caller.application_id
    return caller


CallerDep = Annotated[Caller, Depends(current_caller)]


def require_scope(caller: Caller, scope: str) -> None:
    if not caller.has_scope(scope):
        raise ApiError(403, f"the access token lacks the scope '{scope}'", source="scope")


async def require_admin(request: Request) -> None:
    """The admin API: `Authorization: Bearer <admin token>`, compared in constant time
    against the stored hash (as it is now: `autoport admin-token --rotate` applies to
    running servers)."""
    expected = current_admin_token_sha256(state_of(request).settings)
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token or expected is None:
        raise ApiError(
            401,
            "the admin API needs 'Authorization: Bearer <admin token>'",
            source="Authorization",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not same(sha256_hex(token.strip()), expected):
        raise ApiError(
            401,
            "the admin token is not valid",
            source="Authorization",
            headers={"WWW-Authenticate": "Bearer"},
        )


AdminDep = Annotated[None, Depends(require_admin)]
