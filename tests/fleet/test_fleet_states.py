"""The transition table itself: what DELETE and POST lead to from every status."""

from __future__ import annotations

import pytest

from autoport.fleet.states import ENDED, IN_PROGRESS, TRANSITIONS, Status, Trigger, allowed, target


@pytest.mark.parametrize(
    ("current", "removed", "requested"),
    [
        (Status.pending, Status.canceling, None),
        (Status.approved, Status.revoking, None),
        (Status.revoking, None, None),
        (Status.canceling, None, None),
        (Status.rejected, None, Status.pending),
        (Status.error, None, Status.pending),
        (Status.revoked, None, Status.pending),
        (Status.canceled, None, Status.pending),
    ],
)
def test_delete_and_post_targets(
    current: Status, removed: Status | None, requested: Status | None
) -> None:
    assert target(current, Trigger.remove) is removed
    assert target(current, Trigger.request) is requested


def test_carmaker_decides_only_in_progress_statuses() -> None:
    decided_from = {src for (src, _), how in TRANSITIONS.items() if how is Trigger.carmaker}
    assert decided_from == set(IN_PROGRESS)
    assert allowed(Status.pending, Status.approved, Trigger.carmaker)
    assert not allowed(Status.pending, Status.approved, Trigger.remove)
    assert not allowed(Status.approved, Status.approved, Trigger.carmaker)
    assert not allowed(Status.revoked, Status.approved, Trigger.carmaker)


def test_every_status_is_reachable_and_ended_ones_only_restart() -> None:
    reachable = {Status.pending} | {to for (_, to) in TRANSITIONS}
    assert reachable == set(Status)
    for status in ENDED:
        assert [to for (src, to) in TRANSITIONS if src is status] == [Status.pending]
