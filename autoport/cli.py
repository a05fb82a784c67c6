"""The `autoport` command line. Features add their own sub-commands in `register`."""

from __future__ import annotations

import asyncio
import errno
import json
import os
from typing import Annotated, Any

import structlog
import typer

from autoport import __version__
from autoport.config import (
    Settings,
    ensure_secrets,
    rotate_admin_token,
    stored_secrets,
    unknown_variables,
)
from autoport.kit.cli import (
    CommandLine,
    ExitCode,
    JsonOption,
    database_address,
    fail,
    load_settings,
    open_database,
    output,
    print_json,
    record_server,
    require_data_dir,
    running_server,
    short_reason,
    with_secrets,
)
from autoport.kit.db import create_database
from autoport.kit.handover import hand_over
from autoport.kit.logging import configure_logging
from autoport.kit.migrate import current_revisions, expected_heads, upgrade

log = structlog.get_logger("autoport")

app = typer.Typer(
    name="autoport",
    cls=CommandLine,
    help="Self-hostable connected-car data platform.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    epilog="Exit codes: 0 done, 1 failed, 2 usage or configuration, 4 not found.",
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Options of `autoport` itself."""


@app.command()
def version() -> None:
    """Print the autoport version."""
    typer.echo(__version__)


def _migrate(settings: Settings) -> None:
    """Apply the migrations; an unreachable database is one line."""
    log.info("applying database migrations", database=database_address(settings))
    try:
        asyncio.run(upgrade(settings.resolved_database_url, schema=settings.database_schema))
    except Exception as error:  # asyncpg, OSError, sqlite3: all mean "cannot reach it"
        name = "AUTOPORT_DATA_DIR" if settings.is_sqlite else "AUTOPORT_DATABASE_URL"
        fail(
            f"cannot migrate the database at {database_address(settings)} ({name}): "
            f"{short_reason(error)}"
        )


def _show_new_admin_token(settings: Settings, token: str | None) -> None:
    if token is not None:
        # Shown once to the operator, never logged; only its hash is stored.
        hand_over(settings, f"\n  Admin token (shown once, keep it): {token}\n")


@app.command()
def migrate(as_json: JsonOption = False) -> None:
    """Apply database migrations (SQLite or PostgreSQL, from the configuration).

    Creates the embedded database when there is none."""
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    _migrate(settings)
    heads = sorted(expected_heads())
    output({"revisions": heads}, as_json, lambda d: f"database at revision {', '.join(heads)}")


@app.command()
def init(as_json: JsonOption = False) -> None:
    """Set up a new data directory without serving.

    Secrets (the admin token is shown once) and the migrated database: what `serve`
    does on its first start."""
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    _migrate(settings)
    settings, generated = ensure_secrets(settings)
    _show_new_admin_token(settings, generated.admin_token)
    data = {
        "data_dir": str(settings.data_dir.resolve()),
        "database": settings.safe_summary()["database"],
    }
    output(data, as_json, lambda d: f"data directory {d['data_dir']} ready")


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address (AUTOPORT_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port (AUTOPORT_PORT).")] = None,
    workers: Annotated[int, typer.Option(help="Worker processes (PostgreSQL only).")] = 1,
    no_workers: Annotated[
        bool,
        typer.Option(
            "--no-workers",
            help="API only: no background work here (run `autoport worker` for it; "
            "AUTOPORT_BACKGROUND_WORKERS=false).",
        ),
    ] = False,
) -> None:
    """Run the HTTP service (both environments) and its background workers."""
    from autoport.kit import server

    overrides: dict[str, Any] = {
        k: v for k, v in {"host": host, "port": port}.items() if v is not None
    }
    if no_workers:
        overrides["background_workers"] = False
    settings = load_settings(**overrides)
    configure_logging(settings.log_level, settings.log_format)
    if settings.is_sqlite and workers != 1:
        fail("SQLite serves from one process; use PostgreSQL for more workers.", ExitCode.usage)
    # The port first: a start that fails must not have shown a one-time secret.
    try:
        sock = server.bind(settings)
    except OSError as error:
        where = f"{settings.host}:{settings.port}"
        if error.errno == errno.EADDRINUSE:
            running = running_server(settings)
            who = (
                f"autoport (pid {running.pid}) already serves this data directory there"
                if running is not None and running.port == settings.port
                else "another autoport?"
            )
            fail(
                f"port {settings.port} is in use on {settings.host} ({who}): "
                "choose a free one with AUTOPORT_PORT or --port",
                ExitCode.usage,
            )
        fail(
            f"cannot listen on {where} ({error.strerror or error}): change AUTOPORT_HOST / "
            "AUTOPORT_PORT (or --host / --port)",
            ExitCode.usage,
        )
    bound_port = sock.getsockname()[1]
    if bound_port != settings.port:  # port 0: the system chose one; links must name it
        settings = load_settings(**overrides, port=bound_port)
    if settings.is_sqlite:
        _migrate(settings)

    async def check_database() -> None:
        db = await open_database(settings, migrate_sqlite=False)
        await db.close()

    asyncio.run(check_database())
    settings, generated = ensure_secrets(settings)
    _show_new_admin_token(settings, generated.admin_token)
    log.info(
        f"autoport {__version__} serving",
        production=settings.base_url,
        sandbox=settings.sandbox_base_url,
        data_dir=str(settings.data_dir.resolve()),
    )
    state = record_server(settings)
    server.run(
        settings,
        sock,
        factory="autoport.app:app_from_environment",
        workers=workers,
        on_stop=lambda: state.unlink(missing_ok=True),
    )


@app.command("worker")
def worker_command(
    only: Annotated[
        str | None,
        typer.Option(
            "--only",
            help="Comma-separated kinds of background work (default: all): "
            "oauth, history, fleet, streams, consent, sandbox, webhooks.",
        ),
    ] = None,
) -> None:
    """Run background work only, no HTTP (API replicas: `serve --no-workers`).

    Any number of worker processes may run against one PostgreSQL database; stops on
    SIGTERM or Ctrl-C."""
    from autoport import worker

    try:
        kinds = worker.parse_only(only)
    except worker.UnknownKind as error:
        fail(str(error), ExitCode.usage)
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    require_data_dir(settings)  # SQLite: the data directory of `serve`, never a new one

    async def check_database() -> None:
        # Migrated, as serve asks: workers never migrate (`autoport migrate` does, once).
        db = await open_database(settings, migrate_sqlite=False)
        await db.close()

    asyncio.run(check_database())
    settings = with_secrets(settings)
    worker.serve_until_signalled(settings, kinds)


@app.command()
def doctor(as_json: JsonOption = False) -> None:
    """Check the configuration and that every configured service answers."""
    settings = load_settings(tell_unknown=False)  # a check of its own below
    checks: list[dict[str, Any]] = []

    def report(name: str, ok: bool, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})
        if not as_json:
            mark = (
                typer.style("ok  ", fg=typer.colors.GREEN)
                if ok
                else typer.style("FAIL", fg=typer.colors.RED)
            )
            typer.echo(f"[{mark}] {name}: {detail}")

    report("configuration", True, json.dumps(settings.safe_summary()))
    unknown = unknown_variables(os.environ)
    report(
        "environment",
        not unknown,
        "; ".join(unknown) if unknown else "every AUTOPORT_ variable is a setting",
    )
    data_dir = settings.data_dir.resolve()
    # PostgreSQL with every secret in the environment needs no data directory.
    needed = settings.is_sqlite or None in (
        settings.token_hmac_key,
        settings.session_secret,
        settings.admin_token,
    )
    if not data_dir.is_dir():
        # Not created here: a directory made by a check would hide the wrong setting.
        report(
            "data directory",
            not needed,
            f"{data_dir} does not exist (AUTOPORT_DATA_DIR; `autoport init` creates one)"
            if needed
            else "not used (PostgreSQL, secrets from the environment)",
        )
    else:
        try:
            probe = data_dir / ".doctor"
            probe.write_text("ok")
            probe.unlink()
            report("data directory", True, f"{data_dir} is writable")
        except OSError as error:
            report("data directory", False, str(error))
    server = running_server(settings)
    report(
        "server",
        True,
        f"pid {server.pid} serves {server.base_url}" if server else "not running here",
    )

    async def check_database() -> None:
        if settings.is_sqlite and not (settings.data_dir / "autoport.db").exists():
            report("database", False, f"no database in {data_dir} (`autoport init`)")
            return
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        try:
            await db.connect()
            await db.fetch_value("SELECT 1")
            current = await current_revisions(db)
            expected = expected_heads()
            report("database", True, f"{db.dialect} at {database_address(settings)} reachable")
            report(
                "migrations",
                current == expected,
                f"at {sorted(current) or 'none'}, code expects {sorted(expected)}"
                + ("" if current == expected else ": run `autoport migrate`"),
            )
        except Exception as error:
            report(
                "database",
                False,
                f"{database_address(settings)} (AUTOPORT_DATABASE_URL): {short_reason(error)}",
            )
        finally:
            await db.close()

    async def check_redis(url: str) -> None:
        import redis.asyncio as redis

        client = redis.from_url(url)
        try:
            await client.ping()
            report("redis", True, "reachable")
        except Exception as error:
            report("redis", False, f"AUTOPORT_REDIS_URL: {short_reason(error)}")
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
    problems = sum(not check["ok"] for check in checks)
    if as_json:
        print_json({"ok": not problems, "checks": checks})
    else:
        typer.echo(f"{problems} problem(s) found" if problems else "all checks passed")
    if problems:
        raise typer.Exit(ExitCode.error)


@app.command("admin-token")
def admin_token(
    rotate: Annotated[bool, typer.Option("--rotate", help="Issue a new admin token.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Issue a new admin token for the admin API (the old one stops working)."""
    settings = load_settings()
    if settings.admin_token is not None:
        fail("the admin token comes from AUTOPORT_ADMIN_TOKEN; change it there", ExitCode.usage)
    if not rotate:
        fail("only a hash of the admin token is stored; use --rotate for a new one", ExitCode.usage)
    with_secrets(settings)  # rotates in an existing data directory only
    token = rotate_admin_token(settings)
    output({"admin_token": token}, as_json, lambda d: str(d["admin_token"]))


def register() -> None:
    """Attach the features' sub-command groups (imported here to keep start-up light)."""
    from autoport.apps.cli import app as apps_app
    from autoport.consent.cli import app as consent_app
    from autoport.fleet.cli import app as fleet_app
    from autoport.history.cli import app as history_app
    from autoport.ingestion.cli import app as providers_app
    from autoport.ingestion.cli import vehicles_app
    from autoport.sandbox.cli import app as sandbox_app
    from autoport.sandbox.cli import demo
    from autoport.streaming.cli import app as streaming_app
    from autoport.webhooks.cli import app as webhooks_app

    app.add_typer(apps_app, name="apps")
    app.add_typer(providers_app, name="providers")
    app.add_typer(vehicles_app, name="vehicles")
    app.add_typer(streaming_app)
    app.add_typer(consent_app, name="consent")
    app.add_typer(fleet_app, name="fleet")
    app.add_typer(sandbox_app, name="sandbox")
    app.add_typer(webhooks_app, name="webhooks")
    app.add_typer(history_app, name="history")
    app.command("demo")(demo)
    from autoport.backup.cli import backup, restore

    app.command("backup")(backup)
    app.command("restore")(restore)
    from autoport.keys.cli import app as keys_app

    app.add_typer(keys_app, name="keys")


def main() -> None:
    register()
    app()


if __name__ == "__main__":
    main()
