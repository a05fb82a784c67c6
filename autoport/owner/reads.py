"""Counting reads of vehicle data per grant and day, at no measurable cost to the pull.

The pull adds one to a dict entry in this process (no I/O, no lock: the event loop runs
one request at a time); `tasks.read_flusher` moves the counts into `grant_reads` every
few seconds with an adding upsert, so several processes count into the same rows. Counts
of a process killed between two flushes are lost (at most one interval's): an access
record, not billing.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoport.kit.auth import Caller
from autoport.kit.db import Database
from autoport.kit.state import AppState

DAY_US = 86_400 * 1_000_000

# (environment, authorization_id, day) -> [reads, last read µs]
Counts = dict[tuple[str, str, int], list[int]]


@dataclass(eq=False)
class ReadCounter:
    counts: Counts

    def take(self) -> Counts:
        taken, self.counts = self.counts, {}
        return taken

    def give_back(self, taken: Counts) -> None:
        """A flush failed: its counts wait for the next one."""
        for key, (reads, last) in taken.items():
            entry = self.counts.get(key)
            if entry is None:
                self.counts[key] = [reads, last]
            else:
                entry[0] += reads
                entry[1] = max(entry[1], last)


def record(state: AppState, caller: Caller, now_us: int) -> None:
    """One successful read of vehicle data with a vehicle token."""
    grant = caller.grant
    if grant is None:
        return
    key = (str(caller.environment), grant.authorization_id, now_us // DAY_US)
    # The app's one counter (autoport.state.build_state provides it).
    counts = state.part(ReadCounter).counts
    entry = counts.get(key)
    if entry is None:
        counts[key] = [1, now_us]
    else:
        entry[0] += 1
        entry[1] = now_us


# Adds to the day's row; the later of the two last reads wins. Plain SQL both backends
# run (ON CONFLICT DO UPDATE; CASE instead of MAX/GREATEST, which differ).
_ADD = """
INSERT INTO grant_reads (authorization_id, day, environment, reads, last_read_at)
VALUES (:authorization_id, :day, :environment, :reads, :last_read_at)
ON CONFLICT (authorization_id, day) DO UPDATE SET
    reads = grant_reads.reads + excluded.reads,
    last_read_at = CASE WHEN excluded.last_read_at > grant_reads.last_read_at
        THEN excluded.last_read_at ELSE grant_reads.last_read_at END
"""


async def flush(state: AppState) -> int:
    """Write this process's counts; returns how many rows were touched."""
    return await flush_counter(state.database, state.part(ReadCounter))


async def flush_counter(db: Database, counter: ReadCounter) -> int:
    taken = counter.take()
    if not taken:
        return 0
    rows = [
        {
            "environment": environment,
            "authorization_id": authorization_id,
            "day": day,
            "reads": reads,
            "last_read_at": last,
        }
        for (environment, authorization_id, day), (reads, last) in sorted(taken.items())
    ]
    try:
        async with db.transaction() as conn:
            # Sorted rows: two processes flushing at once lock them in the same order.
            await conn.execute_many(_ADD, rows)
    except BaseException:
        counter.give_back(taken)
        raise
    return len(rows)
