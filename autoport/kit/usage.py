"""The one daily counter: requests per application and day, and reads of vehicle data
per grant and day, counted in this process's memory: one dict increment per request (the
pull is the hottest path; a database write per request would cost more than the pull).
One flusher (autoport.usage.tasks) adds them to the database every few seconds and when
the process stops: the requests to `usage_daily` (the console's usage page), the reads
through the writer the app wires in (the owner portal's `grant_reads`, owned by
autoport.owner, which the pull therefore never imports). Counts of a process killed
between two flushes are lost (at most one interval's): a usage and access record, not
billing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from autoport.kit.metrics import TALLY, ApplicationCounter
from autoport.kit.state import AppState, parts_of

if TYPE_CHECKING:
    from autoport.kit.auth import Caller
    from autoport.kit.clock import Clock
    from autoport.kit.environments import Environment

_DAY_US = 86_400 * 1_000_000

# (environment, application id, UTC day number) -> [requests, rate limited]
Key = tuple[str, str, int]
# (environment, authorization id, UTC day number) -> [reads, last read µs]
Reads = dict[tuple[str, str, int], list[int]]


class UsageCounts:
    """Only the event loop's thread touches it, so no lock is needed."""

    def __init__(self) -> None:
        self.counts: dict[Key, list[int]] = {}
        self.reads: Reads = {}

    def read(self, caller: Caller, now_us: int) -> None:
        """One successful read of vehicle data; counted for a vehicle token's grant (the
        owner portal's "last read"), not for a fleet read."""
        grant = caller.grant
        if grant is None:
            return
        key = (caller.environment.value, grant.authorization_id, now_us // _DAY_US)
        entry = self.reads.get(key)
        if entry is None:
            self.reads[key] = [1, now_us]
        else:
            entry[0] += 1
            entry[1] = now_us

    def take_reads(self) -> Reads:
        taken, self.reads = self.reads, {}
        return taken

    def give_back_reads(self, taken: Reads) -> None:
        """A flush failed: its reads wait for the next one."""
        for key, (reads, last) in taken.items():
            entry = self.reads.get(key)
            if entry is None:
                self.reads[key] = [reads, last]
            else:
                entry[0] += reads
                entry[1] = max(entry[1], last)

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

    count_metric = TALLY.application

    def count(environment: Environment, application_id: str, status: int) -> None:
        counts.request(str(environment), application_id, clock.now_us())
        count_metric(environment, application_id, status)

    return count


class UsageParts(Protocol):
    """The part the counter's users read (autoport.state.Parts; mypy checks it)."""

    @property
    def usage(self) -> UsageCounts: ...


def usage_of(state: AppState) -> UsageCounts:
    """The app's one daily counter, built once by the app layer."""
    parts: UsageParts = parts_of(state)
    return parts.usage
