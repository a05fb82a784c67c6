"""Webhook delivery: payloads, turning outbox events into deliveries, sending one
attempt and recording its outcome.

The delivery table is the queue: an outbox event becomes a delivery row in the same
transaction that consumes the event, so an event is either still in the outbox or a
durable delivery, never lost and never doubled. A delivery keeps its delivery id across
retries, restarts and redeliveries.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from autoport.config import Settings
from autoport.kit import outbox
from autoport.kit.clock import MICROS, to_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.kit.keyring import LiveKey
from autoport.webhooks import repository as repo
from autoport.webhooks.client import AttemptResult, post
from autoport.webhooks.repository import FAILED, PENDING, SUCCEEDED, ClaimedDelivery, WebhookRow
from autoport.webhooks.sealing import SealError, derive_key, unseal_any
from autoport.webhooks.signing import SignatureError, delivery_headers
from autoport.webhooks.ssrf import AddressPolicy, is_loopback_name

PING_VIN = "*"


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """What the settings decide for webhooks, resolved once."""

    # token_hmac_key's keyring, read on use: a rotation reaches a running worker.
    master: LiveKey
    production_policy: AddressPolicy
    sandbox_policy: AddressPolicy
    header_prefix: str
    timeout_seconds: float
    retry_base_us: int
    retry_max_delay_us: int
    retry_window_us: int
    lease_us: int
    deliveries_kept: int
    body_limit: int

    @classmethod
    def from_settings(cls, settings: Settings) -> WebhookConfig:
        if settings.token_hmac_key is None:
            raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
        return cls(
            master=LiveKey(settings, "token_hmac_key"),
            production_policy=AddressPolicy(allow_loopback=settings.webhook_allow_loopback),
            sandbox_policy=AddressPolicy(
                allow_loopback=settings.webhook_allow_loopback or only_this_machine(settings)
            ),
            header_prefix=settings.webhook_header_prefix,
            timeout_seconds=settings.webhook_timeout_seconds,
            retry_base_us=int(settings.webhook_retry_base_seconds * MICROS),
            retry_max_delay_us=int(settings.webhook_retry_max_delay_seconds * MICROS),
            retry_window_us=int(settings.webhook_retry_window_seconds * MICROS),
            # A lease shorter than an attempt could let a second worker send the same
            # delivery while the first is still waiting for the answer.
            lease_us=int(
                max(settings.webhook_lease_seconds, settings.webhook_timeout_seconds + 1) * MICROS
            ),
            deliveries_kept=settings.webhook_deliveries_kept,
            body_limit=settings.webhook_log_body_limit,
        )

    def policy(self, environment: Environment) -> AddressPolicy:
        """Where deliveries of `environment` may go."""
        if environment is Environment.sandbox:
            return self.sandbox_policy
        return self.production_policy

    @property
    def sealing_key(self) -> bytes:
        """What new webhook secrets are sealed with (derived from the current key)."""
        return derive_key(self.master.current)

    @property
    def opening_keys(self) -> tuple[bytes, ...]:
        """What stored secrets may be sealed with (current first, then previous keys
        still accepted, then those refused but kept until every secret is re-sealed:
        autoport.kit.keyring)."""
        return tuple(derive_key(key) for key in self.master.openers)


def only_this_machine(settings: Settings) -> bool:
    """Whether nobody but this machine reaches the sandbox: the server listens on a
    loopback address and the sandbox's public address is one (a laptop's `make run`).
    Whoever saves a sandbox webhook there can reach the machine's loopback services
    anyway, so loopback receivers are allowed in the sandbox (the README's "set a webhook
    and watch its ping arrive"); production never, without webhook_allow_loopback."""
    listen = is_loopback_name(settings.host)
    return listen and is_loopback_name(urlsplit(settings.sandbox_base_url).hostname or "")


# ------------------------------------------------------------------------- payloads


def build_payload(
    *,
    event_type: str,
    vin: str,
    application_id: str,
    received_at_us: int,
    payload: dict[str, Any] | None = None,
) -> bytes:
    """The body: compact JSON, exactly the bytes that are signed and sent."""
    event: dict[str, Any] = {"type": event_type, "received_at": to_iso(received_at_us)}
    data = payload or {}
    if data.get("action") is not None:
        event["action"] = data["action"]
    if data.get("detail") is not None:
        event["detail"] = data["detail"]
    if event_type == "authorization_changed" and data.get("authorization_id") is not None:
        event["authorization_id"] = data["authorization_id"]
    if event_type == "command_changed" and data.get("command") is not None:
        # The vehicle command as GET /v1/vehicle-commands/{id} answers it.
        event["command"] = data["command"]
    return orjson.dumps(
        {"vehicle": {"vin": vin}, "event": event, "application": {"id": application_id}}
    )


def retry_delay_us(config: WebhookConfig, attempt: int, rng: random.Random) -> int:
    """Exponential backoff with jitter: base·2^(n-1) capped, drawn from [½, 1]× of it,
    so many receivers failing together do not retry in lockstep."""
    ceiling = min(config.retry_max_delay_us, config.retry_base_us * 2 ** min(attempt - 1, 40))
    return int(ceiling * rng.uniform(0.5, 1.0))


def delivery_row(
    *,
    environment: Environment,
    application_id: str,
    event_type: str,
    vin: str,
    body: bytes,
    created_at: int,
    now_us: int,
    config: WebhookConfig,
    claimed_by: str | None = None,
) -> dict[str, Any]:
    return {
        "delivery_id": str(uuid.uuid4()),
        "environment": str(environment),
        "application_id": application_id,
        "event_type": event_type,
        "vin": vin,
        "body": body.decode(),
        # The inserting process takes the first attempt itself (the ping on save).
        "attempts": 1 if claimed_by else 0,
        "created_at": created_at,
        "enqueued_at": now_us,
        "next_attempt_at": now_us,
        "expires_at": now_us + config.retry_window_us,
        "claimed_by": claimed_by,
        "claimed_until": now_us + config.lease_us if claimed_by else None,
    }


# ------------------------------------------------------------- outbox -> deliveries


async def enqueue_events(
    db: Database, *, consumer: str, now_us: int, limit: int, config: WebhookConfig
) -> int:
    """Take up to `limit` due outbox events of `consumer` and write their deliveries, in
    one transaction (`outbox.take`: no lease to write and clear; a crash before the
    commit leaves the events in the outbox, so an event is either still there or a
    durable delivery, never lost and never doubled). Events for applications without a
    webhook, or not subscribed to the type, are consumed without a delivery. Returns the
    number of events consumed."""
    async with db.transaction() as conn:
        events = await outbox.take(conn, consumer=consumer, now_us=now_us, limit=limit)
        if not events:
            return 0
        hooks = {
            (hook.environment, hook.application_id): hook
            for hook in await repo.list_webhooks_of_applications(
                conn, [e.application_id for e in events if e.application_id]
            )
        }
        rows: list[dict[str, Any]] = []
        for event in events:
            if event.application_id is None:
                continue
            hook = hooks.get((event.environment, event.application_id))
            if hook is None or event.event_type not in hook.events:
                continue
            vin = event.vin or PING_VIN
            body = build_payload(
                event_type=event.event_type,
                vin=vin,
                application_id=event.application_id,
                received_at_us=event.created_at,
                payload=event.payload,
            )
            rows.append(
                delivery_row(
                    environment=event.environment,
                    application_id=event.application_id,
                    event_type=event.event_type,
                    vin=vin,
                    body=body,
                    created_at=event.created_at,
                    now_us=now_us,
                    config=config,
                )
            )
        await repo.create_deliveries(conn, rows)
    return len(events)


# ------------------------------------------------------------------ one attempt


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    delivery_id: str
    status: str  # succeeded | pending (retry scheduled) | failed
    attempt: int
    result: AttemptResult
    next_attempt_at: int | None
    recorded: bool


@dataclass(frozen=True, slots=True)
class SentAttempt:
    """An attempt sent (or given up before sending), not yet recorded."""

    delivery: ClaimedDelivery
    status: str
    next_attempt_at: int
    finished_at: int
    result: AttemptResult
    headers: dict[str, str]


async def send_attempt(
    session: aiohttp.ClientSession,
    delivery: ClaimedDelivery,
    hook: WebhookRow | None,
    *,
    config: WebhookConfig,
    clock_now: Callable[[], int],
    rng: random.Random,
) -> SentAttempt:
    """Sign and send one claimed attempt with the webhook's current URL and secret, and
    decide what comes next (done, retry at a time, or failed). No database work here:
    no transaction is held while the request is in flight."""
    headers: dict[str, str] = {}
    final = False
    if hook is None or (delivery.event_type not in hook.events and delivery.event_type != "ping"):
        result = AttemptResult(
            ok=False, duration_ms=0, error="no webhook is configured for this event anymore"
        )
        final = True
    else:
        try:
            secret = _unseal_cached(config.opening_keys, hook.secret_sealed, hook.application_id)
            # Signed now, for this attempt: a retry or redelivery carries a fresh
            # timestamp (same delivery id), so receivers can refuse old captures.
            headers = delivery_headers(
                prefix=config.header_prefix,
                secret=secret,
                body=delivery.body,
                delivery_id=delivery.delivery_id,
                event_type=delivery.event_type,
                timestamp=clock_now() // MICROS,
                scheme=hook.signature_scheme,
            )
        except (SealError, SignatureError) as error:
            result = AttemptResult(ok=False, duration_ms=0, error=str(error))
        else:
            result = await post(
                session,
                url=hook.url,
                body=delivery.body,
                headers=headers,
                policy=config.policy(delivery.environment),
                timeout_seconds=config.timeout_seconds,
                body_limit=config.body_limit,
            )
    now = clock_now()
    next_attempt_at = now
    if result.ok:
        status = SUCCEEDED
    elif final or now >= delivery.expires_at:
        status = FAILED
    else:
        status = PENDING
        next_attempt_at = now + retry_delay_us(config, delivery.attempt, rng)
    return SentAttempt(delivery, status, next_attempt_at, now, result, headers)


@lru_cache(maxsize=1024)
def _unseal_cached(keys: tuple[bytes, ...], sealed: str, application_id: str) -> str:
    # Keyed by the sealed text: a changed secret is a new entry, never a stale hit.
    return unseal_any(keys, sealed, application_id=application_id)


async def record_attempts(
    db: Database, sent: Sequence[SentAttempt], *, worker_id: str, config: WebhookConfig
) -> list[AttemptOutcome]:
    """Record outcomes in one transaction (one commit for a whole batch); only the
    holder of each attempt's claim can record it."""
    if not sent:
        return []
    finished: dict[tuple[Environment, str], list[int]] = {}
    async with db.transaction() as conn:
        held = await repo.record_attempts(
            conn,
            [
                repo.AttemptRecord(
                    delivery=a.delivery,
                    status=a.status,
                    next_attempt_at=a.next_attempt_at,
                    now_us=a.finished_at,
                    duration_ms=a.result.duration_ms,
                    request_headers=a.headers,
                    response_status=a.result.response_status,
                    response_headers=a.result.response_headers,
                    response_body=a.result.response_body,
                    error=a.result.error,
                )
                for a in sent
            ],
            worker_id=worker_id,
        )
        for attempt in sent:
            if attempt.delivery.id in held and attempt.status != PENDING:
                key = (attempt.delivery.environment, attempt.delivery.application_id)
                finished.setdefault(key, []).append(attempt.delivery.id)
        keep = config.deliveries_kept
        for (environment, application_id), ids in sorted(finished.items()):
            if len(ids) >= keep:
                # This batch finished `keep` of the application's deliveries itself: every
                # finished one older than the keep-th newest of them goes, found from the
                # log index without reading the pending ones (a backlog of thousands made
                # the general prune read them all, a quarter of the worker's time).
                await repo.prune_log_before(
                    conn,
                    environment=environment,
                    application_id=application_id,
                    before=sorted(ids)[-keep],
                )
            else:
                await repo.prune_log(
                    conn, environment=environment, application_id=application_id, keep=keep
                )
    return [
        AttemptOutcome(
            delivery_id=a.delivery.delivery_id,
            status=a.status,
            attempt=a.delivery.attempt,
            result=a.result,
            next_attempt_at=a.next_attempt_at if a.status == PENDING else None,
            recorded=a.delivery.id in held,
        )
        for a in sent
    ]


async def hooks_for(
    db: Database, deliveries: Sequence[ClaimedDelivery]
) -> dict[tuple[Environment, str], WebhookRow]:
    """The current webhook of each delivery's application, in one query."""
    rows = await repo.list_webhooks_of_applications(
        db.reader, [d.application_id for d in deliveries]
    )
    return {(hook.environment, hook.application_id): hook for hook in rows}


async def attempt_delivery(
    db: Database,
    session: aiohttp.ClientSession,
    delivery: ClaimedDelivery,
    *,
    worker_id: str,
    config: WebhookConfig,
    clock_now: Callable[[], int],
    rng: random.Random,
) -> AttemptOutcome:
    """Send one claimed attempt and record its outcome."""
    hook = (await hooks_for(db, [delivery])).get((delivery.environment, delivery.application_id))
    sent = await send_attempt(session, delivery, hook, config=config, clock_now=clock_now, rng=rng)
    [outcome] = await record_attempts(db, [sent], worker_id=worker_id, config=config)
    return outcome
