"""Eligibility: ask the brand's connector, answer in the interface's shape."""

from __future__ import annotations

import asyncio
from typing import Any

from autoport.brands.base import ConnectivityStatus, ConnectorError
from autoport.brands.registry import BrandRegistry, activated_brand
from autoport.kit.auth import Caller, require_scope
from autoport.kit.db import Connection
from autoport.kit.errors import ApiError
from autoport.vehicles.access import another_accounts_car
from autoport.vehicles.vin import vin_problem

SCOPE = "vehicle:eligibility-check"
# A carmaker that does not answer within this bound gets the caller a 504, not a hang.
CONNECTOR_TIMEOUT_SECONDS = 10.0


async def check_eligibility(
    registry: BrandRegistry, conn: Connection, *, caller: Caller, vin: str, brand: str
) -> dict[str, Any]:
    require_scope(caller, SCOPE)
    problem = vin_problem(vin)
    if problem is not None:
        raise ApiError(422, f"vin: {problem}", source="vin")
    canonical = activated_brand(caller, brand, vin=vin, codes=registry.maker_codes)
    if await another_accounts_car(
        conn, environment=caller.environment, application_id=caller.application_id, vin=vin
    ):
        # A console user's sandbox car is its account's alone: to another account's
        # application the emulated carmaker answers as for an ineligible car (as the
        # fleet worker rejects its clearance), never from that car's settings.
        return {
            "vin": vin,
            "eligible": False,
            "data_delivery": [],
            "connectivity_status": str(ConnectivityStatus.unknown),
        }
    connector = registry.connector_for(caller.environment, canonical)
    try:
        async with asyncio.timeout(CONNECTOR_TIMEOUT_SECONDS):
            result = await connector.eligibility(environment=caller.environment, vin=vin)
    except TimeoutError as error:
        raise ApiError(504, "the carmaker did not answer in time", source="brand") from error
    except ConnectorError as error:
        raise ApiError(503, f"the carmaker could not answer: {error}", source="brand") from error
    answer: dict[str, Any] = {
        "vin": vin,
        "eligible": result.eligible,
        "data_delivery": list(result.data_delivery),
        "connectivity_status": str(result.connectivity_status),
    }
    if result.primary_user_assigned is not None:
        answer["primary_user_assigned"] = result.primary_user_assigned
    return answer
