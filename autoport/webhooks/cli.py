"""`autoport webhooks ...`: configure webhooks, read the delivery log, redeliver, and
run the delivery worker on its own (scale-out: as many as you like on PostgreSQL).

Commands work on the configured database directly (like `autoport migrate`), so they
need the same configuration as the server (data dir or database URL, secrets).
"""

from __future__ import annotations

import asyncio
import enum
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from autoport.config import Settings, ensure_secrets
from autoport.kit.clock import Clock
from autoport.webhooks.schemas import EVENT_TYPES
from autoport.webhooks.signing import SIGNATURE_SCHEMES

if TYPE_CHECKING:
    from autoport.kit.db import Database
    from autoport.kit.environments import Environment
    from autoport.webhooks.delivery import WebhookConfig

# The service, aiohttp and FastAPI are imported inside the commands: `autoport` starts
# for every sub-command, and most never need them.

app = typer.Typer(help="Webhooks: configuration, delivery log, redelivery, worker.")

T = TypeVar("T")


class EnvironmentName(enum.StrEnum):
    production = "production"
    sandbox = "sandbox"


EnvOption = Annotated[
    EnvironmentName, typer.Option("--environment", "-e", help="production or sandbox.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _settings() -> Settings:
    from autoport.cli import load_settings

    settings, _ = ensure_secrets(load_settings())
    return settings


def _env(name: EnvironmentName) -> Environment:
    from autoport.kit.environments import Environment

    return Environment(name.value)


def _run(settings: Settings, work: Callable[[Database, WebhookConfig], Awaitable[T]]) -> T:
    from autoport.kit.db import create_database
    from autoport.kit.errors import ApiError
    from autoport.webhooks.delivery import WebhookConfig

    async def main() -> T:
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        await db.connect()
        try:
            return await work(db, WebhookConfig.from_settings(settings))
        finally:
            await db.close()

    try:
        return asyncio.run(main())
    except ApiError as error:
        typer.secho(f"error: {error.detail}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1 if error.status == 404 else 2) from None


def _print(data: Any, as_json: bool, text: Callable[[Any], str]) -> None:
    from autoport.cli import print_json

    if as_json:
        print_json(data)
    else:
        typer.echo(text(data))


def _ping_line(ping: dict[str, Any]) -> str:
    answer = ping["response_status"] if ping["response_status"] is not None else ping["error"]
    return f"ping {ping['delivery_id']}: {ping['status']} ({answer}, {ping['duration_ms']} ms)"


@app.command("set")
def set_webhook(
    application_id: str,
    url: Annotated[str, typer.Option(help="The receiver's https:// URL.")],
    secret: Annotated[
        str | None, typer.Option(help="Signing secret; kept or generated when omitted.")
    ] = None,
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            help=f"Subscribe to this event (repeat it); default all: {', '.join(EVENT_TYPES)}.",
        ),
    ] = None,
    signature_scheme: Annotated[
        str | None,
        typer.Option(
            help=f"One of {', '.join(SIGNATURE_SCHEMES)}: default sends the X-Svc-Signature "
            "headers, standard the Standard Webhooks ones (needs a whsec_ secret); kept "
            "when omitted, default for a new webhook."
        ),
    ] = None,
    environment: EnvOption = EnvironmentName.production,
    as_json: JsonOption = False,
) -> None:
    """Create or change an application's webhook; sends `ping` and prints its outcome."""
    for name in event or []:
        if name not in EVENT_TYPES:
            typer.secho(f"error: --event {name!r} is not one of {', '.join(EVENT_TYPES)}", err=True)
            raise typer.Exit(2)
    if secret is not None and len(secret) < 16:
        typer.secho("error: --secret must have at least 16 characters", err=True)
        raise typer.Exit(2)
    settings = _settings()
    from autoport.webhooks import service

    async def work(db: Database, config: WebhookConfig) -> dict[str, Any]:
        result = await service.save_webhook(
            db,
            environment=_env(environment),
            application_id=application_id,
            url=url,
            secret=secret,
            events=event,
            signature_scheme=signature_scheme,
            config=config,
            clock_now=Clock().now_us,
            rng=random.Random(),
        )
        return {
            "webhook": service.webhook_view(result.webhook, secret=result.secret),
            "ping": service.outcome_view(result.ping),
        }

    data = _run(settings, work)
    _print(
        data,
        as_json,
        lambda d: (
            f"webhook of {d['webhook']['application_id']}: {d['webhook']['url']}\n"
            f"events: {', '.join(d['webhook']['events'])}\n"
            f"signature scheme: {d['webhook']['signature_scheme']}\n"
            f"secret: {d['webhook']['secret']}\n" + _ping_line(d["ping"])
        ),
    )


@app.command("show")
def show(
    application_id: str,
    reveal_secret: Annotated[bool, typer.Option("--reveal-secret")] = False,
    environment: EnvOption = EnvironmentName.production,
    as_json: JsonOption = False,
) -> None:
    """Show an application's webhook."""
    settings = _settings()
    from autoport.webhooks import service

    data = _run(
        settings,
        lambda db, config: service.show_webhook(
            db,
            environment=_env(environment),
            application_id=application_id,
            config=config,
            reveal_secret=reveal_secret,
        ),
    )
    _print(
        data,
        as_json,
        lambda d: "\n".join(f"{key}: {value}" for key, value in d.items()),
    )


@app.command("deliveries")
def deliveries(
    application_id: str,
    environment: EnvOption = EnvironmentName.production,
    as_json: JsonOption = False,
) -> None:
    """The latest deliveries of an application's webhook, newest first."""
    settings = _settings()
    from autoport.webhooks import service

    data = _run(
        settings,
        lambda db, config: service.list_deliveries(
            db, environment=_env(environment), application_id=application_id, config=config
        ),
    )

    def text(rows: list[dict[str, Any]]) -> str:
        if not rows:
            return "no deliveries"
        return "\n".join(
            f"{r['id']}  {r['event_type']:<24} {r['vin']:<17}  {r['status']:<9} "
            f"attempts={r['attempts']} response={(r['response'] or {}).get('status')} "
            f"{r['error'] or ''}".rstrip()
            for r in rows
        )

    _print(data, as_json, text)


@app.command("redeliver")
def redeliver(
    application_id: str,
    delivery_id: str,
    environment: EnvOption = EnvironmentName.production,
    as_json: JsonOption = False,
) -> None:
    """Queue a logged delivery again (same delivery id); the worker sends it."""
    settings = _settings()
    from autoport.webhooks import service

    data = _run(
        settings,
        lambda db, config: service.redeliver(
            db,
            environment=_env(environment),
            application_id=application_id,
            delivery_id=delivery_id,
            now_us=Clock().now_us(),
            config=config,
        ),
    )
    _print(data, as_json, lambda d: f"delivery {d['id']} queued again")


@app.command("worker")
def worker(
    concurrency: Annotated[int | None, typer.Option(help="Attempts in flight at most.")] = None,
) -> None:
    """Run the delivery worker alone (until interrupted)."""
    from autoport.kit.logging import configure_logging
    from autoport.webhooks.tasks import DeliveryWorker

    settings = _settings()
    configure_logging(settings.log_level, settings.log_format)

    async def work(db: Database, config: WebhookConfig) -> None:
        runner = DeliveryWorker(
            db,
            config,
            concurrency=concurrency or settings.webhook_worker_concurrency,
            poll_interval=settings.webhook_poll_interval_seconds,
        )
        try:
            await runner.run()
        finally:
            await runner.close()

    try:
        _run(settings, work)
    except KeyboardInterrupt:
        typer.echo("worker stopped", err=True)
