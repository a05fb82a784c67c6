"""`autoport consent ...`: what the carmaker side does in the sandbox (show the code a
vehicle displays; report an owner's decision on a pending grant)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from autoport.consent import service
from autoport.kit.clock import now_us
from autoport.kit.db import create_database
from autoport.kit.environments import Environment

app = typer.Typer(help="Consent: vehicle codes and the carmaker's decisions.", no_args_is_help=True)

SandboxOption = Annotated[
    bool, typer.Option("--sandbox", help="The sandbox environment (default: production).")
]


def _environment(sandbox: bool) -> Environment:
    return Environment.sandbox if sandbox else Environment.production


@app.command("vehicle-code")
def vehicle_code(
    vin: Annotated[str, typer.Argument(help="The vehicle's VIN.")],
    sandbox: SandboxOption = False,
) -> None:
    """Show the one-time code the vehicle displays now (vehicle_code verification)."""
    from autoport.cli import load_settings

    settings = load_settings()

    async def run() -> str | None:
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        await db.connect()
        try:
            return await service.current_vehicle_code(
                db.reader, environment=_environment(sandbox), vin=vin.strip(), now_us=now_us()
            )
        finally:
            await db.close()

    code = asyncio.run(run())
    if code is None:
        typer.echo(f"no code is displayed for {vin} (start the consent for it first)", err=True)
        raise typer.Exit(1)
    typer.echo(code)


def _decide(authorization_id: str, *, approved: bool, sandbox: bool, detail: str | None) -> None:
    from autoport.cli import load_settings

    settings = load_settings()

    async def run() -> str:
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        await db.connect()
        try:
            return await service.report_owner_decision(
                db,
                environment=_environment(sandbox),
                authorization_id=authorization_id,
                approved=approved,
                now_us=now_us(),
                detail=detail,
            )
        finally:
            await db.close()

    try:
        status = asyncio.run(run())
    except service.StatusProblem as problem:
        typer.echo(problem.detail, err=True)
        raise typer.Exit(1) from None
    typer.echo(f"authorization {authorization_id} is now {status}")


DetailOption = Annotated[
    str | None, typer.Option("--detail", help="A reason, passed on in the event's detail.")
]


@app.command("approve")
def approve(
    authorization_id: Annotated[str, typer.Argument(help="The pending authorization's id.")],
    sandbox: SandboxOption = False,
    detail: DetailOption = None,
) -> None:
    """Report that the owner approved a pending (owner_portal) grant."""
    _decide(authorization_id, approved=True, sandbox=sandbox, detail=detail)


@app.command("reject")
def reject(
    authorization_id: Annotated[str, typer.Argument(help="The pending authorization's id.")],
    sandbox: SandboxOption = False,
    detail: DetailOption = None,
) -> None:
    """Report that the owner rejected a pending (owner_portal) grant."""
    _decide(authorization_id, approved=False, sandbox=sandbox, detail=detail)
