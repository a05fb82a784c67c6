"""`autoport providers create|list|revoke`: credentials of data providers for
POST /v1/ingest."""

from __future__ import annotations

from typing import Annotated

import typer

from autoport.config import Settings
from autoport.ingestion import providers as service
from autoport.kit.cli import EnvOption, ExitCode, JsonOption, fail, note, print_json, run
from autoport.kit.clock import now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment

app = typer.Typer(
    help="Data providers allowed to push vehicle data (POST /v1/ingest).", no_args_is_help=True
)


def _key(settings: Settings) -> bytes:
    assert settings.token_hmac_key is not None  # run(..., secrets=True) filled it
    return settings.token_hmac_key.get_secret_value().encode()


@app.command()
def create(
    name: Annotated[str, typer.Option("--name", help="Who pushes with it (shown in lists).")],
    environment: EnvOption = Environment.production,
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
            )

    provider, secret = run(work, secrets=True)
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
        return await service.list_providers(db, environment=environment)

    found = run(work)
    if as_json:
        print_json([p.as_dict() for p in found])
        return
    if not found:
        other = "sandbox" if environment is Environment.production else "production"
        note(f"no providers in {environment}; use -e {other} for the other environment")
    for p in found:
        state = "revoked" if p.revoked_at is not None else "active"
        typer.echo(f"{p.id}  {p.environment:<10}  {state:<7}  {p.name}")


@app.command()
def revoke(
    provider_id: Annotated[str, typer.Argument(help="The provider's id (prv_...).")],
    as_json: JsonOption = False,
) -> None:
    """Revoke a provider: its secret stops working at once."""

    async def work(db: Database, _: Settings) -> service.Provider | None:
        async with db.transaction() as conn:
            return await service.revoke_provider(conn, provider_id=provider_id, now_us=now_us())

    provider = run(work)
    if provider is None:
        fail(f"no active provider {provider_id!r}", ExitCode.not_found)
    if as_json:
        print_json(provider.as_dict())
    else:
        typer.echo(f"provider {provider.id} revoked")
