from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class EligibilityRequest(BaseModel):
    """`{vin, brand}`; the brand in either spelling (`mercedes-benz` or `mercedes_benz`)."""

    model_config = ConfigDict(extra="ignore")

    vin: str
    brand: str
