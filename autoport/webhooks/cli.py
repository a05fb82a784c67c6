"""`autoport webhooks ...`: configure webhooks, read the delivery log, redeliver, and
run the delivery worker on its own (scale-out: as many as you like on PostgreSQL).

Commands work on the configured database directly (like `autoport migrate`), so they
need the same configuration as the server (data dir or database URL, secrets).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from autoport.config import Settings
from autoport.kit.cli import EnvOption, ExitCode, JsonOption, fail, note, output, run
from autoport.kit.clock import Clock
from autoport.kit.environments import Environment
from autoport.webhooks.schemas import EVENT_TYPES
from autoport.webhooks.signing import SIGNATURE_SCHEMES

if TYPE_CHECKING:
    from autoport.kit.db import Database
    from autoport.webhooks.delivery import WebhookConfig

# The service and aiohttp are imported inside the commands: `autoport` starts for every
# sub-command, and most never need them.

app = typer.Typer(help="Webhooks: configuration, delivery log, redelivery, worker.")

T = TypeVar("T")


def _run(work: Callable[[Database, WebhookConfig], Awaitable[T]]) -> T:
    """The kit's run, with the webhook configuration (its sealing key is a secret)."""
    from autoport.webhooks.delivery import WebhookConfig

    return run(lambda db, settings: work(db, WebhookConfig.from_settings(settings)), secrets=True)


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
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Create or change an application's webhook; sends `ping` and prints its outcome."""
    for name in event or []:
        if name not in EVENT_TYPES:
            fail(f"--event {name!r} is not one of {', '.join(EVENT_TYPES)}", ExitCode.usage)
    if secret is not None and len(secret) < 16:
        fail("--secret must have at least 16 characters", ExitCode.usage)
    from autoport.webhooks import service

    async def work(db: Database, config: WebhookConfig) -> dict[str, Any]:
        # The ping may take the whole delivery timeout: say what the wait is.
        note(f"sending ping to {url} (waits up to {config.timeout_seconds:g} s) ...")
        result = await service.save_webhook(
            db,
            environment=environment,
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

    data = _run(work)
    output(
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
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Show an application's webhook."""
    from autoport.webhooks import service

    data = _run(
        lambda db, config: service.show_webhook(
            db.reader,
            environment=environment,
            application_id=application_id,
            config=config,
            reveal_secret=reveal_secret,
        ),
    )
    output(
        data,
        as_json,
        lambda d: "\n".join(f"{key}: {value}" for key, value in d.items()),
    )


@app.command("deliveries")
def deliveries(
    application_id: str,
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """The latest deliveries of an application's webhook, newest first."""
    from autoport.webhooks import service

    data = _run(
        lambda db, config: service.list_deliveries(
            db.reader, environment=environment, application_id=application_id, config=config
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

    output(data, as_json, text)


@app.command("redeliver")
def redeliver(
    application_id: str,
    delivery_id: str,
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Queue a logged delivery again (same delivery id); the worker sends it."""
    from autoport.webhooks import service

    async def work(db: Database, config: WebhookConfig) -> dict[str, Any]:
        async with db.transaction() as conn:
            return await service.redeliver(
                conn,
                environment=environment,
                application_id=application_id,
                delivery_id=delivery_id,
                now_us=Clock().now_us(),
                config=config,
            )

    data = _run(work)
    output(data, as_json, lambda d: f"delivery {d['id']} queued again")


@app.command("worker")
def worker(
    concurrency: Annotated[int | None, typer.Option(help="Attempts in flight at most.")] = None,
) -> None:
    """Run the delivery worker alone (until interrupted)."""
    from autoport.webhooks.delivery import WebhookConfig
    from autoport.webhooks.tasks import DeliveryWorker

    async def work(db: Database, settings: Settings) -> None:
        runner = DeliveryWorker(
            db,
            WebhookConfig.from_settings(settings),
            concurrency=concurrency or settings.webhook_worker_concurrency,
            poll_interval=settings.webhook_poll_interval_seconds,
        )
        try:
            await runner.run()
        finally:
            await runner.close()

    try:
        run(work, secrets=True, logs=True)
    except KeyboardInterrupt:
        typer.echo("worker stopped", err=True)
