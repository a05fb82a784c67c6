"""`autoport providers create|list|revoke`: credentials of data providers for
POST /v1/ingest."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer

from autoport.ingestion import providers as service
from autoport.kit.clock import now_us
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment

app = typer.Typer(
    help="Data providers allowed to push vehicle data (POST /v1/ingest).", no_args_is_help=True
)

T = TypeVar("T")

EnvironmentOption = Annotated[
    Environment, typer.Option("--environment", "-e", help="production or sandbox.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _run(work: Callable[[Database, bytes], Awaitable[T]]) -> T:
    from autoport.cli import load_settings
    from autoport.config import ensure_secrets
    from autoport.db.migrate import upgrade

    settings, _ = ensure_secrets(load_settings())

    async def main() -> T:
        if settings.is_sqlite:
            await upgrade(settings.resolved_database_url)
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        await db.connect()
        try:
            assert settings.token_hmac_key is not None
            return await work(db, settings.token_hmac_key.get_secret_value().encode())
        finally:
            await db.close()

    return asyncio.run(main())


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


def _fail(message: str) -> typer.Exit:
    typer.secho(message, fg=typer.colors.RED, err=True)
    return typer.Exit(2)


def _warn_if_auto_approving(auto_approve_clearances: bool | None) -> None:
    if auto_approve_clearances:
        typer.secho(
            "warning: this provider now approves every fleet clearance request of its "
            "brands unseen; any application activated for them reads any of their vehicles",
            fg=typer.colors.YELLOW,
            err=True,
        )


@app.command()
def create(
    name: Annotated[str, typer.Option("--name", help="Who pushes with it (shown in lists).")],
    environment: EnvironmentOption = Environment.production,
    brand: BrandOption = None,
    auto_approve_clearances: AutoApproveOption = None,
    as_json: JsonOption = False,
) -> None:
    """Create a provider; its secret is printed once."""
    from autoport.cli import print_json

    if not name.strip():
        raise _fail("--name must not be empty")

    async def work(db: Database, key: bytes) -> tuple[service.Provider, str]:
        async with db.transaction() as conn:
            return await service.create_provider(
                conn,
                key=key,
                environment=environment,
                name=name.strip(),
                now_us=now_us(),
                brands=brand or [],
                auto_approve_clearances=bool(auto_approve_clearances),
            )

    try:
        provider, secret = _run(work)
    except service.ProviderSettingError as error:
        raise _fail(str(error)) from None
    _warn_if_auto_approving(auto_approve_clearances)
    if as_json:
        print_json({**provider.as_dict(), "secret": secret})
        return
    typer.echo(f"provider {provider.id} ({provider.environment}) created")
    typer.echo(f"secret (shown once, keep it): {secret}")


@app.command("list")
def list_(
    environment: Annotated[
        Environment | None, typer.Option("--environment", "-e", help="Only this environment.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List providers (never their secrets)."""
    from autoport.cli import print_json

    async def work(db: Database, key: bytes) -> list[service.Provider]:
        return await service.list_providers(db, environment=environment)

    found = _run(work)
    if as_json:
        print_json([p.as_dict() for p in found])
        return
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

    async def work(db: Database, key: bytes) -> service.Provider | None:
        async with db.transaction() as conn:
            return await service.update_provider(
                conn,
                provider_id=provider_id,
                brands=brand,
                auto_approve_clearances=auto_approve_clearances,
            )

    try:
        provider = _run(work)
    except service.ProviderSettingError as error:
        raise _fail(str(error)) from None
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
    from autoport.cli import print_json

    if provider is None:
        typer.secho(f"no active provider {provider_id!r}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)
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

    async def work(db: Database, key: bytes) -> service.Provider | None:
        async with db.transaction() as conn:
            return await service.revoke_provider(conn, provider_id=provider_id, now_us=now_us())

    _show(provider_id, _run(work), as_json, lambda p: f"provider {p.id} revoked")
