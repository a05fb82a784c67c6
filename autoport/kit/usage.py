"""Requests per application and day, counted in this process's memory: one dict
increment per request (the pull is the hottest path; a database write per request would
cost more than the pull). autoport.usage.tasks adds the counts to `usage_daily` every few
seconds and when the process stops; the console's usage page reads them there."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from autoport.kit.metrics import ApplicationCounter, count_application_request

if TYPE_CHECKING:
    from autoport.kit.clock import Clock
    from autoport.kit.environments import Environment

_DAY_US = 86_400 * 1_000_000

# (environment, application id, UTC day number) -> [requests, rate limited]
Key = tuple[str, str, int]


class UsageCounts:
    """Only the event loop's thread touches it, so no lock is needed."""

    def __init__(self) -> None:
        self.counts: dict[Key, list[int]] = {}

    def request(self, environment: str, application_id: str, now_us: int) -> None:
        key = (environment, application_id, now_us // _DAY_US)
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = [0, 0]
        counts[0] += 1

    def rate_limited(self, environment: str, application_id: str, now_us: int) -> None:
        key = (environment, application_id, now_us // _DAY_US)
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = [0, 0]
        counts[1] += 1

    def take(self) -> dict[Key, list[int]]:
        """The counts so far, and start again from zero (the flusher writes them)."""
        taken, self.counts = self.counts, {}
        return taken

    def give_back(self, taken: dict[Key, list[int]]) -> None:
        """Counts a failed flush could not write: kept for the next one."""
        for key, (requests, limited) in taken.items():
            counts = self.counts.setdefault(key, [0, 0])
            counts[0] += requests
            counts[1] += limited


def day_text(day: int) -> str:
    """UTC day number -> ISO date."""
    return datetime.fromtimestamp(day * 86_400, tz=UTC).date().isoformat()


def application_requests(counts: UsageCounts, clock: Clock) -> ApplicationCounter:
    """What the request pipeline calls once a request an application's token got
    through is answered: its usage count here, and the per-application metric."""

    def count(environment: Environment, application_id: str, status: int) -> None:
        counts.request(str(environment), application_id, clock.now_us())
        count_application_request(environment, application_id, status)

    return count
