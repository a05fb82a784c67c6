from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic.json_schema import SkipJsonSchema

from autoport.fleet.states import Status


class AddVehiclesRequest(BaseModel):
    """`{"vehicles": [{"vin", "brand", "tags"?}]}`. Items are checked one by one (a bad
    VIN or brand is reported for that vehicle inside the 200), so they are loose here."""

    model_config = ConfigDict(extra="ignore")

    vehicles: list[Any] = Field(
        description="Vehicles to clear: each {vin, brand, tags?: {str: str}}",
        examples=[[{"vin": "SBX00000000000001", "brand": "sandbox", "tags": {"depot": "n"}}]],
    )


# Answers, as documented in the OpenAPI description (the service builds the dicts).


class ChangelogEntry(BaseModel):
    timestamp: str
    status: Status
    reason: str | None = None


class FleetVehicleView(BaseModel):
    vin: str
    brand: str
    status: Status
    tags: dict[str, str]
    changelog: list[ChangelogEntry] = Field(description="oldest first")


class FleetVehicleList(RootModel[list[FleetVehicleView]]):
    """A page of the fleet list: a bare array, as the original answers it."""


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


class AddedVehicle(BaseModel):
    """One requested vehicle's outcome, in request order."""

    # Optional but never null: the schema says string, no default.
    vin: str | SkipJsonSchema[None] = Field(
        default=None,
        json_schema_extra=_no_default,
        description="the vin sent, as a string (a number as its JSON text); absent, never "
        "null, when the item had no vin, a null one, or an object or array",
    )
    status: Status
    description: str | None = Field(
        default=None, description="why, for status error or a vehicle already registered"
    )
    tags: dict[str, str] | None = None


class AddVehiclesAnswer(BaseModel):
    vehicles: list[AddedVehicle]


class PendingClearance(BaseModel):
    """A clearance as its decider (data provider or operator) sees it."""

    application_id: str
    vin: str
    brand: str
    status: str
    requested_at: str


class PendingClearanceList(BaseModel):
    clearances: list[PendingClearance] = Field(description="oldest request first")
    next_cursor: str | None
