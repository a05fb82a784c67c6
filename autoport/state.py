"""The composition root: every long-lived object of an app, built once before it serves.

`build_state` makes the brand registry (with the sandbox connector asking the emulator),
the stream hub and the rate limiters from the settings. The typed ones are fields of
`Parts`, a frozen dataclass on `AppState.parts`: a feature reads them through a Protocol
of its own naming what it reads (`autoport.kit.state.parts_of`), and `wired` below makes
mypy prove `Parts` satisfies every such Protocol, so a part a feature needs and the app
does not build is a type error, not a failure at run time. The rest are still provided
under their type (`state.part(RateLimiters)`), moving to `Parts` one by one. Nothing is
made on first use. Only the app layer (autoport.app, autoport.cli, autoport.worker)
imports this module: it knows every feature, and no feature knows it
(tests/kit/test_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from autoport.brands.registry import BrandRegistry, BrandsParts
from autoport.commands.service import CommandHub, CommandsParts
from autoport.config import Settings
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.ratelimit import RateLimiters
from autoport.kit.state import AppState
from autoport.kit.usage import UsageCounts
from autoport.kit.versioned import VersionedReads
from autoport.sandbox.source import BehaviourLookup
from autoport.streaming.service import StreamHub, StreamingParts

# The request counters: limiter name (also its storage namespace) -> the setting it
# counts against. Vehicle data reads per application; token requests per address and per
# client (RFC 6749 §10.10 asks to limit guessing at the token endpoint); consent entries
# per address and per client_id.
RATE_LIMITS: dict[str, str] = {
    "vd": "vehicle_data_rate_limit",
    "token-ip": "oauth_token_ip_rate_limit",
    "token-client": "oauth_token_client_rate_limit",
    "entry-ip": "consent_entry_ip_rate_limit",
    "entry-client": "consent_entry_client_rate_limit",
    # Owner-portal sign-ins per address and per VIN (the same for a VIN nobody knows).
    "owner-ip": "owner_sign_in_ip_rate_limit",
    "owner-vin": "owner_sign_in_vin_rate_limit",
    # Commands per vehicle, apart from reads (a parked car's 12 V battery).
    "cmd": "vehicle_command_rate_limit",
}


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


def wired(parts: Parts) -> tuple[BrandsParts, CommandsParts, StreamingParts]:
    """Never called: mypy proves here that `Parts` has every part each feature reads
    through its Protocol (tests/kit/test_wiring.py: every Protocol read through `parts_of`
    is listed)."""
    return (parts, parts, parts)


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
    specs = {name: getattr(settings, setting) for name, setting in RATE_LIMITS.items()}
    state.provide(RateLimiters(specs, redis_url=settings.redis_url))
    # The one daily counter: requests per application, reads per grant (in memory,
    # flushed by autoport.usage.tasks).
    state.provide(UsageCounts())
    # The pull's reads of vehicle rows and clearances, kept while their tables are
    # unchanged (this app's database only).
    state.provide(VersionedReads())
    state.parts = Parts(registry=registry, hub=hub, command_hub=CommandHub())
    return state
