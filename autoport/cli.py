"""The `autoport` command line. Features add their own sub-commands in `register`."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from autoport import __version__
from autoport.config import Settings, ensure_secrets, rotate_admin_token, stored_secrets
from autoport.db.migrate import current_revisions, expected_heads, upgrade
from autoport.kit.db import create_database
from autoport.kit.logging import configure_logging

app = typer.Typer(
    name="autoport",
    help="Self-hostable connected-car data platform.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and config file; a bad value is a clear message."""
    try:
        return Settings(**overrides)
    except (ValidationError, ValueError) as error:
        typer.secho(f"configuration error: {error}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from error


def print_json(data: object) -> None:
    typer.echo(json.dumps(data, indent=2, sort_keys=True))


@app.command()
def version() -> None:
    """Print the autoport version."""
    typer.echo(__version__)


@app.command()
def migrate() -> None:
    """Apply database migrations (SQLite or PostgreSQL, from the configuration)."""
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    asyncio.run(upgrade(settings.resolved_database_url, schema=settings.database_schema))
    typer.echo(f"database at revision {', '.join(sorted(expected_heads()))}")


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address.")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port.")] = None,
    workers: Annotated[int, typer.Option(help="Worker processes (PostgreSQL only).")] = 1,
) -> None:
    """Run the HTTP service (both environments) and its background workers."""
    from autoport.kit import server

    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = load_settings(**overrides)
    configure_logging(settings.log_level, settings.log_format)
    settings, generated = ensure_secrets(settings)
    if generated.admin_token:
        # Shown once on the terminal, never logged; only its hash is stored.
        typer.secho(
            f"\n  Admin token (shown once, keep it): {generated.admin_token}\n",
            fg=typer.colors.YELLOW,
            err=True,
        )
    if settings.is_sqlite:
        if workers != 1:
            typer.secho(
                "SQLite serves from one process; use PostgreSQL for more workers.",
                fg=typer.colors.RED,
                err=True,
            )
            raise typer.Exit(2)
        asyncio.run(upgrade(settings.resolved_database_url))
    typer.echo(
        f"autoport {__version__}: production {settings.base_url}, "
        f"sandbox {settings.sandbox_base_url}",
        err=True,
    )
    server.run(settings, workers=workers)


@app.command()
def doctor() -> None:
    """Check the configuration and that every configured service answers."""
    settings = load_settings()
    problems = 0

    def report(name: str, ok: bool, detail: str) -> None:
        nonlocal problems
        problems += 0 if ok else 1
        mark = (
            typer.style("ok  ", fg=typer.colors.GREEN)
            if ok
            else typer.style("FAIL", fg=typer.colors.RED)
        )
        typer.echo(f"[{mark}] {name}: {detail}")

    report("configuration", True, json.dumps(settings.safe_summary()))
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        probe = settings.data_dir / ".doctor"
        probe.write_text("ok")
        probe.unlink()
        report("data directory", True, f"{settings.data_dir.resolve()} is writable")
    except OSError as error:
        report("data directory", False, str(error))

    async def check_database() -> None:
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        try:
            await db.connect()
            await db.fetch_value("SELECT 1")
            current = await current_revisions(db)
            expected = expected_heads()
            report("database", True, f"{db.dialect} reachable")
            report(
                "migrations",
                current == expected,
                f"at {sorted(current) or 'none'}, code expects {sorted(expected)}",
            )
        except Exception as error:
            report("database", False, f"{type(error).__name__}: {error}")
        finally:
            await db.close()

    async def check_redis(url: str) -> None:
        import redis.asyncio as redis

        client = redis.from_url(url)
        try:
            await client.ping()
            report("redis", True, "reachable")
        except Exception as error:
            report("redis", False, f"{type(error).__name__}: {error}")
        finally:
            await client.aclose()

    async def check_mqtt() -> None:
        import aiomqtt

        from autoport.streaming.mosquitto import broker_address

        try:
            address = broker_address(stored_secrets(settings))
        except RuntimeError:
            report(
                "mqtt",
                False,
                "the publisher's password derives from token_hmac_key, which is not "
                "generated yet: start `autoport serve` once",
            )
            return
        assert address is not None
        where = f"{'mqtts' if address.tls else 'mqtt'}://{address.host}:{address.port}"
        try:
            async with aiomqtt.Client(
                address.host,
                address.port,
                username=address.username,
                password=address.password,
                tls_context=address.tls_context(),
                timeout=5,
            ):
                pass
        except Exception as error:
            report("mqtt", False, f"{where}: {type(error).__name__}: {error}")
            return
        secure = ", TLS certificate and host name verified" if address.tls else ""
        report("mqtt", True, f"{where} accepts {address.username}{secure}")

    asyncio.run(check_database())
    if settings.redis_url:
        asyncio.run(check_redis(settings.redis_url))
    if settings.mqtt_url:
        asyncio.run(check_mqtt())
    if problems:
        typer.echo(f"{problems} problem(s) found")
        raise typer.Exit(1)
    typer.echo("all checks passed")


@app.command("admin-token")
def admin_token(
    rotate: Annotated[bool, typer.Option("--rotate", help="Issue a new admin token.")] = False,
) -> None:
    """Issue a new admin token for the admin API (the old one stops working)."""
    settings = load_settings()
    if settings.admin_token is not None:
        typer.echo("the admin token comes from AUTOPORT_ADMIN_TOKEN; change it there", err=True)
        raise typer.Exit(2)
    if not rotate:
        typer.echo("only a hash of the admin token is stored; use --rotate for a new one", err=True)
        raise typer.Exit(2)
    typer.echo(rotate_admin_token(settings))


def register() -> None:
    """Attach the features' sub-command groups (imported here to keep start-up light)."""
    from autoport.apps.cli import app as apps_app
    from autoport.consent.cli import app as consent_app
    from autoport.fleet.cli import app as fleet_app
    from autoport.ingestion.cli import app as providers_app
    from autoport.sandbox.cli import app as sandbox_app
    from autoport.streaming.cli import app as streaming_app
    from autoport.webhooks.cli import app as webhooks_app

    app.add_typer(apps_app, name="apps")
    app.add_typer(providers_app, name="providers")
    app.add_typer(streaming_app)
    app.add_typer(consent_app, name="consent")
    app.add_typer(fleet_app, name="fleet")
    app.add_typer(sandbox_app, name="sandbox")
    app.add_typer(webhooks_app, name="webhooks")


def main() -> None:
    register()
    app()


if __name__ == "__main__":
    main()
