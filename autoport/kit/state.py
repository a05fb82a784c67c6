"""What the app holds for its lifetime (settings, database, clock), and typed
dependencies to reach it from routes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from autoport.config import Settings
from autoport.kit.clock import Clock
from autoport.kit.db import Database


@dataclass
class AppState:
    settings: Settings
    database: Database
    clock: Clock = field(default_factory=Clock)

    @property
    def token_key(self) -> bytes:
        key = self.settings.token_hmac_key
        if key is None:
            raise RuntimeError("secrets were not loaded (config.ensure_secrets)")
        return key.get_secret_value().encode()


def state_of(request: Request) -> AppState:
    state: AppState = request.app.state.autoport
    return state


def database_of(request: Request) -> Database:
    return state_of(request).database


StateDep = Annotated[AppState, Depends(state_of)]
DatabaseDep = Annotated[Database, Depends(database_of)]
