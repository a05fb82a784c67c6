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


@app.command()
def create(
    name: Annotated[str, typer.Option("--name", help="Who pushes with it (shown in lists).")],
    environment: EnvironmentOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Create a provider; its secret is printed once."""
    from autoport.cli import print_json

    if not name.strip():
        typer.secho("--name must not be empty", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)

    async def work(db: Database, key: bytes) -> tuple[service.Provider, str]:
        async with db.transaction() as conn:
            return await service.create_provider(
                conn, key=key, environment=environment, name=name.strip(), now_us=now_us()
            )

    provider, secret = _run(work)
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
        typer.echo(f"{p.id}  {p.environment:<10}  {state:<7}  {p.name}")


@app.command()
def revoke(
    provider_id: Annotated[str, typer.Argument(help="The provider's id (prv_...).")],
    as_json: JsonOption = False,
) -> None:
    """Revoke a provider: its secret stops working at once."""
    from autoport.cli import print_json

    async def work(db: Database, key: bytes) -> service.Provider | None:
        async with db.transaction() as conn:
            return await service.revoke_provider(conn, provider_id=provider_id, now_us=now_us())

    provider = _run(work)
    if provider is None:
        typer.secho(f"no active provider {provider_id!r}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)
    if as_json:
        print_json(provider.as_dict())
    else:
        typer.echo(f"provider {provider.id} revoked")
