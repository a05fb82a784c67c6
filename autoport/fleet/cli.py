"""`autoport fleet ...`: the admin API's fleet clearance decisions from the shell
(pending clearances of push-fed brands; approve or reject one). Works on the configured
database directly, like `autoport apps` (autoport.kit.cli)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from autoport.config import Settings
from autoport.kit.cli import EnvOption, ExitCode, JsonOption, fail, print_json, run
from autoport.kit.clock import now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment

app = typer.Typer(help="Fleet clearances awaiting a decision.", no_args_is_help=True)


def _print(found: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(found)
        return
    typer.echo(
        f"{found['application_id']}  {found['vin']}  {found['brand']:<14}  "
        f"{found['status']:<9}  {found['requested_at']}"
    )


@app.command()
def pending(
    environment: EnvOption = Environment.production,
    brand: Annotated[str | None, typer.Option("--brand", help="Only this brand.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Clearances of push-fed brands still awaiting a decision, oldest first."""
    from autoport.brands.registry import BrandRegistry
    from autoport.catalog.brands import canonical_brand
    from autoport.fleet import decisions

    brands = None
    if brand is not None:
        canonical = canonical_brand(brand)
        if canonical is None:
            fail(f"--brand: unknown brand {brand!r}", ExitCode.usage)
        brands = [canonical]

    async def work(db: Database, settings: Settings) -> list[dict[str, Any]]:
        registry = BrandRegistry.from_settings(settings)
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await decisions.list_pending(
                db.reader,
                registry,
                environment=environment,
                brands=brands,
                limit=decisions.MAX_LIMIT,
                cursor=cursor,
            )
            found.extend(page["clearances"])
            cursor = page["next_cursor"]
            if cursor is None:
                return found

    found = run(work)
    if as_json:
        print_json(found)
        return
    for item in found:
        _print(item, False)


def _decide(
    environment: Environment,
    application_id: str,
    vin: str,
    reason: str | None,
    *,
    approve: bool,
    as_json: bool,
) -> None:
    from autoport.brands.registry import BrandRegistry
    from autoport.fleet import decisions

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        registry = BrandRegistry.from_settings(settings)
        async with db.transaction() as conn:
            return await decisions.decide(
                conn,
                registry,
                environment=environment,
                application_id=application_id,
                vin=vin,
                approve=approve,
                reason=reason,
                brands=None,
                now_us=now_us(),
            )

    _print(run(work), as_json)


AppIdArgument = Annotated[str, typer.Argument(help="The application's id (app_id).")]
VinArgument = Annotated[str, typer.Argument(help="The vehicle's VIN.")]
ReasonOption = Annotated[
    str | None, typer.Option("--reason", help="Told to the application (webhook detail).")
]


@app.command()
def approve(
    application_id: AppIdArgument,
    vin: VinArgument,
    environment: EnvOption = Environment.production,
    reason: ReasonOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve a pending clearance: the application may read the vehicle."""
    _decide(environment, application_id, vin, reason, approve=True, as_json=as_json)


@app.command()
def reject(
    application_id: AppIdArgument,
    vin: VinArgument,
    environment: EnvOption = Environment.production,
    reason: ReasonOption = None,
    as_json: JsonOption = False,
) -> None:
    """Reject a pending clearance."""
    _decide(environment, application_id, vin, reason, approve=False, as_json=as_json)
