"""The fleet clearance state machine, in one place.

    pending ──> approved ──> revoking ──> revoked
       │  └──> rejected | error
       └──> canceling ──> canceled

The carmaker decides pending -> approved | rejected | error (through its connector, or
for a push-fed brand through its data provider or the operator: autoport.fleet.decisions);
DELETE starts revoking (an approved vehicle) or canceling (a pending request); the
carmaker confirms the end.
A vehicle whose clearance ended (rejected, error, revoked, canceled) may be asked for
again: POST moves it back to pending with a new changelog entry.
"""

from __future__ import annotations

import enum


class Status(enum.StrEnum):
    pending = "pending"
    approved = "approved"
    rejected = "rejected"
    error = "error"
    revoking = "revoking"
    revoked = "revoked"
    canceling = "canceling"
    canceled = "canceled"


class Trigger(enum.StrEnum):
    """Who causes a transition: the application (its requests) or the carmaker (the
    connector's answer, applied by the worker)."""

    request = "request"  # POST of a vehicle whose clearance ended
    remove = "remove"  # DELETE
    carmaker = "carmaker"  # the connector, or a push-fed brand's provider or operator, decided


# (from, to) -> what may cause it. Nothing else is a transition.
TRANSITIONS: dict[tuple[Status, Status], Trigger] = {
    (Status.pending, Status.approved): Trigger.carmaker,
    (Status.pending, Status.rejected): Trigger.carmaker,
    (Status.pending, Status.error): Trigger.carmaker,
    (Status.pending, Status.canceling): Trigger.remove,
    (Status.approved, Status.revoking): Trigger.remove,
    (Status.revoking, Status.revoked): Trigger.carmaker,
    (Status.canceling, Status.canceled): Trigger.carmaker,
    (Status.rejected, Status.pending): Trigger.request,
    (Status.error, Status.pending): Trigger.request,
    (Status.revoked, Status.pending): Trigger.request,
    (Status.canceled, Status.pending): Trigger.request,
}

# Statuses the background worker drives forward by asking the carmaker.
IN_PROGRESS: frozenset[Status] = frozenset({Status.pending, Status.revoking, Status.canceling})
# Statuses a clearance ends in; a new POST starts it again.
ENDED: frozenset[Status] = frozenset(
    {Status.rejected, Status.error, Status.revoked, Status.canceled}
)


def target(current: Status, trigger: Trigger) -> Status | None:
    """The single status `trigger` leads to from `current`, or None when it leads nowhere.
    For the carmaker trigger the outcome chooses among several; see `allowed`."""
    found = [to for (src, to), how in TRANSITIONS.items() if src is current and how is trigger]
    return found[0] if len(found) == 1 else None


def allowed(current: Status, new: Status, trigger: Trigger) -> bool:
    return TRANSITIONS.get((current, new)) is trigger
