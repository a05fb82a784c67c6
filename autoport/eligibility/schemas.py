from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from autoport.brands.base import ConnectivityStatus, DataDelivery


class EligibilityRequest(BaseModel):
    """`{vin, brand}`; the brand in either spelling (`mercedes-benz` or `mercedes_benz`)."""

    model_config = ConfigDict(extra="ignore")

    vin: str
    brand: str


class EligibilityAnswer(BaseModel):
    vin: str
    eligible: bool
    data_delivery: list[DataDelivery]
    connectivity_status: ConnectivityStatus
    primary_user_assigned: bool | None = Field(
        default=None, description="absent when the carmaker does not say"
    )
