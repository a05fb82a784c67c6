"""Bodies of the consent admin API (how a carmaker reports an owner's decision)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class OwnerDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Passed on as the `detail` of the authorization_changed event (e.g. a reason).
    detail: str | None = Field(default=None, max_length=500)


class OwnerDecisionResult(BaseModel):
    authorization_id: str
    status: Literal["approved", "rejected"]
