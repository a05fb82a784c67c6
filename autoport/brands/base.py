"""The interface every carmaker connector implements.

A connector answers four questions for its brand, each the way its carmaker can:
- is a VIN eligible (and how does it deliver data, is it connected)?
- what became of a fleet clearance request (decided on the carmaker's side,
  asynchronously: the fleet worker asks again until the answer is final)? A connector
  that does not implement `clearance` leaves the decision to the brand's data provider
  (or the operator): autoport.fleet.decisions. Nothing is ever approved by default.
- how does an owner prove ownership during consent (a method name, and for
  `vehicle_code` the delivery of the code to the car: `show_vehicle_code`; for
  `oem_login` the carmaker's own login: `oem_login_url` and `oem_login_owner`)?
- fresh data on demand (`fetch`, the `autoport.brands.sources.DataSource` contract),
  or None when the brand only pushes.
- a vehicle command (`execute_command`: lock the doors, start charging ...), or a clear
  failure when the carmaker offers none (the default). The resulting vehicle state
  arrives through ingestion like any other data.
Data a carmaker pushes enters through `push` (see autoport.brands.push).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from autoport.brands.sources import FetchResult
from autoport.kit.environments import Environment


class VerificationMethod(enum.StrEnum):
    """How an owner proves ownership during consent (docs/consent.md)."""

    instant = "instant"
    vehicle_code = "vehicle_code"
    oem_login = "oem_login"
    owner_portal = "owner_portal"


class ConnectivityStatus(enum.StrEnum):
    activated = "activated"
    deactivated = "deactivated"
    unknown = "unknown"


DataDelivery = Literal["pull", "push"]


@dataclass(frozen=True, slots=True)
class Eligibility:
    eligible: bool
    # Always present in the answer: a subset of ("pull", "push"), empty when ineligible.
    data_delivery: tuple[DataDelivery, ...]
    connectivity_status: ConnectivityStatus
    primary_user_assigned: bool | None = None


class ClearanceOutcome(enum.StrEnum):
    pending = "pending"
    approved = "approved"
    rejected = "rejected"
    error = "error"


@dataclass(frozen=True, slots=True)
class ClearanceDecision:
    """The carmaker's answer about one clearance. `pending` means "ask again", at
    `check_again_at_us` when the connector knows when (else the worker's poll interval)."""

    outcome: ClearanceOutcome
    reason: str | None = None
    check_again_at_us: int | None = None


@dataclass(frozen=True, slots=True)
class RemovalDecision:
    """The carmaker's answer about revoking (approved vehicle) or canceling (pending
    request) a clearance: done, or not yet (ask again)."""

    done: bool
    reason: str | None = None
    check_again_at_us: int | None = None


@dataclass(frozen=True, slots=True)
class ClearanceRequest:
    """What a connector is told about a clearance it is asked about."""

    environment: Environment
    application_id: str
    vin: str
    brand: str
    # When the vehicle entered its current status (pending / revoking / canceling).
    since_us: int
    now_us: int


CommandStatus = Literal["executed", "failed", "timed_out"]


@dataclass(frozen=True, slots=True)
class CommandRequest:
    """One vehicle command, as a connector is asked to execute it. `command_id` is
    autoport's id: a carmaker API that deduplicates gets it as its idempotency key."""

    environment: Environment
    command_id: str
    vin: str
    brand: str
    capability: str
    command: str
    arguments: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """What became of a command at the carmaker. `reason` is one of the spec's failure
    reasons (autoport.catalog.validation.FAILURE_REASONS) when not executed."""

    status: CommandStatus
    reason: str | None = None
    description: str | None = None


class ConnectorError(Exception):
    """The carmaker's side could not answer now (network, outage); the fleet worker
    retries later instead of deciding anything."""


@dataclass
class BrandConnector:
    """Base class of connectors. Subclasses override what their carmaker supports; the
    defaults describe a brand that only pushes data, whose data provider decides its
    fleet clearances."""

    # The emulated vehicle's display reads its consent code from the store (sandbox);
    # a real vehicle gets it through show_vehicle_code and the store keeps only a hash.
    code_display_in_store: ClassVar[bool] = False

    name: str = "base"
    # The safe default: the carmaker confirms the owner's approval itself.
    verification_method: VerificationMethod = VerificationMethod.owner_portal
    data_delivery: tuple[DataDelivery, ...] = field(default=("push",))

    def verification_problem(self) -> str | None:
        """Why this connector's `verification_method` cannot prove ownership in
        production, or None. Checked when the brand registry is built, so a production
        brand never offers a method that proves nothing."""
        method = self.verification_method
        if method is VerificationMethod.instant:
            return "instant proves no ownership (it is the sandbox's method)"
        if method is VerificationMethod.oem_login and (
            type(self).oem_login_url is BrandConnector.oem_login_url
            or type(self).oem_login_owner is BrandConnector.oem_login_owner
        ):
            return (
                "oem_login needs a carmaker login adapter: the connector must implement "
                "oem_login_url and oem_login_owner"
            )
        if (
            method is VerificationMethod.vehicle_code
            and type(self).show_vehicle_code is BrandConnector.show_vehicle_code
        ):
            return "vehicle_code needs the connector to implement show_vehicle_code"
        return None

    def verification_method_for(self, brand: str) -> VerificationMethod:
        """How owners of `brand` prove ownership through this connector. One method for
        every brand it serves; a connector serving several brands may answer per brand
        (the sandbox's does)."""
        return self.verification_method

    def oem_login_page(self, brand: str) -> str | None:
        """The path (under the environment's prefix) of a carmaker login autoport serves
        itself for `brand` (the sandbox's simulated carmaker, autoport.sandbox.oem_login),
        or None: the owner signs in at the carmaker's own login (`oem_login_url`, then
        `oem_login_owner` at our callback). A real carmaker's owners never sign in on a
        page autoport serves."""
        return None

    async def show_vehicle_code(
        self, *, environment: Environment, vin: str, code: str, expires_at_us: int
    ) -> None:
        """Put a one-time consent code on the vehicle's display (`vehicle_code`). Raise
        ConnectorError when the vehicle or the carmaker cannot be reached: the owner is
        told and may ask for a new code."""
        raise NotImplementedError(f"{type(self).__name__} cannot show codes in vehicles")

    async def oem_login_url(
        self, *, environment: Environment, vin: str, state: str, redirect_uri: str
    ) -> str:
        """The carmaker's authorization URL (`oem_login`, OAuth 2.0 authorization-code
        style) the owner's browser is sent to. It must carry our opaque `state` and our
        absolute callback `redirect_uri`; the carmaker sends the owner back to
        `redirect_uri` with `state` and its answer (`code`, or `error`)."""
        raise NotImplementedError(f"{type(self).__name__} has no carmaker login")

    async def oem_login_owner(
        self,
        *,
        environment: Environment,
        vin: str,
        callback: Mapping[str, str],
        redirect_uri: str,
    ) -> str | None:
        """Given the query parameters the carmaker sent back to `redirect_uri` (`code`,
        or `error` when the owner cancelled), exchange them with the carmaker: the owner's
        account id at the carmaker when that account owns `vin`, None when it does not or
        the login failed. Raise ConnectorError when the carmaker cannot be reached.
        Autoport has already checked `state`."""
        raise NotImplementedError(f"{type(self).__name__} has no carmaker login")

    @property
    def fetches(self) -> bool:
        """Whether `fetch` may return fresh data (then it is installed as a data source)."""
        return "pull" in self.data_delivery

    async def eligibility(self, *, environment: Environment, vin: str) -> Eligibility:
        return Eligibility(
            eligible=True,
            data_delivery=self.data_delivery,
            connectivity_status=ConnectivityStatus.unknown,
        )

    def decides_clearances(self) -> bool:
        """Whether the carmaker answers clearance requests through `clearance`; if not,
        the brand's data provider or the operator decides (autoport.fleet.decisions)."""
        return type(self).clearance is not BrandConnector.clearance

    async def clearance(self, request: ClearanceRequest) -> ClearanceDecision:
        """Not asked when `decides_clearances()` is False; still never an approval."""
        return ClearanceDecision(
            ClearanceOutcome.pending, reason="awaiting the data provider's decision"
        )

    async def revoke_clearance(self, request: ClearanceRequest) -> RemovalDecision:
        return RemovalDecision(done=True)

    async def cancel_clearance(self, request: ClearanceRequest) -> RemovalDecision:
        return RemovalDecision(done=True)

    async def fetch(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> FetchResult | None:
        """`DataSource.fetch`: None means "served from what was pushed"."""
        return None

    async def execute_command(self, request: CommandRequest) -> CommandOutcome:
        """Send one command to the vehicle and say what became of it. Called at most once
        per command: never retry inside, and answer `timed_out` when the carmaker's
        answer is lost (the command may have run). The default: a brand that only pushes
        data has no way to reach the vehicle."""
        return CommandOutcome(
            "failed",
            "oem_error",
            f"the carmaker of brand {request.brand!r} offers no remote commands "
            "(its data is pushed to autoport; nothing reaches the vehicle)",
        )
