"""Request bodies of the sandbox admin API, and the vehicle's JSON view."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from autoport.kit.clock import to_iso
from autoport.sandbox.physics import SANDBOX_COMMANDS, Powertrain, Scenario
from autoport.sandbox.repository import VehicleRow
from autoport.sandbox.service import MAX_TIME_SCALE, MIN_TIME_SCALE

Profile = Literal["basic", "standard", "full"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VehicleCreate(_Body):
    vin: str | None = Field(default=None, description="17 characters; generated when absent")
    name: str | None = Field(default=None, max_length=100)
    powertrain: Powertrain = Powertrain.electric
    profile: Profile = "standard"
    scenario: Scenario = Scenario.parked
    seed: int | None = Field(default=None, ge=0, le=2**62, description="random when absent")
    time_scale: float = Field(
        default=1.0, ge=MIN_TIME_SCALE, le=MAX_TIME_SCALE, description="simulated s per real s"
    )
    step_seconds: float = Field(
        default=1.0,
        ge=0.1,
        le=60,
        description="simulated seconds per step; larger for high time scales",
    )
    running: bool = True
    extra_properties: list[str] = Field(default_factory=list, max_length=500)


class ScenarioChange(_Body):
    scenario: Scenario | None = None
    seed: int | None = Field(default=None, ge=0, le=2**62)
    time_scale: float | None = Field(default=None, ge=MIN_TIME_SCALE, le=MAX_TIME_SCALE)
    running: bool | None = None
    reset: bool = False


class StepRequest(_Body):
    seconds: float = Field(gt=0, le=7 * 86_400)


class FailureSet(_Body):
    reason: str
    description: str | None = Field(default=None, max_length=500)


class BehaviourChange(_Body):
    offline: bool | None = None
    latency_seconds: float | None = Field(default=None, ge=0, le=600)
    eligible: bool | None = None
    connectivity_status: Literal["activated", "deactivated", "unknown"] | None = None
    privacy_mode: bool | None = Field(
        default=None,
        description="the owner switched data sharing off in the car: pulls answer 403 and "
        "the car sends nothing until it is switched off again",
    )


class ReplayRequest(_Body):
    scenario: Scenario
    powertrain: Powertrain = Powertrain.electric
    profile: Profile = "standard"
    seed: int = Field(ge=0, le=2**62)
    steps: int = Field(default=60, ge=1, le=3600)
    step_seconds: float = Field(default=1.0, gt=0, le=3600)
    start: str = Field(default="2026-01-01T00:00:00Z", description="ISO 8601 of step 0")


# Answers, as documented in the OpenAPI description (vehicle_view below builds the dict).

# Capability data in the pull layout: {capability: {property: wrapper or [wrapper]}}.
CapabilityDataView = dict[str, dict[str, Any]]


class SimulationView(BaseModel):
    scenario: Scenario
    seed: int
    running: bool
    time_scale: float
    step_seconds: float
    step: int
    simulated_seconds: float
    mode: str
    started_at: str


class BehaviourView(BaseModel):
    offline: bool
    latency_seconds: float
    eligible: bool
    connectivity_status: Literal["activated", "deactivated", "unknown"]
    privacy_mode: bool


class FailureView(BaseModel):
    reason: str
    description: str | None


class CommandFailureSet(_Body):
    status: Literal["failed", "timed_out"] = "failed"
    reason: str
    description: str | None = Field(default=None, max_length=500)


class CommandFailureView(BaseModel):
    status: Literal["failed", "timed_out"]
    reason: str
    description: str


class VehicleCommandsView(BaseModel):
    supported: list[str] = Field(description="capability.command the car obeys")
    executed: int = Field(description="commands the car obeyed")
    horn_honks: int
    horn_seconds: float
    light_flashes: int
    hvac_active: bool
    hvac_target_celsius: float
    failures: dict[str, CommandFailureView] = Field(description="scripted, by capability.command")


class SandboxVehicleView(BaseModel):
    vin: str
    brand: Literal["sandbox"]
    name: str | None
    powertrain: Powertrain
    profile: Profile
    properties: list[str]
    simulation: SimulationView
    behaviour: BehaviourView
    failures: dict[str, FailureView] = Field(description="by capability.property")
    pinned: dict[str, Any] = Field(description="values set by hand, by capability.property")
    commands: VehicleCommandsView
    created_at: str
    updated_at: str
    data: CapabilityDataView | None = Field(
        default=None, description="GET of one vehicle only: what a pull would answer now"
    )


class SandboxVehicleList(BaseModel):
    vehicles: list[SandboxVehicleView]


class VehicleCodeView(BaseModel):
    vin: str
    vehicle_code: str | None = Field(description="null while no consent flow waits for one")


class ReplayPoint(BaseModel):
    step: int
    timestamp: str
    data: CapabilityDataView = Field(description="what changed at this step")


class ReplayAnswer(BaseModel):
    vin: None
    brand: Literal["sandbox"]
    points: list[ReplayPoint]


def vehicle_view(vehicle: VehicleRow, *, data: dict[str, Any] | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "vin": vehicle.vin,
        "brand": "sandbox",
        "name": vehicle.name,
        "powertrain": vehicle.powertrain,
        "profile": vehicle.profile,
        "properties": list(vehicle.properties),
        "simulation": {
            "scenario": vehicle.scenario,
            "seed": vehicle.seed,
            "running": vehicle.running,
            "time_scale": vehicle.time_scale,
            "step_seconds": vehicle.step_seconds,
            "step": vehicle.step,
            "simulated_seconds": round(vehicle.state.sim_seconds, 3),
            "mode": vehicle.state.mode,
            "started_at": to_iso(vehicle.started_at),
        },
        "behaviour": {
            "offline": vehicle.offline,
            "latency_seconds": vehicle.latency_seconds,
            "eligible": vehicle.eligible,
            "connectivity_status": vehicle.connectivity_status,
            "privacy_mode": vehicle.privacy_mode,
        },
        "failures": {
            key: {"reason": f["reason"], "description": f["description"]}
            for key, f in sorted(vehicle.failures.items())
        },
        "pinned": {key: o["data"] for key, o in sorted(vehicle.overrides.items())},
        "commands": {
            "supported": list(SANDBOX_COMMANDS),
            "executed": vehicle.state.commands_executed,
            "horn_honks": vehicle.state.horn_honks,
            "horn_seconds": vehicle.state.horn_seconds,
            "light_flashes": vehicle.state.light_flashes,
            "hvac_active": vehicle.state.hvac_active,
            "hvac_target_celsius": vehicle.state.hvac_target_c,
            "failures": dict(sorted(vehicle.state.command_failures.items())),
        },
        "created_at": to_iso(vehicle.created_at),
        "updated_at": to_iso(vehicle.updated_at),
    }
    if data is not None:
        view["data"] = data
    return view
