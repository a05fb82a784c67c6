"""The composition root: every long-lived object of an app, built once before it serves.

`build_state` makes the brand registry (with the sandbox connector asking the emulator),
the stream hub and the rate limiters from the settings, and provides each on the
`AppState` under its type (autoport.kit.state). Features take what they need from there
(`state.part(BrandRegistry)`), or are handed it by their caller; nothing is made on first
use. Only the app layer (autoport.app, autoport.cli) imports this module: it knows every
feature, and no feature knows it (tests/kit/test_layers.py).
"""

from __future__ import annotations

from autoport.brands.registry import BrandRegistry
from autoport.commands.service import CommandHub
from autoport.config import Settings
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.ratelimit import RateLimiters
from autoport.kit.state import AppState
from autoport.kit.usage import UsageCounts
from autoport.owner.reads import ReadCounter
from autoport.sandbox.source import BehaviourLookup
from autoport.streaming.service import StreamHub
from autoport.vehicle_data.service import VersionedReads

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


def build_state(settings: Settings, database: Database, clock: Clock) -> AppState:
    state = AppState(settings=settings, database=database, clock=clock)
    registry = BrandRegistry.from_settings(settings, clock=clock)
    # The sandbox connector asks the emulator what each sandbox vehicle does.
    registry.set_sandbox_behaviour(BehaviourLookup(database, clock))
    state.provide(registry)
    hub = StreamHub()
    hub.listen(database)  # other replicas' messages wake this one's streams (PostgreSQL)
    state.provide(hub, on_shutdown=hub.close, on_access_changed=hub.access_changed)
    specs = {name: getattr(settings, setting) for name, setting in RATE_LIMITS.items()}
    state.provide(RateLimiters(specs, redis_url=settings.redis_url))
    # Requests per application and day, counted in memory and flushed by autoport.usage.
    state.provide(UsageCounts())
    # Reads of vehicle data per grant and day, flushed by autoport.owner.tasks.
    state.provide(ReadCounter({}))
    # Wakes this process's command worker and `Prefer: wait` requests.
    state.provide(CommandHub())
    # The pull's reads of vehicle rows and clearances, kept while their tables are
    # unchanged (this app's database only).
    state.provide(VersionedReads())
    return state
