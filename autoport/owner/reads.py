"""Reads of vehicle data per grant and day, written to `grant_reads` (this feature's
table) with an adding upsert, so several processes count into the same rows.

The pull counts them in the app's one daily counter (autoport.kit.usage: a dict entry
in memory, no I/O, no lock); the one flusher (autoport.usage.tasks) calls `flush_reads`
every few seconds, wired by the app, so the pull never imports the owner portal.
"""

from __future__ import annotations

from autoport.kit.db import Database
from autoport.kit.state import AppState
from autoport.kit.usage import UsageCounts, usage_of

DAY_US = 86_400 * 1_000_000


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
    """Write this process's counted reads now (a page about to show them)."""
    return await flush_reads(state.database, usage_of(state))


async def flush_reads(db: Database, counts: UsageCounts) -> int:
    """Write this process's counted reads (autoport.kit.usage, where the pull counts
    them); returns how many rows were touched. The app wires it into the one flusher
    (autoport.usage.tasks)."""
    taken = counts.take_reads()
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
        counts.give_back_reads(taken)
        raise
    return len(rows)
