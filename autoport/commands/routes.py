"""POST /v1/vehicle-commands/autoapi-13/{vin}, GET /v1/vehicle-commands/{id} and the
command catalog. Thin: authenticate, call the service, answer.

The send and the read are hot routes, answered by the request pipeline before FastAPI
(autoport.kit.middleware; FastAPI's dependency and body machinery was a third of a
command's cost); the FastAPI routes below document them and answer the same."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import orjson
from fastapi import Header, Request
from pydantic import ValidationError
from starlette.responses import Response

from autoport.catalog.commands import COMMANDS
from autoport.commands import service
from autoport.commands.schemas import (
    EXECUTED,
    CommandCatalog,
    CommandIn,
    CommandRow,
    CommandView,
)
from autoport.kit import jsonlimit
from autoport.kit.auth import Caller, CallerDep, current_caller
from autoport.kit.errors import ApiError, validation_items
from autoport.kit.routing import (
    HotRoute,
    api_router,
    documented,
    is_json_content_type,
    json_response,
)
from autoport.kit.state import AppState, state_of

router = api_router(tags=["vehicle commands"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "Malformed VIN or Idempotency-Key (the detail names it)"},
    401: {"description": "Missing, invalid, expired or revoked token, or another environment's"},
    403: {
        "description": "No approved consent or fleet clearance for this VIN, or the token "
        "lacks a `<capability>.set.<property>` scope of the command (named in the detail)"
    },
    404: {"description": "No such command for this application"},
    409: {"description": "Another command of this capability is in flight for the vehicle"},
    422: {
        "description": "Unknown capability or command, arguments that do not fit the "
        "catalog, or an Idempotency-Key reused with another request (the field is named)"
    },
    429: {
        "description": "The vehicle's command rate limit is used up, or (`Prefer: wait`) "
        "the application already has as many requests waiting as it may; see Retry-After"
    },
}
_WAIT_DOC = (
    "`Prefer: wait=N` (RFC 7240) waits up to N seconds for the command to finish: "
    "answered `200` with the finished command and `Preference-Applied`; still unfinished "
    "after N seconds, the command as it is (`202` on the send). An executed command "
    "carries `state`: the properties it wrote, as stored now, that the application may "
    "read now (its access is read again after a wait: withdrawn meanwhile, `{}`). A "
    "command whose access was withdrawn before it was sent ends `cancelled` (reason "
    "`unauthorised`), never sent. An application waits on at most "
    "`vehicle_command_max_waiting_per_application` (64) requests at once per server "
    "process: one more is `429` (`source: Prefer`), before anything is accepted."
)


def _wait(state: AppState, request: Request) -> float | None:
    prefer = request.headers.get("prefer")
    return service.wanted_wait(prefer, state.settings.vehicle_command_max_wait_seconds)


async def _answer(
    state: AppState,
    caller: Caller,
    row: CommandRow,
    wait: float | None,
    headers: dict[str, str],
    *,
    unfinished_status: int,
    access: tuple[frozenset[str], str] | None = None,
) -> Response:
    if wait is not None:
        poll = min(0.1, state.settings.vehicle_command_poll_seconds)
        waited = await service.wait_finished(
            state.database.reader, service.hub_of(state), row, wait, poll=poll
        )
        if waited.status == EXECUTED and waited is not row:
            # The access checked when the request began may be gone (withdrawn,
            # disabled, revoked) by now: the new state is shown only as it stands.
            access = await service.access_now(state, caller, waited.vin)
        row = waited
        headers = {**headers, "Preference-Applied": f"wait={int(wait)}"}
    headers["Location"] = f"{service.PATH}/{row.id}"
    status = 200 if row.finished else unfinished_status
    body = await service.view(state, caller, row, access=access)
    return json_response(body, status_code=status, headers=headers)


SEND_PATH = "/v1/vehicle-commands/autoapi-13/{vin}"
READ_PATH = "/v1/vehicle-commands/{command_id}"
# FastAPI's message for a body that is no object (its own wording, kept by the twin test).
_NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"


def _invalid(errors: Sequence[Mapping[str, Any]]) -> ApiError:
    """Validation errors answered as FastAPI's handler answers them (kit.errors)."""
    status, items = validation_items(errors)
    first, *more = items
    return ApiError(status, first.detail, title=first.title, source=first.source, more=more)


async def _parse(request: Request) -> CommandIn:
    """The body, checked exactly as the twin's FastAPI and JsonApiRoute check it (415,
    400 for a missing or malformed body, 422 naming the field: the same answers, held
    by tests/commands/test_hot_route_twin.py), without FastAPI's machinery."""
    raw = await request.body()
    content_type = request.headers.get("content-type", "")
    if raw and not is_json_content_type(content_type):
        raise ApiError(
            415,
            f"Content-Type must be application/json, got {content_type or 'none'}",
            source="Content-Type",
        )
    if not raw:
        raise _invalid([{"type": "missing", "loc": ("body",)}])
    try:
        data = jsonlimit.loads(raw)
    except jsonlimit.TooDeep as error:
        raise ApiError(400, f"body: {error}", source="body") from None
    except orjson.JSONDecodeError:
        try:  # the standard library's reading and message, as FastAPI's
            data = json.loads(raw)
        except json.JSONDecodeError as error:
            raise _invalid(
                [{"type": "json_invalid", "loc": ("body", error.pos), "ctx": {"error": error.msg}}]
            ) from None
        except ValueError:  # not text in any JSON encoding (UnicodeDecodeError): as FastAPI
            raise ApiError(400, "There was an error parsing the body") from None
    if not isinstance(data, dict):
        raise _invalid([{"type": "model_attributes_type", "loc": ("body",), "msg": _NOT_AN_OBJECT}])
    try:
        return CommandIn.model_validate(data)
    except ValidationError as error:
        raise _invalid(error.errors()) from None


async def _send(request: Request, vin: str, body: CommandIn, caller: Caller) -> Response:
    state = state_of(request)
    wait = _wait(state, request)
    async with service.wait_slot(state, caller, wait):  # 429 before anything is accepted
        accepted = await service.submit(
            state, caller, vin, body, idempotency_key=request.headers.get("idempotency-key")
        )
        headers = dict(accepted.rate_headers)
        if accepted.replayed:
            headers["Idempotent-Replayed"] = "true"
        return await _answer(
            state,
            caller,
            accepted.command,
            wait,
            headers,
            unfinished_status=202,
            access=(accepted.readable, accepted.brand),
        )


async def _read(request: Request, command_id: str, caller: Caller) -> Response:
    state = state_of(request)
    wait = _wait(state, request)
    async with service.wait_slot(state, caller, wait):
        row = await service.get_for(state.database.reader, caller, command_id)
        return await _answer(state, caller, row, wait, {}, unfinished_status=200)


async def send_endpoint(request: Request) -> Response:
    caller = await current_caller(request)  # 401 before anything about the body
    body = await _parse(request)
    return await _send(request, request.path_params["vin"], body, caller)


async def read_endpoint(request: Request) -> Response:
    caller = await current_caller(request)
    return await _read(request, request.path_params["command_id"], caller)


hot_routes = [
    HotRoute(SEND_PATH, send_endpoint, methods=["POST"]),
    HotRoute(READ_PATH, read_endpoint, methods=["GET"]),
]


@router.post(
    SEND_PATH,
    summary="Send a command to a vehicle",
    status_code=202,
    responses={
        202: {"model": CommandView, "description": "Accepted (pending or sent)"},
        200: {"model": CommandView, "description": "Finished within `Prefer: wait`"},
        **_ERRORS,
    },
)
@documented(_WAIT_DOC)
async def send_command(
    vin: str,
    body: CommandIn,
    request: Request,
    caller: CallerDep,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    prefer: Annotated[str | None, Header()] = None,
) -> Response:
    """Accept a command (`pending`); a worker sends it to the vehicle once (`sent`) and
    records `executed`, `failed` or `timed_out` with a failure reason. The same
    `Idempotency-Key` within 24 hours answers the same command (never a second
    execution)."""
    return await _send(request, vin, body, caller)


@router.get(
    READ_PATH,
    summary="A command and its status",
    responses={200: {"model": CommandView}, **_ERRORS},
)
@documented(_WAIT_DOC)
async def get_command(
    command_id: str,
    request: Request,
    caller: CallerDep,
    prefer: Annotated[str | None, Header()] = None,
) -> Response:
    """One of the application's commands."""
    return await _read(request, command_id, caller)


@router.get(
    "/v1/vehicle-commands",
    summary="The commands vehicles take",
    responses={200: {"model": CommandCatalog}},
)
async def command_catalog(caller: CallerDep) -> Response:
    """Every command of the level-13 catalog: its arguments and the `set` scopes it
    needs."""
    return json_response(
        {
            "commands": [
                {
                    "capability": c.capability,
                    "command": c.name,
                    "label_en": c.label_en,
                    "label_de": c.label_de,
                    "arguments": [
                        {
                            "name": a.name,
                            "required": a.required,
                            "multiple": a.prop.multiple,
                            "scope": f"{c.capability}.set.{a.name}",
                        }
                        for a in c.arguments
                    ],
                    "scopes": list(c.scopes),
                }
                for c in COMMANDS
            ]
        }
    )
