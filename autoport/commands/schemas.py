"""Shapes of vehicle commands, as stored and as answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from autoport.kit.clock import to_iso
from autoport.kit.db import Row
from autoport.kit.environments import Environment

Status = Literal["pending", "sent", "executed", "failed", "timed_out", "cancelled"]
PENDING, SENT, EXECUTED, FAILED, TIMED_OUT = "pending", "sent", "executed", "failed", "timed_out"
# Never sent: the access it was accepted under was withdrawn before a worker claimed it.
CANCELLED = "cancelled"
UNFINISHED = (PENDING, SENT)
FINISHED = (EXECUTED, FAILED, TIMED_OUT, CANCELLED)


@dataclass(frozen=True, slots=True)
class CommandRow:
    id: str
    environment: Environment
    application_id: str
    authorization_id: str | None
    vin: str
    brand: str
    capability: str
    command: str
    arguments: dict[str, Any]
    status: str
    failure_reason: str | None
    failure_description: str | None
    idempotency_key: str | None
    request_hash: str
    created_at: int
    updated_at: int
    sent_at: int | None
    finished_at: int | None
    deadline_at: int

    @classmethod
    def from_row(cls, row: Row) -> CommandRow:
        return cls(
            id=row["id"],
            environment=Environment(row["environment"]),
            application_id=row["application_id"],
            authorization_id=row["authorization_id"],
            vin=row["vin"],
            brand=row["brand"],
            capability=row["capability"],
            command=row["command"],
            arguments=orjson.loads(row["arguments"]),
            status=row["status"],
            failure_reason=row["failure_reason"],
            failure_description=row["failure_description"],
            idempotency_key=row["idempotency_key"],
            request_hash=row["request_hash"],
            created_at=int(row["created_at"]),
            updated_at=int(row["updated_at"]),
            sent_at=None if row["sent_at"] is None else int(row["sent_at"]),
            finished_at=None if row["finished_at"] is None else int(row["finished_at"]),
            deadline_at=int(row["deadline_at"]),
        )

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def as_dict(self) -> dict[str, Any]:
        """The command as every answer, webhook and stream message shows it."""
        failure = None
        if self.failure_reason is not None:
            failure = {"reason": self.failure_reason, "description": self.failure_description}
        return {
            "id": self.id,
            "vin": self.vin,
            "brand": self.brand,
            "capability": self.capability,
            "command": self.command,
            "arguments": self.arguments,
            "status": self.status,
            "failure": failure,
            "created_at": to_iso(self.created_at),
            "updated_at": to_iso(self.updated_at),
            "sent_at": None if self.sent_at is None else to_iso(self.sent_at),
            "finished_at": None if self.finished_at is None else to_iso(self.finished_at),
            "expires_at": to_iso(self.deadline_at),
        }


class CommandIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    capability: str = Field(examples=["doors"], max_length=100)
    command: str = Field(examples=["lock_unlock_doors"], max_length=100)
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        examples=[{"locks_state": "locked"}],
        description="The properties the command writes, typed like data (the catalog)",
    )


class FailureView(BaseModel):
    reason: str = Field(description="one of the spec's failure reasons")
    description: str | None


class CommandView(BaseModel):
    id: str
    vin: str
    brand: str
    capability: str
    command: str
    arguments: dict[str, Any]
    status: Status
    failure: FailureView | None = Field(
        description="set when failed, timed_out or cancelled (why it was not sent)"
    )
    created_at: str
    updated_at: str
    sent_at: str | None
    finished_at: str | None
    expires_at: str = Field(description="an unfinished command times out then")
    state: dict[str, Any] | None = Field(
        description="Once executed: the properties the command wrote, as stored now "
        "(the pull's layout: capability -> property -> {data, timestamp}), only those the "
        "application may read; `{}` when none. Null until executed. Not in webhook and "
        "stream messages (the data arrives there as vehicle data).",
        examples=[{"doors": {"locks_state": {"data": "locked", "timestamp": "…"}}}],
    )


class CommandArgumentView(BaseModel):
    name: str
    required: bool
    multiple: bool
    scope: str


class CommandDescription(BaseModel):
    capability: str
    command: str
    label_en: str
    label_de: str
    arguments: list[CommandArgumentView]
    scopes: list[str]


class CommandCatalog(BaseModel):
    commands: list[CommandDescription]
