"""The admin API's answer to revoking a grant."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class RevokeResult(BaseModel):
    authorization_id: str
    status: Literal["revoked"]
