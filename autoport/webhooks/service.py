"""Webhooks: configuration (save, show, remove, with the ping on save), the delivery
log and redelivery. Sending is in `autoport.webhooks.delivery`.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
import orjson

from autoport.kit.clock import to_iso
from autoport.kit.db import Connection, Database, Row
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.state import AppState, parts_of
from autoport.webhooks import repository as repo
from autoport.webhooks.client import new_session
from autoport.webhooks.delivery import (
    PING_VIN,
    AttemptOutcome,
    WebhookConfig,
    attempt_delivery,
    build_payload,
    delivery_row,
)
from autoport.webhooks.repository import PENDING, WebhookRow
from autoport.webhooks.schemas import EVENT_TYPES
from autoport.webhooks.sealing import SealError, seal, unseal_any
from autoport.webhooks.signing import SIGNATURE_SCHEMES, new_secret, standard_secret_problem
from autoport.webhooks.ssrf import UrlProblem, check_url

# ---------------------------------------------------------------- configuration


def webhook_view(hook: WebhookRow, *, secret: str | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "application_id": hook.application_id,
        "url": hook.url,
        "events": list(hook.events),
        "signature_scheme": hook.signature_scheme,
        "created_at": to_iso(hook.created_at),
        "updated_at": to_iso(hook.updated_at),
    }
    if secret is not None:
        view["secret"] = secret
    return view


def outcome_view(outcome: AttemptOutcome) -> dict[str, Any]:
    return {
        "delivery_id": outcome.delivery_id,
        "status": outcome.status,
        "attempt": outcome.attempt,
        "response_status": outcome.result.response_status,
        "duration_ms": outcome.result.duration_ms,
        "error": outcome.result.error,
        "next_attempt_at": None
        if outcome.next_attempt_at is None
        else to_iso(outcome.next_attempt_at),
    }


async def _require_application(
    conn: Connection, *, environment: Environment, application_id: str
) -> None:
    if not await repo.application_exists(
        conn, environment=environment, application_id=application_id
    ):
        raise ApiError(
            404, f"no application {application_id} in {environment}", source="application_id"
        )


class WebhooksParts(Protocol):
    """The part the webhook pages and API take (autoport.state.Parts; mypy checks it
    has it)."""

    @property
    def webhook_config(self) -> WebhookConfig: ...


def config_of(state: AppState) -> WebhookConfig:
    """The app's webhook settings, derived once by the app layer (autoport.state): HKDF
    and settings parsing stay off the request path. The admin API and the console's
    Webhooks page both read it."""
    parts: WebhooksParts = parts_of(state)
    return parts.webhook_config


def _open_secret(config: WebhookConfig, hook: WebhookRow) -> str:
    try:
        return unseal_any(
            config.opening_keys, hook.secret_sealed, application_id=hook.application_id
        )
    except SealError:
        # token_hmac_key changed since the secret was sealed: only a new secret helps.
        raise ApiError(
            409,
            "the stored webhook secret cannot be opened with the configured key "
            "(was token_hmac_key changed?); save the webhook with a new secret",
            source="secret",
        ) from None


async def validate_url(url: str, config: WebhookConfig, environment: Environment) -> None:
    try:
        await check_url(url, config.policy(environment))
    except UrlProblem as problem:
        raise ApiError(422, f"url: {problem}", title="Invalid request", source="url") from None


@dataclass(frozen=True, slots=True)
class SaveResult:
    webhook: WebhookRow
    secret: str
    created: bool
    ping: AttemptOutcome


async def save_webhook(
    db: Database,
    *,
    environment: Environment,
    application_id: str,
    url: str,
    secret: str | None,
    events: Sequence[str] | None,
    config: WebhookConfig,
    clock_now: Callable[[], int],
    signature_scheme: str | None = None,
    rng: random.Random | None = None,
    session: aiohttp.ClientSession | None = None,
) -> SaveResult:
    """Create or change an application's webhook, then send `ping` at once and return
    its outcome. The ping is a durable delivery written with the configuration: should
    this process die before sending, a worker sends it. `secret` and `signature_scheme`
    left None keep the current ones (a new webhook: generated, `default`)."""
    if signature_scheme is not None and signature_scheme not in SIGNATURE_SCHEMES:
        raise ApiError(
            422,
            f"signature_scheme: one of {', '.join(SIGNATURE_SCHEMES)}",
            title="Invalid request",
            source="signature_scheme",
        )
    await _require_application(db.reader, environment=environment, application_id=application_id)
    await validate_url(url, config, environment)
    chosen = list(dict.fromkeys(events)) if events is not None else list(EVENT_TYPES)
    worker_id = f"api-{uuid.uuid4().hex[:12]}"
    now = clock_now()
    async with db.transaction() as conn:
        existing = await repo.get_webhook(
            conn, environment=environment, application_id=application_id
        )
        if secret is None:
            # Changing the URL or events keeps the receiver's secret; a new webhook gets
            # a generated one (256 bits).
            secret = _open_secret(config, existing) if existing is not None else new_secret()
        scheme = signature_scheme or (
            existing.signature_scheme if existing is not None else "default"
        )
        if scheme == "standard" and (problem := standard_secret_problem(secret)):
            # Raised inside the transaction: nothing is written.
            raise ApiError(
                422,
                f"secret: {problem}; signature_scheme standard needs one "
                "(send a new secret: whsec_ + base64 of 24-64 random bytes)",
                title="Invalid request",
                source="secret",
            )
        hook = await repo.upsert_webhook(
            conn,
            environment=environment,
            application_id=application_id,
            url=url,
            secret_sealed=seal(config.sealing_key, secret, application_id=application_id),
            events=chosen,
            signature_scheme=scheme,
            now_us=now,
        )
        ping = delivery_row(
            environment=environment,
            application_id=application_id,
            event_type="ping",
            vin=PING_VIN,
            body=build_payload(
                event_type="ping", vin=PING_VIN, application_id=application_id, received_at_us=now
            ),
            created_at=now,
            now_us=now,
            config=config,
            claimed_by=worker_id,
        )
        await repo.create_deliveries(conn, [ping])
        claimed = await repo.get_delivery_pk(conn, delivery_id=ping["delivery_id"])
        delivery = await repo.get_claimed_delivery(conn, delivery_pk=claimed, worker_id=worker_id)
    assert delivery is not None
    own_session = session is None
    http = session or new_session(config.policy(environment), limit=1)
    try:
        outcome = await attempt_delivery(
            db,
            http,
            delivery,
            worker_id=worker_id,
            config=config,
            clock_now=clock_now,
            rng=rng or random.Random(),
        )
    finally:
        if own_session:
            await http.close()
    return SaveResult(webhook=hook, secret=secret, created=existing is None, ping=outcome)


async def show_webhook(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    config: WebhookConfig,
    reveal_secret: bool = False,
) -> dict[str, Any]:
    await _require_application(conn, environment=environment, application_id=application_id)
    hook = await repo.get_webhook(conn, environment=environment, application_id=application_id)
    if hook is None:
        raise ApiError(404, f"application {application_id} has no webhook", source="webhook")
    secret = _open_secret(config, hook) if reveal_secret else None
    return webhook_view(hook, secret=secret)


async def remove_webhook(
    conn: Connection, *, environment: Environment, application_id: str, now_us: int
) -> None:
    """Remove the webhook, in the caller's transaction."""
    await _require_application(conn, environment=environment, application_id=application_id)
    removed = await repo.delete_webhook(
        conn, environment=environment, application_id=application_id, now_us=now_us
    )
    if not removed:
        raise ApiError(404, f"application {application_id} has no webhook", source="webhook")


# ---------------------------------------------------------------- delivery log


def _iso(value: int | None) -> str | None:
    return None if value is None else to_iso(value)


def delivery_view(row: Row) -> dict[str, Any]:
    response = None
    if row["response_status"] is not None:
        response = {
            "status": row["response_status"],
            "headers": dict(orjson.loads(row["response_headers"] or "[]")),
            "body": row["response_body"],
        }
    return {
        "id": row["delivery_id"],
        "event_type": row["event_type"],
        "vin": row["vin"],
        "status": row["status"],
        "attempts": row["attempts"],
        "created_at": _iso(row["created_at"]),
        "next_attempt_at": _iso(row["next_attempt_at"]) if row["status"] == PENDING else None,
        "last_attempt_at": _iso(row["last_attempt_at"]),
        "delivered_at": _iso(row["delivered_at"]),
        "retry_until": _iso(row["expires_at"]),
        "duration_ms": row["duration_ms"],
        "error": row["error"],
        "request": {
            "headers": orjson.loads(row["request_headers"] or "{}"),
            "body": row["body"],
        },
        "response": response,
    }


async def list_deliveries(
    conn: Connection, *, environment: Environment, application_id: str, config: WebhookConfig
) -> list[dict[str, Any]]:
    await _require_application(conn, environment=environment, application_id=application_id)
    rows = await repo.list_recent_deliveries(
        conn,
        environment=environment,
        application_id=application_id,
        limit=config.deliveries_kept,
    )
    return [delivery_view(row) for row in rows]


async def get_delivery(
    conn: Connection, *, environment: Environment, application_id: str, delivery_id: str
) -> dict[str, Any]:
    await _require_application(conn, environment=environment, application_id=application_id)
    row = await repo.get_delivery(
        conn, environment=environment, application_id=application_id, delivery_id=delivery_id
    )
    if row is None:
        raise ApiError(404, f"no delivery {delivery_id} for this application", source="delivery_id")
    return delivery_view(row)


async def redeliver(
    conn: Connection,
    *,
    environment: Environment,
    application_id: str,
    delivery_id: str,
    now_us: int,
    config: WebhookConfig,
) -> dict[str, Any]:
    """Queue a logged delivery again, with the same delivery id and body; a worker
    sends it (and the retry window starts again). In the caller's transaction."""
    await _require_application(conn, environment=environment, application_id=application_id)
    hook = await repo.get_webhook(conn, environment=environment, application_id=application_id)
    if hook is None:
        raise ApiError(404, f"application {application_id} has no webhook", source="webhook")
    row = await repo.get_delivery(
        conn, environment=environment, application_id=application_id, delivery_id=delivery_id
    )
    if row is None:
        raise ApiError(404, f"no delivery {delivery_id} for this application", source="delivery_id")
    changed = await repo.requeue_delivery(
        conn,
        environment=environment,
        application_id=application_id,
        delivery_id=delivery_id,
        now_us=now_us,
        expires_at=now_us + config.retry_window_us,
    )
    if not changed:
        raise ApiError(
            409,
            "an attempt of this delivery is in flight; try again shortly",
            source="delivery_id",
        )
    updated = await repo.get_delivery(
        conn, environment=environment, application_id=application_id, delivery_id=delivery_id
    )
    assert updated is not None
    return delivery_view(updated)


async def find_webhook(
    conn: Connection, environment: Environment, application_id: str
) -> WebhookRow | None:
    """The application's webhook, or None (the console's Webhooks page)."""
    return await repo.get_webhook(conn, environment=environment, application_id=application_id)
