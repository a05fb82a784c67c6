"""Retention: deleting old rows in batches, without long transactions or locks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from autoport.kit.db import Connection
from autoport.kit.state import AppState


async def prune_in_batches(
    state: AppState, delete_batch: Callable[[Connection, int], Awaitable[int]]
) -> int:
    """Run `delete_batch` until it deletes less than a batch; returns the rows deleted.

    Each batch is its own short transaction (`retention_prune_batch_size` rows at most),
    with a pause between batches (`retention_prune_pause_seconds`), so ingestion's
    writes get in between: on SQLite, the one writer is never held for long; on
    PostgreSQL, row locks last one batch. Safe to run in several processes at once
    (each batch deletes what is still there)."""
    batch = state.settings.retention_prune_batch_size
    pause = state.settings.retention_prune_pause_seconds
    total = 0
    while True:
        async with state.database.transaction() as conn:
            deleted = await delete_batch(conn, batch)
        total += deleted
        if deleted < batch:
            return total
        await asyncio.sleep(pause)
