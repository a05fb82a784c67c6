"""The composition root: every long-lived object of an app, built once before it serves.

`build_state` makes the brand registry (with the sandbox connector asking the emulator),
the stream hub, the named rate limiters and the rest from the settings, as the fields of
`Parts`, a frozen dataclass on `AppState.parts`. A feature reads them through a Protocol
of its own naming what it reads (`autoport.kit.state.parts_of`), and `wired` below makes
mypy prove `Parts` satisfies every such Protocol, so a part a feature needs and the app
does not build is a type error, not a failure at run time. Only the app layer
(autoport.app, autoport.cli, autoport.worker) imports this module: it knows every
feature, and no feature knows it (tests/kit/test_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from autoport.brands.registry import BrandRegistry, BrandsParts
from autoport.commands.service import CommandHub, CommandsParts
from autoport.config import Settings
from autoport.consent.routes import ConsentParts
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.ratelimit import RateLimiter
from autoport.kit.state import AppState
from autoport.kit.usage import UsageCounts, UsageParts
from autoport.kit.versioned import VersionedParts, VersionedReads
from autoport.oauth.group_commit import GroupCommit, GroupCommitParts
from autoport.oauth.routes import TokenParts
from autoport.owner.routes import OwnerParts
from autoport.sandbox.service import SandboxParts
from autoport.sandbox.source import BehaviourLookup
from autoport.streaming.service import StreamHub, StreamingParts
from autoport.vehicle_data.freshness import FreshnessParts, FreshnessWindows
from autoport.vehicle_data.routes import VehicleDataParts
from autoport.vehicle_data.service import FragmentCache, PullParts
from autoport.webhooks.delivery import WebhookConfig
from autoport.webhooks.service import WebhooksParts


@dataclass(frozen=True, slots=True)
class Parts:
    """The app's long-lived objects, each built once before it serves."""

    # The brands' connectors (`data_sources`: those that fetch on demand); the sandbox
    # connector asks the emulator what each sandbox vehicle does.
    registry: BrandRegistry
    # Wakes this process's SSE streams, console views and MQTT publisher.
    hub: StreamHub
    # Wakes this process's command worker and `Prefer: wait` requests.
    command_hub: CommandHub
    # The one daily counter: requests per application, reads per grant (in memory,
    # flushed by autoport.usage.tasks).
    usage: UsageCounts
    # The pull's reads of vehicle rows and clearances, kept while their tables are
    # unchanged (this app's database only).
    versioned_reads: VersionedReads
    # The request counters, each against its setting; the name in `limiter(...)` below
    # is also its storage namespace (Redis keys shared by the replicas).
    # Vehicle data reads per application.
    vehicle_data_limit: RateLimiter
    # Token requests per address and per client (RFC 6749 §10.10 asks to limit
    # guessing at the token endpoint).
    token_ip_limit: RateLimiter
    token_client_limit: RateLimiter
    # Consent entries per address and per client_id.
    consent_ip_limit: RateLimiter
    consent_client_limit: RateLimiter
    # Owner-portal sign-ins per address and per VIN (the same for a VIN nobody knows).
    owner_ip_limit: RateLimiter
    owner_vin_limit: RateLimiter
    # Commands per vehicle, apart from reads (a parked car's 12 V battery).
    command_limit: RateLimiter
    # The pull's serialized groups last served (a bounded LRU of this app's pulls).
    fragments: FragmentCache
    # The data sources' answers kept for their freshness window (this app's database).
    freshness: FreshnessWindows
    # The token endpoint's shared commits (this app's database).
    group_commit: GroupCommit
    # The VINs this app's sandbox is stepping now (the runner leaves them alone).
    stepping: set[str]
    # The webhook settings and keys, derived once (HKDF off the request path).
    webhook_config: WebhookConfig


def wired(
    parts: Parts,
) -> tuple[
    BrandsParts,
    CommandsParts,
    ConsentParts,
    FreshnessParts,
    GroupCommitParts,
    OwnerParts,
    PullParts,
    SandboxParts,
    StreamingParts,
    TokenParts,
    UsageParts,
    VehicleDataParts,
    VersionedParts,
    WebhooksParts,
]:
    """Never called: mypy proves here that `Parts` has every part each feature reads
    through its Protocol (tests/kit/test_wiring.py: every Protocol read through `parts_of`
    is listed)."""
    return (
        parts, parts, parts, parts, parts, parts, parts,
        parts, parts, parts, parts, parts, parts, parts,
    )  # fmt: skip


def typed_parts(state: AppState) -> Parts:
    """The app's parts as the app layer (and a test) sees them, every one typed."""
    parts = state.parts
    if not isinstance(parts, Parts):
        raise RuntimeError("no parts were built for this app (build_state)")
    return parts


def build_state(settings: Settings, database: Database, clock: Clock) -> AppState:
    state = AppState(settings=settings, database=database, clock=clock)
    registry = BrandRegistry.from_settings(settings, clock=clock)
    # The sandbox connector asks the emulator what each sandbox vehicle does.
    # The one ingestion port: what a car sends (the emulator's commands here) is stored
    # through it, so no sender imports ingestion.
    registry.set_sandbox_behaviour(BehaviourLookup(database, clock, ingest_vehicle_data))
    hub = StreamHub()
    hub.listen(database)  # other replicas' messages wake this one's streams (PostgreSQL)
    state.on_events(on_shutdown=hub.close, on_access_changed=hub.access_changed)

    def limiter(namespace: str, spec: str) -> RateLimiter:
        return RateLimiter(spec, redis_url=settings.redis_url, namespace=namespace)

    state.parts = Parts(
        registry=registry,
        hub=hub,
        command_hub=CommandHub(),
        usage=UsageCounts(),
        versioned_reads=VersionedReads(),
        vehicle_data_limit=limiter("vd", settings.vehicle_data_rate_limit),
        token_ip_limit=limiter("token-ip", settings.oauth_token_ip_rate_limit),
        token_client_limit=limiter("token-client", settings.oauth_token_client_rate_limit),
        consent_ip_limit=limiter("entry-ip", settings.consent_entry_ip_rate_limit),
        consent_client_limit=limiter("entry-client", settings.consent_entry_client_rate_limit),
        owner_ip_limit=limiter("owner-ip", settings.owner_sign_in_ip_rate_limit),
        owner_vin_limit=limiter("owner-vin", settings.owner_sign_in_vin_rate_limit),
        command_limit=limiter("cmd", settings.vehicle_command_rate_limit),
        fragments=FragmentCache(),
        freshness=FreshnessWindows(database, clock),
        group_commit=GroupCommit(database),
        stepping=set(),
        webhook_config=WebhookConfig.from_settings(settings),
    )
    return state
