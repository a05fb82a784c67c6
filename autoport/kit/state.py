"""What the app holds for its lifetime (settings, database, clock), and typed
dependencies to reach it from routes."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

from autoport.config import Settings
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.keyring import current_keyring

if TYPE_CHECKING:
    # Imported for the annotations only: those packages import this module.
    from autoport.brands.registry import BrandRegistry
    from autoport.ingestion.sources import DataSource
    from autoport.kit.ratelimit import RateLimiter
    from autoport.streaming.service import StreamHub


@dataclass(eq=False)  # one per app, compared and hashed by identity
class AppState:
    settings: Settings
    database: Database
    clock: Clock = field(default_factory=Clock)
    # Brand -> the connector that can fetch fresh data on demand (filled by the brand
    # registry at start-up); brands without one are served from the store.
    data_sources: dict[str, DataSource] = field(default_factory=dict)
    # Brand -> connector (set by `autoport.brands.registry.install_brands`; reach it
    # through `registry_of`, which installs it on first use).
    brand_registry: BrandRegistry | None = None
    # Wakes this process's SSE streams and MQTT publisher when messages are committed
    # (created on first use by `autoport.streaming.service.hub_of`).
    stream_hub: StreamHub | None = None
    # Request counters by name (vehicle data reads, token requests, consent entries),
    # created on first use from the settings by `autoport.kit.ratelimit.rate_limiter`.
    rate_limiters: dict[str, RateLimiter] = field(default_factory=dict)

    def begin_shutdown(self) -> None:
        """The server stops: long-lived responses (SSE streams) end now, before it waits
        for open requests (autoport.kit.server)."""
        if self.stream_hub is not None:
            self.stream_hub.close()

    def access_changed(self) -> None:
        """A token was revoked or an application disabled here: open long-lived
        responses (SSE streams) verify their callers again now, not at their next
        periodic check (which is how other processes' changes reach them)."""
        if self.stream_hub is not None:
            self.stream_hub.access_changed()

    @property
    def token_key(self) -> bytes:
        """The current `token_hmac_key`: read from the keyring on each use, so a
        rotation (`autoport keys rotate`) reaches a running process at once; the previous
        keys still accepted are `autoport.kit.keyring.accepted(token_key)`."""
        if self.settings.token_hmac_key is None:
            raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
        return current_keyring(self.settings, "token_hmac_key").current

    @property
    def session_key(self) -> bytes:
        """The current `session_secret` (as `token_key`)."""
        if self.settings.session_secret is None:
            raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
        return current_keyring(self.settings, "session_secret").current


# The apps this process is serving, between the start and the end of their lifespan: the
# server tells them when it begins to stop (autoport.kit.server). A worker process builds
# its app itself, so the server cannot be handed it.
_SERVING: weakref.WeakSet[AppState] = weakref.WeakSet()


@contextlib.contextmanager
def serving(state: AppState) -> Iterator[None]:
    _SERVING.add(state)
    try:
        yield
    finally:
        _SERVING.discard(state)


def begin_shutdown_of_served_apps() -> None:
    for state in list(_SERVING):
        state.begin_shutdown()


def state_of(request: Request) -> AppState:
    state: AppState = request.app.state.autoport
    return state


def database_of(request: Request) -> Database:
    return state_of(request).database


StateDep = Annotated[AppState, Depends(state_of)]
DatabaseDep = Annotated[Database, Depends(database_of)]
