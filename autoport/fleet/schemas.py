from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class AddVehiclesRequest(BaseModel):
    """`{"vehicles": [{"vin", "brand", "tags"?}]}`. Items are checked one by one (a bad
    VIN or brand is reported for that vehicle inside the 200), so they are loose here."""

    model_config = ConfigDict(extra="ignore")

    vehicles: list[Any] = Field(
        description="Vehicles to clear: each {vin, brand, tags?: {str: str}}",
        examples=[[{"vin": "SBX00000000000001", "brand": "sandbox", "tags": {"depot": "n"}}]],
    )
