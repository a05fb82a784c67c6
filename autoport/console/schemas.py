"""Shapes of the console's rows: users, sessions, single-use links, audit entries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from autoport.kit.db import Row
from autoport.kit.environments import Environment

INVITE = "invite"
RESET = "reset"


@dataclass(frozen=True, slots=True)
class User:
    id: str
    environment: Environment
    account_id: str
    email: str
    password_hash: str
    role: str
    created_at: int
    disabled_at: int | None

    @classmethod
    def from_row(cls, row: Row) -> User:
        return cls(
            row["id"],
            Environment(row["environment"]),
            row["account_id"],
            row["email"],
            row["password_hash"],
            row["role"],
            row["created_at"],
            row["disabled_at"],
        )


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A running session; `user_id` None is the operator."""

    id: str
    user_id: str | None
    expires_at: int
    account_id: str | None
    email: str | None
    role: str | None
    # A flash waits for one of its pages (console_flashes).
    has_flash: bool = False

    @classmethod
    def from_row(cls, row: Row) -> SessionRow:
        return cls(
            row["id"],
            row["user_id"],
            row["expires_at"],
            row["account_id"],
            row["email"],
            row["role"],
            bool(row["has_flash"]),
        )


@dataclass(frozen=True, slots=True)
class Invitation:
    id: str
    environment: Environment
    account_id: str
    kind: str  # INVITE | RESET
    email: str
    role: str
    user_id: str | None
    created_by: str
    created_at: int
    expires_at: int
    consumed_at: int | None

    @classmethod
    def from_row(cls, row: Row) -> Invitation:
        return cls(
            row["id"],
            Environment(row["environment"]),
            row["account_id"],
            row["kind"],
            row["email"],
            row["role"],
            row["user_id"],
            row["created_by"],
            row["created_at"],
            row["expires_at"],
            row["consumed_at"],
        )


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: str
    account_id: str | None
    actor: str | None
    actor_label: str | None
    action: str
    target: str | None
    detail: dict[str, Any]
    address: str | None
    created_at: int

    @classmethod
    def from_row(cls, row: Row) -> AuditEntry:
        return cls(
            row["id"],
            row["account_id"],
            row["actor"],
            row["actor_label"],
            row["action"],
            row["target"],
            orjson.loads(row["detail"]),
            row["address"],
            row["created_at"],
        )


@dataclass(frozen=True, slots=True)
class NewLink:
    """A single-use link just made: its URL is shown this once (and e-mailed)."""

    invitation: Invitation
    url: str
    emailed: bool
