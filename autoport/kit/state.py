"""What the app holds for its lifetime (settings, database, clock), and typed
dependencies to reach it from routes."""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request

from autoport.config import Settings
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.keyring import Keyring, LiveKey


@dataclass(eq=False)  # one per app, compared and hashed by identity
class AppState:
    """The app's lifetime: settings, database, clock, and `parts`, the long-lived
    objects of the features (the brand registry, the stream hub, the rate limiters, ...),
    each built once by the app layer before the app serves (`autoport.state.build_state`):
    its frozen dataclass of typed parts (`autoport.state.Parts`). The kit names no
    feature: a feature reads the parts through a Protocol of its own (`parts_of`), and
    mypy proves in `autoport.state` that `Parts` satisfies every such Protocol."""

    settings: Settings
    database: Database
    clock: Clock = field(default_factory=Clock)
    parts: object = None
    _on_shutdown: list[Callable[[], None]] = field(default_factory=list)
    _on_access_changed: list[Callable[[], None]] = field(default_factory=list)

    def on_events(
        self,
        *,
        on_shutdown: Callable[[], None] | None = None,
        on_access_changed: Callable[[], None] | None = None,
    ) -> None:
        """What a part does when the server stops and when access changes."""
        if on_shutdown is not None:
            self._on_shutdown.append(on_shutdown)
        if on_access_changed is not None:
            self._on_access_changed.append(on_access_changed)

    def begin_shutdown(self) -> None:
        """The server stops: long-lived responses (SSE streams) end now, before it waits
        for open requests (autoport.kit.server)."""
        for stop in self._on_shutdown:
            stop()

    def access_changed(self) -> None:
        """A token was revoked or an application disabled here: open long-lived
        responses (SSE streams) verify their callers again now, not at their next
        periodic check (which is how other processes' changes reach them)."""
        for changed in self._on_access_changed:
            changed()

    @property
    def token_key(self) -> bytes:
        """The current `token_hmac_key`: the secrets file is looked at on each use, so a
        rotation (`autoport keys rotate`) reaches a running process at once; the previous
        keys still accepted are `autoport.kit.keyring.accepted(token_key)`."""
        if self.settings.token_hmac_key is None:
            raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
        return self._keys.token_hmac_key.current

    @property
    def recent_token_keyring(self) -> Keyring:
        """The `token_hmac_key` ring as the secrets file held it at most a millisecond
        ago (`autoport.kit.keyring.LiveKey.recent`; the same object until the file
        changes or a previous key's window ends): for the bearer check of every request,
        which looks again with `token_key` before it refuses a token."""
        if self.settings.token_hmac_key is None:
            raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
        return self._keys.token_hmac_key.recent()

    @property
    def session_key(self) -> bytes:
        """The current `session_secret` (as `token_key`)."""
        if self.settings.session_secret is None:
            raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
        return self._keys.session_secret.current

    @functools.cached_property
    def _keys(self) -> _LiveKeys:
        return _LiveKeys(
            LiveKey(self.settings, "token_hmac_key"), LiveKey(self.settings, "session_secret")
        )


def parts_of(state: AppState) -> Any:
    """The app's parts, for a feature to read through a Protocol of its own naming the
    parts it reads, always as `parts: SomeParts = parts_of(state)`:
    `autoport.state.wired` lists every such Protocol, so mypy proves `Parts` has each part
    a feature reads (tests/kit/test_wiring.py holds both rules)."""
    if state.parts is None:
        raise RuntimeError("no parts were built for this app (autoport.state.build_state)")
    return state.parts


@dataclass(frozen=True, slots=True)
class _LiveKeys:
    token_hmac_key: LiveKey
    session_secret: LiveKey


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
