"""PostgreSQL: `history_chunks` is partitioned by range of `received_max`, one partition
per UTC day (`history_chunks_YYYYMMDD`), so that retention drops a day at once instead
of deleting its rows. Partitions are made before a chunk needs one (the worker makes
today's and the next two days' ahead; a seal or a move of old rows makes the day it
needs) and dropped whole by retention (autoport.history.retention). SQLite has no
partitions: retention deletes whole chunks there."""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable

from autoport.kit.clock import MICROS
from autoport.kit.db import Connection, Database

DAY_US = 86_400 * MICROS
PREFIX = "history_chunks_"

# Per Database: the days known to have a partition (a partition dropped by another
# process is found missing when an insert fails, then made again).
_KNOWN: weakref.WeakKeyDictionary[Database, set[int]] = weakref.WeakKeyDictionary()


def day_of(us: int) -> int:
    return us // DAY_US


def name_of(day: int) -> str:
    return PREFIX + time.strftime("%Y%m%d", time.gmtime(day * 86_400))


async def list_days(conn: Connection) -> list[int]:
    """The days that have a partition, oldest first."""
    rows = await conn.fetch_all(
        "SELECT c.relname AS name FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent "
        "WHERE p.relname = 'history_chunks' AND p.relnamespace = "
        "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
    )
    days = []
    for row in rows:
        stamp = str(row["name"])[len(PREFIX) :]
        days.append(int(time.mktime(time.strptime(stamp + " UTC", "%Y%m%d %Z"))) // 86_400)
    return sorted(days)


async def ensure(db: Database, instants: Iterable[int]) -> None:
    """Make the partitions of the days of `instants` (µs) that have none."""
    if db.dialect != "postgresql":
        return
    known = _KNOWN.setdefault(db, set())
    missing = {day_of(us) for us in instants} - known
    if not missing:
        return
    # Outside a transaction of ours (autocommit): DDL in a transaction would count as a
    # write to every table and empty every process's read caches (kit.db.data_version).
    existing = set(await list_days(db.reader))
    for day in sorted(missing - existing):
        try:
            await db.reader.execute(
                f"CREATE TABLE IF NOT EXISTS {name_of(day)} PARTITION OF history_chunks "
                f"FOR VALUES FROM ({day * DAY_US}) TO ({(day + 1) * DAY_US})"
            )
        except Exception:
            # Another process made it at the same moment (IF NOT EXISTS does not cover
            # the race in the catalog): it exists, which is all that is needed.
            if day not in await list_days(db.reader):
                raise
    known |= missing


def forget(db: Database, day: int) -> None:
    _KNOWN.get(db, set()).discard(day)
