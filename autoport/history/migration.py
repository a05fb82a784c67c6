"""Moving the old row-per-point history (`vehicle_data_history`, before 0020) into series
and chunks, online (docs/operations.md, History migration).

The history worker does it by itself, a batch at a time; `autoport history migrate`
does the same in the foreground with a progress line. A batch is the next rows in the
old table's unique-index order (environment, VIN, capability, property, timestamp,
digest), never ending inside one timestamp of a series. Its chunks are planned and
encoded outside any transaction (as a seal's: autoport.history.service.plan_merge, the
old rows ranked before anything stored since), then one transaction writes the chunks,
deletes the rows it moved (checking each is still there), counts them in the progress
and renews the mover's lease. A kill -9 at any moment leaves either the rows or their
chunks; the next mover carries on from the first row left.

One mover at a time: a lease in `history_state` (`legacy_lease`, the instant it runs
out), taken when free or run out and renewed by every batch; a mover that lost it writes
nothing more. Readers read the old table first, then hot, then the chunks, so a batch
committing meanwhile shows a point twice (dropped) and never hides one.

When the old table is empty the mover drops it and notes when (`legacy_done_at`):
from then on no reader looks for it (each process notices at its next read), and the
storage is series and chunks alone. Migration 0023 drops it at once where it was empty
already (new installations).

Progress, in `history_state`: `legacy_total` (rows when the move started, counted once),
`legacy_moved` (rows moved, or pruned by retention meanwhile: added in the transaction
that removes them), `legacy_started_at`, `legacy_rate` (points/s of the last batches)
and `legacy_updated_at`; shown by `autoport history status`, the migrate command's
progress line, the worker's log and `/metrics` (`autoport_history_migration_*`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from prometheus_client.core import GaugeMetricFamily

from autoport.history import partitions, repository, service
from autoport.kit.clock import MICROS
from autoport.kit.db import Database, Row

log = structlog.get_logger("autoport.history.migration")

BATCH_ROWS = 2000
LEASE_US = 30 * MICROS
# PostgreSQL: how long the old table stays after a pass found it empty. During a rolling
# upgrade replicas of the previous version still write it (docs/operations.md,
# Upgrades); a later pass moves what they wrote. SQLite has one process: no wait.
DROP_AFTER_US = 600 * MICROS
# Between two batches: ingestion's transactions get in (SQLite has one writer).
PAUSE_SECONDS = 0.01
# Weight of the last batch in the rate shown (an exponential average over batches).
_RATE_WEIGHT = 0.2

Key = tuple[str, str, str, str, int, str]


class LeaseLost(Exception):
    """Another mover holds the lease now: this one stops."""


@dataclass(frozen=True, slots=True)
class Progress:
    """The move's figures, as stored (any process reads the same)."""

    total: int | None  # rows when the move started; None before it did
    moved: int
    started_at: int | None
    updated_at: int | None
    rate: float  # points per second, recently
    done_at: int | None  # when the old table was dropped
    lease_until: int | None
    drop_at: int | None = None  # all moved: when the (empty) old table goes

    @property
    def done(self) -> bool:
        return self.done_at is not None

    @property
    def left(self) -> int | None:
        if self.done:
            return 0
        return None if self.total is None else max(self.total - self.moved, 0)

    @property
    def seconds_left(self) -> float | None:
        left = self.left
        if self.done or left is None or self.rate <= 0:
            return None
        return left / self.rate

    def to_json(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "total": self.total,
            "moved": self.moved,
            "left": self.left,
            "points_per_second": round(self.rate, 1),
            "seconds_left": None if self.seconds_left is None else round(self.seconds_left, 1),
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "drop_at": self.drop_at,
            "done_at": self.done_at,
        }

    def line(self, now_us: int | None = None) -> str:
        """One line for people: what is moved, how fast, how long still."""
        if self.done_at == 0:
            return "history migration: nothing to move (no row-per-point table)"
        if self.done:
            return f"history migration done: {self.moved:,} points moved"
        if self.total is None:
            return "history migration not started yet"
        if self.drop_at is not None:
            text = f"history migration: all {self.moved:,} points moved; the old table goes"
            if now_us is None:
                return text + " soon"
            return text + f" in {duration(max(self.drop_at - now_us, 0) / MICROS)}"
        share = self.moved / self.total if self.total else 1.0
        text = f"history migration: {self.moved:,} of {self.total:,} points moved ({share:.1%})"
        if self.rate > 0:
            text += f", {self.rate:,.0f} points/s"
        if self.seconds_left is not None:
            text += f", about {duration(self.seconds_left)} left"
        return text


def duration(value: float) -> str:
    seconds = round(value)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


async def metric_families(db: Database) -> list[Any]:
    """The move's progress for `/metrics`, read from the database (any process answers
    for the deployment)."""
    found = await progress(db)
    families = []
    for name, text, value in (
        ("done", "1 once the old row-per-point history is moved (or there was none).",
         1.0 if found.done else 0.0),
        ("moved_points", "Points moved out of the old table so far (or pruned by retention).",
         float(found.moved)),
        ("left_points", "Points left in the old table (0 once done).", float(found.left or 0)),
        ("points_per_second", "Points moved per second, recently (0 when not moving).",
         found.rate if not found.done else 0.0),
        ("seconds_left", "Estimated seconds until the move is done (0 when done or unknown).",
         found.seconds_left or 0.0),
    ):  # fmt: skip
        family = GaugeMetricFamily(f"autoport_history_migration_{name}", text)
        family.add_metric([], value)
        families.append(family)
    return families


def _int(state: dict[str, str], name: str) -> int | None:
    value = state.get(name)
    return None if value is None else int(value)


async def progress(db: Database) -> Progress:
    """The move's progress; done without a move when the old table never held a row
    (or is gone)."""
    state = await repository.get_state(db.reader)
    done_at = _int(state, "legacy_done_at")
    if (
        done_at is None
        and "legacy_total" not in state
        and not await repository.legacy_table_exists(db.reader)
    ):
        done_at = 0  # nothing was ever there to move
    return Progress(
        total=_int(state, "legacy_total"),
        moved=_int(state, "legacy_moved") or 0,
        started_at=_int(state, "legacy_started_at"),
        updated_at=_int(state, "legacy_updated_at"),
        rate=float(state.get("legacy_rate", "0")),
        done_at=done_at,
        lease_until=_int(state, "legacy_lease"),
        drop_at=None if done_at is not None else _int(state, "legacy_drop_at"),
    )


class Mover:
    """Moves the old table's rows a batch at a time while it holds the lease."""

    def __init__(
        self,
        db: Database,
        *,
        target: int,
        now_us: Callable[[], int],
        batch: int = BATCH_ROWS,
        lease_us: int = LEASE_US,
        drop_after_us: int | None = None,
    ) -> None:
        self.db = db
        if drop_after_us is None:
            drop_after_us = DROP_AFTER_US if db.dialect == "postgresql" else 0
        self.drop_after_us = drop_after_us
        # All moved, the table not dropped yet: nothing to do until `drop_at`.
        self.waiting = False
        self.target = target
        self.now_us = now_us
        self.batch = batch
        self.lease_us = lease_us
        self.held: int | None = None  # the lease's value while held
        self.after: Key | None = None  # the last key moved by this mover
        self.rate = 0.0
        self.last_batch_at: float | None = None
        self.done = False

    async def claim(self) -> bool:
        """Take the lease if it is free or ran out (or renew it); counts the rows to
        move when this is the move's start."""
        now = self.now_us()
        until = now + self.lease_us
        async with self.db.transaction() as conn:
            if self.held is not None and await repository.renew_lease(
                conn, held=self.held, until=until
            ):
                self.held = until
                return True
            if not await repository.claim_lease(conn, now=now, until=until):
                self.held = None
                return False
        self.held = until
        state = await repository.get_state(self.db.reader)
        if "legacy_total" not in state:
            total = await repository.count_legacy(self.db.reader)
            async with self.db.transaction() as conn:
                await repository.start_state(
                    conn,
                    {
                        "legacy_total": str(total),
                        "legacy_moved": "0",
                        "legacy_started_at": str(now),
                    },
                )
        return True

    async def release(self) -> None:
        if self.held is not None:
            async with self.db.transaction() as conn:
                await repository.release_lease(conn, held=self.held)
            self.held = None

    async def _rows(self) -> list[Row]:
        reader = self.db.reader
        rows = await repository.list_legacy_batch(reader, after=self.after, limit=self.batch)
        if len(rows) == self.batch:
            rows += await repository.list_legacy_tie(reader, key=_key(rows[-1]))
        return rows

    async def step(self) -> int:
        """Move one batch; returns the rows moved (0 and `done` when the table is gone).
        Raises LeaseLost when another mover took over."""
        if self.done:
            return 0
        if self.held is None:
            raise LeaseLost
        rows = await self._rows()
        self.waiting = False
        if not rows:
            if self.after is not None:
                # To the end once: start over for rows behind the key (an old version's
                # process still writing), dropping the table when none is left.
                self.after = None
                return 0
            await self._finish()
            return 0
        by_series: dict[tuple[str, str, str, str], list[Row]] = {}
        for row in rows:
            names = (
                str(row["environment"]),
                str(row["vin"]),
                str(row["capability"]),
                str(row["property"]),
            )
            by_series.setdefault(names, []).append(row)
        plans = []
        for names, mine in by_series.items():
            points = sorted(
                (service.old_point(row) for row in mine), key=lambda p: (p.timestamp, p.order)
            )
            sid = service.series_id(*names)
            plan = await service.plan_merge(
                self.db.reader, sid, points, target=self.target, new_first=True
            )
            plans.append((names, sid, plan))
            await asyncio.sleep(0)  # encoding is CPU: let requests in between series
        await partitions.ensure(
            self.db, [values["received_max"] for *_, plan in plans for values in plan.add]
        )
        now = self.now_us()
        async with self.db.transaction() as conn:
            if not await repository.renew_lease(conn, held=self.held, until=now + self.lease_us):
                self.held = None
                raise LeaseLost
            for (environment, vin, capability, prop), sid, plan in plans:
                await repository.add_series(
                    conn,
                    id=sid,
                    environment=environment,
                    vin=vin,
                    capability=capability,
                    prop=prop,
                )
                await service.apply_plan(conn, sid, plan)
            if await repository.delete_legacy(conn, ids=[int(r["id"]) for r in rows]) != len(rows):
                raise service.SealConflict  # retention took some meanwhile: read again
            await repository.add_to_state(conn, name="legacy_moved", amount=len(rows))
            await repository.delete_state(conn, name="legacy_drop_at")  # not empty after all
            await repository.set_state(conn, name="legacy_rate", value=f"{self._rate(len(rows))}")
            await repository.set_state(conn, name="legacy_updated_at", value=str(now))
        self.held = now + self.lease_us
        self.after = _key(rows[-1])
        return len(rows)

    def _rate(self, moved: int) -> float:
        clock = time.monotonic()
        if self.last_batch_at is not None and clock > self.last_batch_at:
            current = moved / (clock - self.last_batch_at)
            self.rate = (
                current
                if not self.rate
                else (_RATE_WEIGHT * current + (1 - _RATE_WEIGHT) * self.rate)
            )
        self.last_batch_at = clock
        return round(self.rate, 1)

    async def _finish(self) -> None:
        """The old table was found empty: drop it, or note when (PostgreSQL)."""
        now = self.now_us()
        drop_at = _int(await repository.get_state(self.db.reader), "legacy_drop_at")
        if drop_at is None and self.drop_after_us:
            drop_at, until = now + self.drop_after_us, now + self.lease_us
            async with self.db.transaction() as conn:
                if not await repository.renew_lease(conn, held=self.held or 0, until=until):
                    raise LeaseLost
                await repository.start_state(conn, {"legacy_drop_at": str(drop_at)})
            self.held = until
        if self.drop_after_us and drop_at is not None and now < drop_at:
            self.waiting = True
            return
        try:
            async with self.db.transaction() as conn:
                gone = await repository.drop_legacy_if_empty(conn)
                if gone:
                    await repository.set_state(conn, name="legacy_done_at", value=str(now))
                    await repository.set_state(conn, name="legacy_rate", value="0")
                    await repository.delete_state(conn, name="legacy_drop_at")
        except Exception as error:  # its lock not granted in 200 ms: at the next step
            log.info("old history table not dropped yet", error=str(error))
            return
        if gone:
            service.forget_old_table(self.db)
            await self.release()
            self.done = True

    async def run(self, *, seconds: float, pause: float = PAUSE_SECONDS) -> bool:
        """Move batches for about `seconds` (or until done); True if there is more."""
        started = time.monotonic()
        while not self.done and time.monotonic() - started < seconds:
            with contextlib.suppress(service.SealConflict, service.ChunkGone):
                # Else a seal or retention changed what the batch replaces: read again.
                await self.step()
            if self.waiting:
                return False  # all moved: look again at the next round
            await asyncio.sleep(pause)
        return not self.done


async def move_round(db: Database, mover: Mover, *, seconds: float) -> bool:
    """The history worker's round: batches for about `seconds` if there is an old
    table and this process can hold the lease; True when there is more right away."""
    if mover.done or service.old_table_gone(db):
        return False
    if not await repository.legacy_table_exists(db.reader):
        service.forget_old_table(db)
        mover.done = True
        return False
    if not await mover.claim():
        return False
    try:
        return await mover.run(seconds=seconds)
    except LeaseLost:
        return False


def _key(row: Row) -> Key:
    return (
        str(row["environment"]),
        str(row["vin"]),
        str(row["capability"]),
        str(row["property"]),
        int(row["timestamp"]),
        str(row["digest"]),
    )
