"""The answers of POST /v1/ingest, as documented in the OpenAPI description (the route
writes IngestReport.as_dict() views with orjson)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from autoport.kit.errors import ErrorItemSchema


class AcceptedPointView(BaseModel):
    property: str = Field(examples=["charging.battery_level"])
    changed: bool = Field(description="false: older than the stored value, history only")


class RejectedPointView(BaseModel):
    source: str = Field(description="where in the body, e.g. charging.battery_level.data")
    reason: str


class VehicleReport(BaseModel):
    vin: str | None
    brand: str | None
    accepted: list[AcceptedPointView]
    rejected: list[RejectedPointView]


class IngestAnswer(BaseModel):
    request_id: str
    accepted_count: int
    rejected_count: int
    vehicles: list[VehicleReport]


class IngestRejected(IngestAnswer):
    """422: nothing could be accepted; the errors shape plus the per-vehicle report."""

    errors: list[ErrorItemSchema]
