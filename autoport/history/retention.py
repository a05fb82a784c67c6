"""Retention of the history: points are kept `vehicle_data_history_retention_days` after
their arrival (per brand: `vehicle_data_history_retention_days_by_brand`; 0 keeps them
forever), at the grain of a chunk: a chunk goes when its newest point is past retention.

PostgreSQL drops the day's partition whole when every brand's points in it are past
their retention (no brand kept longer than the default): a catalog change that takes
milliseconds whatever the day held. Otherwise, and on SQLite, whole chunks are deleted
in short batches (`retention_prune_batch_size` chunks, after each a pause as long as it
took, `retention_prune_pause_seconds` at most), so ingestion's transactions get in
between. Ingestion writes only `history_hot`, so it never waits for either. Rows of the
old row-per-point table past retention are deleted too while it is there
(autoport.history.migration), counted in the move's progress."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import structlog

from autoport.history import partitions, repository, service
from autoport.kit.clock import MICROS
from autoport.kit.db import Connection
from autoport.kit.state import AppState

log = structlog.get_logger("autoport.history.retention")

_DAY_US = 86_400 * MICROS


async def _in_batches(state: AppState, delete: Callable[[Connection, int], Awaitable[int]]) -> int:
    """Batches with a pause after each as long as it took, `retention_prune_pause_seconds`
    at most: ingestion waits one batch at most and then has as long for its own writes.
    (A fixed pause was most of the time: 1.6 of SQLite's 3.5 s for a 1,000-car day, 82
    batches of a few milliseconds each.)"""
    batch = state.settings.retention_prune_batch_size
    pause = state.settings.retention_prune_pause_seconds
    total = 0
    while True:
        started = time.monotonic()
        async with state.database.transaction() as conn:
            deleted = await delete(conn, batch)
        total += deleted
        if deleted < batch:
            return total
        await asyncio.sleep(min(pause, time.monotonic() - started))


async def _prune(state: AppState, cutoff: int, brand: str | None, except_brands: list[str]) -> int:
    """Points deleted past `cutoff` (of `brand`, or of every brand but `except_brands`)."""
    points = 0

    async def chunks(conn: Connection, batch: int) -> int:
        nonlocal points
        deleted, of_points = await repository.prune_chunks(
            conn, cutoff_us=cutoff, batch=batch, brand=brand, except_brands=except_brands
        )
        points += of_points
        return deleted

    async def hot(conn: Connection, batch: int) -> int:
        return await repository.prune_hot(
            conn, cutoff_us=cutoff, batch=batch, brand=brand, except_brands=except_brands
        )

    async def old(conn: Connection, batch: int) -> int:
        deleted = await repository.prune_legacy(
            conn, cutoff_us=cutoff, batch=batch, brand=brand, except_brands=except_brands
        )
        # The move's progress counts the rows that left the old table either way.
        if deleted:
            await repository.add_to_state(conn, name="legacy_moved", amount=deleted)
        return deleted

    await _in_batches(state, chunks)
    points += await _in_batches(state, hot)
    db = state.database
    if service.old_table_gone(db) or not await repository.legacy_table_exists(db.reader):
        return points
    try:
        return points + await _in_batches(state, old)
    except Exception as error:
        if repository.legacy_missing(error):  # the mover dropped it meanwhile
            return points
        raise


async def drop_partitions(state: AppState, cutoff: int) -> int:
    """PostgreSQL: drop the partitions wholly before `cutoff`; returns the points they
    held. A partition another transaction holds is left for the next round (the lock
    is waited for 200 ms at most, so readers never queue behind the drop)."""
    db = state.database
    if db.dialect != "postgresql":
        return 0
    points = 0
    for day in await partitions.list_days(db.reader):
        if (day + 1) * partitions.DAY_US > cutoff:
            break
        name = partitions.name_of(day)
        try:
            async with db.transaction() as conn:
                await conn.execute("SET LOCAL lock_timeout = '200ms'")
                held = await conn.fetch_value(
                    f"SELECT coalesce(sum(count), 0) FROM {name}"  # noqa: S608
                )
                await conn.execute(f"DROP TABLE {name}")
        except Exception as error:  # lock not granted in time: next round
            log.info("history partition not dropped yet", partition=name, error=str(error))
            continue
        partitions.forget(db, day)
        points += int(held)
    return points


async def prune(state: AppState) -> int:
    """One retention round; returns the points deleted."""
    settings = state.settings
    now = state.clock.now_us()
    by_brand = settings.vehicle_data_history_retention_days_by_brand
    total = 0
    for brand, days in sorted(by_brand.items()):
        if days:
            total += await _prune(state, now - days * _DAY_US, brand, [])
    days = settings.vehicle_data_history_retention_days
    if days == 0:
        return total
    cutoff = now - days * _DAY_US
    kept_longer = [b for b, d in by_brand.items() if d == 0 or d > days]
    if not kept_longer:
        total += await drop_partitions(state, cutoff)
    return total + await _prune(state, cutoff, None, sorted(by_brand))
