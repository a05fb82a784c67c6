"""The service's answers as small typed objects. Each keeps the JSON it came from in
`raw`, so fields a newer server adds are never lost."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from autoport_client.models import VehicleData
from autoport_client.models._base import parse_instant

Environment = Literal["production", "sandbox"]
FleetStatus = Literal[
    "pending", "approved", "rejected", "error", "revoking", "revoked", "canceling", "canceled"
]
ConnectivityStatus = Literal["activated", "deactivated", "unknown"]


def _instant(value: Any) -> datetime | None:
    return parse_instant(value) if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class AppToken:
    """A client_credentials token (kept and renewed by the client)."""

    access_token: str
    expires_at: float  # time.time() instant
    scope: str = ""

    @classmethod
    def from_response(cls, body: Mapping[str, Any], *, now: float | None = None) -> AppToken:
        now = time.time() if now is None else now
        return cls(
            access_token=str(body["access_token"]),
            expires_at=now + float(body.get("expires_in", 300)),
            scope=str(body.get("scope", "")),
        )


@dataclass(frozen=True, slots=True)
class VehicleToken:
    """An owner's grant: an access token and the refresh token that renews it.

    Persist it with `to_dict()` / `from_dict()`: every refresh rotates the refresh
    token, so the stored one must be replaced each time (see `VehicleSession`)."""

    access_token: str
    refresh_token: str
    expires_at: float
    scope: str = ""
    status: str | None = None  # "pending" until the carmaker confirms, then "approved"
    authorization_id: str | None = None
    validity_start_date: str | None = None
    validity_end_date: str | None = None

    @classmethod
    def from_response(cls, body: Mapping[str, Any], *, now: float | None = None) -> VehicleToken:
        now = time.time() if now is None else now
        return cls(
            access_token=str(body["access_token"]),
            refresh_token=str(body["refresh_token"]),
            expires_at=now + float(body.get("expires_in", 3600)),
            scope=str(body.get("scope", "")),
            status=body.get("status"),
            authorization_id=body.get("authorization_id"),
            validity_start_date=body.get("validity_start_date"),
            validity_end_date=body.get("validity_end_date"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VehicleToken:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})

    def expires_within(self, seconds: float, *, now: float | None = None) -> bool:
        return (time.time() if now is None else now) + seconds >= self.expires_at


@dataclass(frozen=True, slots=True)
class VehicleInfo:
    vin: str
    sub: str
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Eligibility:
    vin: str
    eligible: bool
    data_delivery: tuple[str, ...]
    connectivity_status: ConnectivityStatus | str | None
    primary_user_assigned: bool | None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> Eligibility:
        return cls(
            vin=str(body.get("vin", "")),
            eligible=bool(body.get("eligible")),
            data_delivery=tuple(body.get("data_delivery", ())),
            connectivity_status=body.get("connectivity_status"),
            primary_user_assigned=body.get("primary_user_assigned"),
            raw=dict(body),
        )


@dataclass(frozen=True, slots=True)
class ChangelogEntry:
    timestamp: datetime | None
    status: FleetStatus | str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class FleetVehicle:
    """A vehicle of the fleet. After `add_fleet_vehicles` an item may have status
    "error" and a `description` saying what was wrong with it."""

    vin: str
    status: FleetStatus | Literal["error"] | str
    brand: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    description: str | None = None
    changelog: tuple[ChangelogEntry, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> FleetVehicle:
        return cls(
            vin=str(body.get("vin", "")),
            status=str(body.get("status", "")),
            brand=body.get("brand"),
            tags=dict(body.get("tags") or {}),
            description=body.get("description"),
            changelog=tuple(
                ChangelogEntry(_instant(e.get("timestamp")), str(e.get("status")), e.get("reason"))
                for e in body.get("changelog", ())
            ),
            raw=dict(body),
        )


@dataclass(frozen=True, slots=True)
class NewFleetVehicle:
    """One vehicle to clear: `add_fleet_vehicles([NewFleetVehicle(vin, "bmw")])`."""

    vin: str
    brand: str
    tags: Mapping[str, str] | None = None

    def as_json(self) -> dict[str, Any]:
        item: dict[str, Any] = {"vin": self.vin, "brand": self.brand}
        if self.tags is not None:
            item["tags"] = dict(self.tags)
        return item


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One accepted value of a property: `data` as JSON (a wrapper's `data`, or for array
    properties the whole array), `timestamp` its instant."""

    data: Any
    timestamp: datetime | None
    failure: Mapping[str, Any] | None = None
    raw: Any = None

    @classmethod
    def from_json(cls, value: Any) -> HistoryPoint:
        if isinstance(value, Mapping):
            return cls(
                data=value.get("data"),
                timestamp=_instant(value.get("timestamp")),
                failure=value.get("failure"),
                raw=value,
            )
        # An array property: its newest wrapper's instant stands for the point.
        stamps = [_instant(w.get("timestamp")) for w in value if isinstance(w, Mapping)]
        known = [stamp for stamp in stamps if stamp is not None]
        return cls(data=value, timestamp=max(known) if known else None, raw=value)


@dataclass(frozen=True, slots=True)
class StreamMessage:
    """A schema-v2 stream message. `data` is typed (for a property that changed several
    times in one message, its newest value); `raw` is the message as received."""

    message_id: str
    vin: str
    application_id: str
    data: VehicleData
    version: int
    event_id: str | None = None  # SSE `id:`; None over MQTT
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, body: Mapping[str, Any], *, event_id: str | None = None) -> StreamMessage:
        return cls(
            message_id=str(body.get("message_id", "")),
            vin=str(body.get("vin", "")),
            application_id=str(body.get("application_id", "")),
            data=VehicleData.from_dict({"vin": body.get("vin"), **dict(body.get("data") or {})}),
            version=int(body.get("version", 2)),
            event_id=event_id,
            raw=dict(body),
        )


@dataclass(frozen=True, slots=True)
class StreamGap:
    """Messages after the resume point were already pruned (SSE `event: gap`)."""

    requested_after: int | None
    first_available: int | None


__all__ = [
    "AppToken",
    "ChangelogEntry",
    "Eligibility",
    "Environment",
    "FleetStatus",
    "FleetVehicle",
    "HistoryPoint",
    "NewFleetVehicle",
    "StreamGap",
    "StreamMessage",
    "VehicleInfo",
    "VehicleToken",
]


# ------------------------------------------------------------------------ vehicle commands

CommandStatus = Literal["pending", "sent", "executed", "failed", "timed_out", "cancelled"]
FINISHED_COMMAND_STATUSES = frozenset({"executed", "failed", "timed_out", "cancelled"})


@dataclass(frozen=True, slots=True)
class CommandRequest:
    """A vehicle command to send: `autoport_client.commands` makes them with typed
    arguments (`commands.doors.lock_unlock_doors(locks_state="locked")`); built by hand,
    the arguments are the JSON the API takes."""

    capability: str
    command: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "capability": self.capability,
            "command": self.command,
            "arguments": dict(self.arguments),
        }


@dataclass(frozen=True, slots=True)
class CommandFailure:
    """Why a command did not execute (`{"reason", "description"}`: `oem_error`,
    `privacy_mode_active`, `execution_timeout`, `unauthorised`, ...)."""

    reason: str
    description: str


@dataclass(frozen=True, slots=True)
class VehicleCommand:
    """A command as `POST /v1/vehicle-commands/...` and `GET /v1/vehicle-commands/{id}`
    answer it. `state` (once executed) is the capability's new state, in the pull's
    layout, typed like a pull answer."""

    id: str
    vin: str
    capability: str
    command: str
    status: CommandStatus
    arguments: Mapping[str, Any] = field(default_factory=dict)
    brand: str | None = None
    failure: CommandFailure | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    sent_at: datetime | None = None
    finished_at: datetime | None = None
    expires_at: datetime | None = None
    state: VehicleData | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_COMMAND_STATUSES

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> VehicleCommand:
        failure = body.get("failure")
        state = body.get("state")
        return cls(
            id=str(body["id"]),
            vin=str(body["vin"]),
            capability=str(body["capability"]),
            command=str(body["command"]),
            status=body["status"],
            arguments=dict(body.get("arguments") or {}),
            brand=body.get("brand"),
            failure=CommandFailure(str(failure["reason"]), str(failure.get("description", "")))
            if isinstance(failure, Mapping)
            else None,
            created_at=_instant(body.get("created_at")),
            updated_at=_instant(body.get("updated_at")),
            sent_at=_instant(body.get("sent_at")),
            finished_at=_instant(body.get("finished_at")),
            expires_at=_instant(body.get("expires_at")),
            state=VehicleData.from_dict(state) if isinstance(state, Mapping) else None,
            raw=body,
        )


def command_argument(value: Any) -> Any:
    """A typed command argument as the API takes it: a quantity as `{"value", "unit"}`,
    an instant as ISO 8601 UTC, sequences and mappings item by item."""
    from autoport_client.models._base import Quantity

    if isinstance(value, Quantity):
        return {"value": value.value, "unit": value.unit}
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("give an aware datetime (e.g. datetime.now(UTC))")
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, Mapping):
        return {key: command_argument(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [command_argument(item) for item in value]
    return value
