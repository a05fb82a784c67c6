"""`autoport consent ...`: what the carmaker side does in the sandbox (show the code a
vehicle displays; report an owner's decision on a pending grant)."""

from __future__ import annotations

from typing import Annotated

import typer

from autoport.config import Settings
from autoport.consent import service
from autoport.kit.cli import (
    EnvOption,
    ExitCode,
    JsonOption,
    SandboxAlias,
    environment_of,
    exit_code_of,
    fail,
    output,
    run,
)
from autoport.kit.clock import now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.proof import service as proof

app = typer.Typer(help="Consent: vehicle codes and the carmaker's decisions.", no_args_is_help=True)


@app.command("vehicle-code")
def vehicle_code(
    vin: Annotated[str, typer.Argument(help="The vehicle's VIN.")],
    environment: EnvOption = Environment.production,
    sandbox: SandboxAlias = False,
    as_json: JsonOption = False,
) -> None:
    """Show the one-time code the vehicle displays now (vehicle_code verification)."""
    where = environment_of(environment, sandbox)

    async def work(db: Database, _: Settings) -> str | None:
        return await proof.current_vehicle_code(
            db.reader, environment=where, vin=vin.strip(), now_us=now_us()
        )

    code = run(work)
    if code is None:
        fail(
            f"no code is displayed for {vin} in {where} (start the consent for it first)",
            ExitCode.not_found,
        )
    output(
        {"vin": vin.strip(), "environment": str(where), "code": code},
        as_json,
        lambda d: str(d["code"]),
    )


def _decide(
    authorization_id: str,
    *,
    approved: bool,
    environment: Environment,
    detail: str | None,
    as_json: bool,
) -> None:
    async def work(db: Database, _: Settings) -> str:
        try:
            async with db.transaction() as conn:
                return await service.report_owner_decision(
                    conn,
                    environment=environment,
                    authorization_id=authorization_id,
                    approved=approved,
                    now_us=now_us(),
                    detail=detail,
                )
        except service.StatusProblem as problem:
            fail(problem.detail, exit_code_of(problem.status))

    status = run(work)
    output(
        {"authorization_id": authorization_id, "status": status},
        as_json,
        lambda d: f"authorization {d['authorization_id']} is now {d['status']}",
    )


DetailOption = Annotated[
    str | None, typer.Option("--detail", help="A reason, passed on in the event's detail.")
]


@app.command("approve")
def approve(
    authorization_id: Annotated[str, typer.Argument(help="The pending authorization's id.")],
    environment: EnvOption = Environment.production,
    sandbox: SandboxAlias = False,
    detail: DetailOption = None,
    as_json: JsonOption = False,
) -> None:
    """Report that the owner approved a pending (owner_portal) grant."""
    _decide(
        authorization_id,
        approved=True,
        environment=environment_of(environment, sandbox),
        detail=detail,
        as_json=as_json,
    )


@app.command("reject")
def reject(
    authorization_id: Annotated[str, typer.Argument(help="The pending authorization's id.")],
    environment: EnvOption = Environment.production,
    sandbox: SandboxAlias = False,
    detail: DetailOption = None,
    as_json: JsonOption = False,
) -> None:
    """Report that the owner rejected a pending (owner_portal) grant."""
    _decide(
        authorization_id,
        approved=False,
        environment=environment_of(environment, sandbox),
        detail=detail,
        as_json=as_json,
    )
