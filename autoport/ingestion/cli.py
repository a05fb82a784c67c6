"""`autoport providers create|list|set|revoke`: credentials of data providers for
POST /v1/ingest, and the brands whose fleet clearances they decide."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from autoport.catalog.brands import MakerCodes
from autoport.config import Settings
from autoport.ingestion import providers as service
from autoport.ingestion.service import Rebranded, rebrand_vehicle
from autoport.kit.cli import (
    EnvOption,
    ExitCode,
    JsonOption,
    fail,
    note,
    output,
    print_json,
    run,
)
from autoport.kit.clock import now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment

app = typer.Typer(
    help="Data providers allowed to push vehicle data (POST /v1/ingest).", no_args_is_help=True
)

BrandOption = Annotated[
    list[str] | None,
    typer.Option(
        "--brand",
        help="A brand it pushes for and whose fleet clearances it decides. Repeatable.",
    ),
]
AutoApproveOption = Annotated[
    bool | None,
    typer.Option(
        "--auto-approve-clearances/--no-auto-approve-clearances",
        help="DANGEROUS: approve every clearance request of its brands unseen, so any "
        "application activated for them reads any of their vehicles. Only for a "
        "single-tenant deployment. Off by default.",
    ),
]


def _key(settings: Settings) -> bytes:
    assert settings.token_hmac_key is not None  # run(..., secrets=True) filled it
    return settings.token_hmac_key.get_secret_value().encode()


def _warn_if_auto_approving(auto_approve_clearances: bool | None) -> None:
    if auto_approve_clearances:
        note(
            "warning: this provider now approves every fleet clearance request of its "
            "brands unseen; any application activated for them reads any of their vehicles"
        )


@app.command()
def create(
    name: Annotated[str, typer.Option("--name", help="Who pushes with it (shown in lists).")],
    environment: EnvOption = Environment.production,
    brand: BrandOption = None,
    auto_approve_clearances: AutoApproveOption = None,
    as_json: JsonOption = False,
) -> None:
    """Create a provider; its secret is printed once."""
    if not name.strip():
        fail("--name must not be empty", ExitCode.usage)

    async def work(db: Database, settings: Settings) -> tuple[service.Provider, str]:
        async with db.transaction() as conn:
            return await service.create_provider(
                conn,
                key=_key(settings),
                environment=environment,
                name=name.strip(),
                now_us=now_us(),
                brands=brand or [],
                auto_approve_clearances=bool(auto_approve_clearances),
            )

    try:
        provider, secret = run(work, secrets=True)
    except service.ProviderSettingError as error:
        fail(str(error), ExitCode.usage)
    _warn_if_auto_approving(auto_approve_clearances)
    if as_json:
        print_json({**provider.as_dict(), "secret": secret})
        return
    typer.echo(f"provider {provider.id} ({provider.environment}) created")
    typer.echo(f"secret (shown once, keep it): {secret}")


@app.command("list")
def list_(
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """List providers (never their secrets)."""

    async def work(db: Database, _: Settings) -> list[service.Provider]:
        return await service.list_providers(db.reader, environment=environment)

    found = run(work)
    if as_json:
        print_json([p.as_dict() for p in found])
        return
    if not found:
        other = "sandbox" if environment is Environment.production else "production"
        note(f"no providers in {environment}; use -e {other} for the other environment")
    for p in found:
        state = "revoked" if p.revoked_at is not None else "active"
        brands = ",".join(p.brands) or "-"
        auto = "  AUTO-APPROVES CLEARANCES" if p.auto_approve_clearances else ""
        typer.echo(f"{p.id}  {p.environment:<10}  {state:<7}  {p.name}  brands: {brands}{auto}")


@app.command("set")
def set_(
    provider_id: Annotated[str, typer.Argument(help="The provider's id (prv_...).")],
    brand: BrandOption = None,
    auto_approve_clearances: AutoApproveOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change an active provider's brands (the given ones replace them) or its
    auto-approval of clearances."""

    async def work(db: Database, _: Settings) -> service.Provider | None:
        async with db.transaction() as conn:
            return await service.update_provider(
                conn,
                provider_id=provider_id,
                brands=brand,
                auto_approve_clearances=auto_approve_clearances,
            )

    try:
        provider = run(work)
    except service.ProviderSettingError as error:
        fail(str(error), ExitCode.usage)
    if provider is not None:
        _warn_if_auto_approving(auto_approve_clearances)
    _show(
        provider_id,
        provider,
        as_json,
        lambda p: (
            f"provider {p.id}: brands {','.join(p.brands) or '-'}, "
            f"auto-approves clearances: {'yes' if p.auto_approve_clearances else 'no'}"
        ),
    )


def _show(
    provider_id: str,
    provider: service.Provider | None,
    as_json: bool,
    text: Callable[[service.Provider], str],
) -> None:
    """Print a changed provider (JSON or `text`), or fail when there was none active."""
    if provider is None:
        fail(f"no active provider {provider_id!r}", ExitCode.not_found)
    if as_json:
        print_json(provider.as_dict())
    else:
        typer.echo(text(provider))


@app.command()
def revoke(
    provider_id: Annotated[str, typer.Argument(help="The provider's id (prv_...).")],
    as_json: JsonOption = False,
) -> None:
    """Revoke a provider: its secret stops working at once."""

    async def work(db: Database, _: Settings) -> service.Provider | None:
        async with db.transaction() as conn:
            return await service.revoke_provider(conn, provider_id=provider_id, now_us=now_us())

    _show(provider_id, run(work), as_json, lambda p: f"provider {p.id} revoked")


vehicles_app = typer.Typer(
    help="Stored vehicles: the operator's actions on a vehicle's data.", no_args_is_help=True
)


@vehicles_app.command()
def rebrand(
    vin: Annotated[str, typer.Argument(help="The vehicle's VIN.")],
    brand: Annotated[str, typer.Option("--brand", help="The brand the vehicle is now.")],
    yes: Annotated[
        bool, typer.Option("--yes", help="Delete the vehicle's stored data and history.")
    ] = False,
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """A VIN re-registered under another brand: its stored data and history (sent for
    the previous brand) are deleted and it starts again, empty, under --brand. Pushes
    can never change a stored brand themselves (docs/vehicle-data.md)."""
    if not yes:
        fail(
            f"rebranding {vin} deletes its stored data and history (they were sent for its "
            "previous brand and are never served under the new one); run again with --yes",
            ExitCode.usage,
        )

    async def work(db: Database, settings: Settings) -> Rebranded:
        codes = MakerCodes(settings.maker_codes)
        async with db.transaction() as conn:
            return await rebrand_vehicle(
                conn,
                environment=environment,
                vin=vin,
                brand=brand,
                now_us=now_us(),
                maker_codes=codes,
            )

    output(
        run(work).as_dict(),
        as_json,
        lambda d: (
            f"{d['vin']} ({d['environment']}) is now {d['brand']} "
            f"(was {d['previous_brand'] or 'not stored'}); "
            f"{d['history_deleted']} history points deleted"
        ),
    )
