"""The `sandbox` brand: a complete, configurable carmaker, so every path of eligibility,
fleet clearance and on-demand fetch can be exercised without a real one.

Behaviour comes from two places, most specific first:
1. a `SandboxBehaviour` (installed by the sandbox emulator) that may override, per
   vehicle, whether it is offline, in privacy mode, slow, failing, eligible and its
   connectivity;
2. the settings (`sandbox_connector_*`), the default for every vehicle.
"""

from __future__ import annotations

import asyncio
import fnmatch
import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

from autoport.brands.base import (
    BrandConnector,
    ClearanceDecision,
    ClearanceOutcome,
    ClearanceRequest,
    CommandOutcome,
    CommandRequest,
    ConnectivityStatus,
    DataDelivery,
    Eligibility,
    RemovalDecision,
    VerificationMethod,
)
from autoport.brands.sources import (
    FetchResult,
    PrivacyModeActive,
    SourceTimeout,
    SourceUnavailable,
    VehicleOffline,
)
from autoport.config import Settings
from autoport.kit.clock import MICROS, Clock, to_iso
from autoport.kit.environments import Environment

# The simulated carmaker login's page (autoport.sandbox.oem_login serves it): where the
# sandbox's `oem_login` verification sends the owner.
SIMULATED_OEM_LOGIN = "/oauth/oem/{brand}/login"

FetchFailure = Literal["none", "offline", "privacy_mode", "unavailable", "timeout"]


# The emulated carmaker's refusal of a clearance (an ineligible car, another account's).
NOT_ELIGIBLE = "the vehicle is not eligible for data access"


@dataclass(frozen=True, slots=True)
class VehicleBehaviour:
    """Per-vehicle overrides; None means "as the settings say"."""

    offline: bool | None = None
    # The owner switched data sharing off in the car: it answers nothing (pull 403).
    privacy_mode: bool | None = None
    # Extra seconds a fetch takes (a slow vehicle); past the caller's timeout it is a 504.
    latency_seconds: float | None = None
    fetch_failure: FetchFailure | None = None
    # "capability.property" names answered with a failure wrapper instead of data.
    failing_properties: frozenset[str] | None = None
    eligible: bool | None = None
    connectivity_status: ConnectivityStatus | None = None
    primary_user_assigned: bool | None = None
    clearance_outcome: ClearanceOutcome | None = None


class SandboxBehaviour(Protocol):
    """Implemented by the sandbox emulator from its vehicles' state."""

    async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
        """The overrides for one vehicle (an empty VehicleBehaviour when none)."""
        ...

    async def current_data(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> dict[str, dict[str, object]] | None:
        """Fresh values the emulated vehicle reports for `properties`, in the pull
        layout, or None to serve the stored values (what the simulator pushed)."""
        ...

    async def execute_command(self, request: CommandRequest) -> CommandOutcome:
        """The emulated vehicle obeys a command (or fails it, as physics or a scripted
        failure says); its new state is ingested like any other data."""
        ...


class SettingsBehaviour:
    """No per-vehicle overrides: every vehicle behaves as the settings say."""

    async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
        return VehicleBehaviour()

    async def current_data(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> dict[str, dict[str, object]] | None:
        return None

    async def execute_command(self, request: CommandRequest) -> CommandOutcome:
        return CommandOutcome(
            "failed", "oem_error", f"no sandbox vehicle with VIN {request.vin} takes commands"
        )


@dataclass(frozen=True, slots=True)
class SandboxDefaults:
    """The `sandbox_connector_*` settings, checked once."""

    clearance_delay_seconds: float = 3.0
    clearance_outcome: ClearanceOutcome = ClearanceOutcome.approved
    rejection_reason: str = "the carmaker refused the clearance (sandbox setting)"
    removal_delay_seconds: float = 1.0
    eligible_vins: str = "*"
    ineligible_vins: frozenset[str] = frozenset()
    connectivity_status: ConnectivityStatus = ConnectivityStatus.activated
    primary_user_assigned: bool = True
    fetch_latency_seconds: float = 0.0
    fetch_failure: FetchFailure = "none"
    failing_properties: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, settings: Settings) -> SandboxDefaults:
        return cls(
            clearance_delay_seconds=settings.sandbox_connector_clearance_delay_seconds,
            clearance_outcome=ClearanceOutcome(settings.sandbox_connector_clearance_outcome),
            rejection_reason=settings.sandbox_connector_rejection_reason,
            removal_delay_seconds=settings.sandbox_connector_removal_delay_seconds,
            eligible_vins=settings.sandbox_connector_eligible_vins,
            ineligible_vins=frozenset(settings.sandbox_connector_ineligible_vins),
            connectivity_status=ConnectivityStatus(settings.sandbox_connector_connectivity_status),
            primary_user_assigned=settings.sandbox_connector_primary_user_assigned,
            fetch_latency_seconds=settings.sandbox_connector_fetch_latency_seconds,
            fetch_failure=settings.sandbox_connector_fetch_failure,
            failing_properties=frozenset(settings.sandbox_connector_failing_properties),
        )

    def eligible_by_settings(self, vin: str) -> bool:
        if vin in self.ineligible_vins:
            return False
        pattern = self.eligible_vins
        # A glob (`*`, `SBX*`) or, written as /.../, a regular expression.
        if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
            return re.fullmatch(pattern[1:-1], vin) is not None
        return fnmatch.fnmatchcase(vin, pattern)


@dataclass
class SandboxConnector(BrandConnector):
    code_display_in_store: ClassVar[bool] = True

    name: str = "sandbox"
    verification_method: VerificationMethod = VerificationMethod.instant
    # Per canonical brand: the sandbox serves every brand, and each may verify ownership
    # its own way (settings `sandbox_connector_verification_method(s)`).
    verification_methods: dict[str, VerificationMethod] = field(default_factory=dict)
    data_delivery: tuple[DataDelivery, ...] = field(default=("pull", "push"))
    defaults: SandboxDefaults = field(default_factory=SandboxDefaults)
    behaviour: SandboxBehaviour = field(default_factory=SettingsBehaviour)
    clock: Clock = field(default_factory=Clock)

    def verification_method_for(self, brand: str) -> VerificationMethod:
        return self.verification_methods.get(brand, self.verification_method)

    def oem_login_page(self, brand: str) -> str | None:
        return SIMULATED_OEM_LOGIN.format(brand=brand)

    def verification_problem(self) -> str | None:
        return None  # every method is simulated here, the carmaker login included

    async def show_vehicle_code(
        self, *, environment: Environment, vin: str, code: str, expires_at_us: int
    ) -> None:
        """Nothing to send: the emulated vehicle's display reads the stored code
        (autoport.consent.service.current_vehicle_code)."""

    async def _vehicle(self, environment: Environment, vin: str) -> VehicleBehaviour:
        return await self.behaviour.behaviour_of(environment=environment, vin=vin)

    def _is_eligible(self, vin: str, vehicle: VehicleBehaviour) -> bool:
        if vehicle.eligible is not None:
            return vehicle.eligible
        return self.defaults.eligible_by_settings(vin)

    async def eligibility(self, *, environment: Environment, vin: str) -> Eligibility:
        vehicle = await self._vehicle(environment, vin)
        eligible = self._is_eligible(vin, vehicle)
        connectivity = vehicle.connectivity_status or self.defaults.connectivity_status
        primary = vehicle.primary_user_assigned
        return Eligibility(
            eligible=eligible,
            data_delivery=self.data_delivery if eligible else (),
            connectivity_status=connectivity if eligible else ConnectivityStatus.unknown,
            primary_user_assigned=self.defaults.primary_user_assigned
            if primary is None
            else primary,
        )

    async def clearance(self, request: ClearanceRequest) -> ClearanceDecision:
        decided_at = request.since_us + int(self.defaults.clearance_delay_seconds * MICROS)
        if request.now_us < decided_at:
            return ClearanceDecision(ClearanceOutcome.pending, check_again_at_us=decided_at)
        vehicle = await self._vehicle(request.environment, request.vin)
        if not self._is_eligible(request.vin, vehicle):
            return ClearanceDecision(ClearanceOutcome.rejected, reason=NOT_ELIGIBLE)
        outcome = vehicle.clearance_outcome or self.defaults.clearance_outcome
        if outcome is ClearanceOutcome.rejected:
            return ClearanceDecision(outcome, reason=self.defaults.rejection_reason)
        if outcome is ClearanceOutcome.error:
            return ClearanceDecision(
                outcome, reason="the carmaker could not process the clearance (sandbox setting)"
            )
        if outcome is ClearanceOutcome.pending:
            # Configured to stay pending: ask again after another delay.
            return ClearanceDecision(
                outcome,
                check_again_at_us=request.now_us
                + int(max(self.defaults.clearance_delay_seconds, 1.0) * MICROS),
            )
        return ClearanceDecision(ClearanceOutcome.approved)

    async def _removal(self, request: ClearanceRequest) -> RemovalDecision:
        done_at = request.since_us + int(self.defaults.removal_delay_seconds * MICROS)
        if request.now_us < done_at:
            return RemovalDecision(done=False, check_again_at_us=done_at)
        return RemovalDecision(done=True)

    async def revoke_clearance(self, request: ClearanceRequest) -> RemovalDecision:
        return await self._removal(request)

    async def cancel_clearance(self, request: ClearanceRequest) -> RemovalDecision:
        return await self._removal(request)

    async def execute_command(self, request: CommandRequest) -> CommandOutcome:
        """Like a carmaker: the vehicle's latency first; privacy mode refuses, an offline
        car never answers (timed_out); otherwise the emulated vehicle decides."""
        vehicle = await self._vehicle(request.environment, request.vin)
        latency = (
            self.defaults.fetch_latency_seconds
            if vehicle.latency_seconds is None
            else vehicle.latency_seconds
        )
        if latency > 0:
            await asyncio.sleep(latency)
        failure = vehicle.fetch_failure or self.defaults.fetch_failure
        if vehicle.privacy_mode or failure == "privacy_mode":
            return CommandOutcome(
                "failed",
                "privacy_mode_active",
                "the owner switched remote access off in the vehicle; it refuses commands",
            )
        if vehicle.offline or failure in ("offline", "timeout"):
            return CommandOutcome(
                "timed_out",
                "execution_timeout",
                "the vehicle is offline or asleep and did not answer",
            )
        if failure == "unavailable":
            return CommandOutcome(
                "failed", "oem_error", "the sandbox carmaker is unavailable (sandbox setting)"
            )
        return await self.behaviour.execute_command(request)

    async def fetch(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> FetchResult | None:
        vehicle = await self._vehicle(environment, vin)
        latency = (
            self.defaults.fetch_latency_seconds
            if vehicle.latency_seconds is None
            else vehicle.latency_seconds
        )
        if latency > 0:
            # The caller bounds the wait with asyncio.timeout: a slow vehicle becomes a 504.
            await asyncio.sleep(latency)
        failure = vehicle.fetch_failure or self.defaults.fetch_failure
        # Privacy mode first: the owner's choice outlasts the car being asleep.
        if vehicle.privacy_mode or failure == "privacy_mode":
            raise PrivacyModeActive()
        if vehicle.offline or failure == "offline":
            raise VehicleOffline("the vehicle is offline or asleep")
        if failure == "unavailable":
            raise SourceUnavailable("the sandbox carmaker is unavailable (sandbox setting)")
        if failure == "timeout":
            raise SourceTimeout("the sandbox carmaker did not answer in time (sandbox setting)")
        fresh = await self.behaviour.current_data(
            environment=environment, vin=vin, properties=properties
        )
        failing = (
            self.defaults.failing_properties
            if vehicle.failing_properties is None
            else vehicle.failing_properties
        ) & properties
        if fresh is None and not failing:
            return None  # nothing emulated for this VIN: the stored values are served
        data: dict[str, dict[str, object]] = {
            capability: dict(members) for capability, members in (fresh or {}).items()
        }
        stamp = to_iso(self.clock.now_us())
        for name in sorted(failing):
            capability, _, prop = name.partition(".")
            if prop in data.get(capability, {}):
                # The emulator already answers it with its own failure (reason, text).
                continue
            data.setdefault(capability, {})[prop] = {
                "failure": {
                    "reason": "execution_timeout",
                    "description": "the vehicle did not report this property (sandbox setting)",
                },
                "timestamp": stamp,
            }
        return FetchResult(data=data)
