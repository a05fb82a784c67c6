from __future__ import annotations

from starlette.responses import Response

from autoport.brands.registry import registry_of
from autoport.catalog.brands import MAKER_CODE_RULE
from autoport.eligibility.schemas import EligibilityAnswer, EligibilityRequest
from autoport.eligibility.service import check_eligibility
from autoport.kit.auth import CallerDep
from autoport.kit.routing import api_router, documented, json_response
from autoport.kit.state import StateDep

router = api_router(tags=["eligibility"])


@router.post("/v1/eligibility", responses={200: {"model": EligibilityAnswer}})
@documented(MAKER_CODE_RULE)
async def eligibility(body: EligibilityRequest, caller: CallerDep, state: StateDep) -> Response:
    """Whether a vehicle can deliver data: `eligible`, `data_delivery` (`pull`, `push`),
    `connectivity_status` (`activated`, `deactivated`, `unknown`) and
    `primary_user_assigned`. Needs a client_credentials token with the scope
    `vehicle:eligibility-check`; the brand must be activated for the application."""
    answer = await check_eligibility(
        registry_of(state), state.database.reader, caller=caller, vin=body.vin, brand=body.brand
    )
    return json_response(answer)
