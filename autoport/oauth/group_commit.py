"""Group commit for the token endpoint's hot paths.

On SQLite a commit (writing the touched pages to the WAL) is most of what a token
costs, and requests that arrive while one commit is in flight can share the next. Each
piece of work runs in its own SAVEPOINT inside the shared transaction, so one request's
failure rolls back only its own writes; every caller gets its own result or exception,
and only after the transaction has committed. A lone request waits for nothing but its
own commit. The same holds on PostgreSQL, where it saves round trips and WAL flushes.

Work functions must be self-contained (`conn` first argument, nothing awaited but the
connection) and must not commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from autoport.kit.db import Connection, Database
from autoport.kit.state import AppState, parts_of

T = TypeVar("T")
Work = Callable[[Connection], Awaitable[Any]]

# Bounds the time the write lock is held by one batch.
MAX_BATCH = 128


class GroupCommit:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.pending: list[tuple[Work, asyncio.Future[Any]]] = []
        self.task: asyncio.Task[None] | None = None

    async def run(self, work: Callable[[Connection], Awaitable[T]]) -> T:
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending.append((work, done))
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._flush())
        result: T = await done
        return result

    async def _flush(self) -> None:
        batch: list[tuple[Work, asyncio.Future[Any]]] = []
        try:
            while self.pending:
                batch, self.pending = self.pending[:MAX_BATCH], self.pending[MAX_BATCH:]
                outcomes: list[tuple[bool, Any]] = []
                try:
                    async with self.db.transaction() as conn:
                        for index, (work, _) in enumerate(batch):
                            outcomes.append(await _in_savepoint(conn, index, work))
                except Exception as error:  # the commit itself failed: nobody's work stands
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(error)
                    continue
                for (_, done), (ok, value) in zip(batch, outcomes, strict=True):
                    if done.done():
                        continue
                    if ok:
                        done.set_result(value)
                    else:
                        done.set_exception(value)
        finally:
            # Cancelled (shutdown): nobody may wait forever.
            for _, done in [*batch, *self.pending]:
                if not done.done():
                    done.set_exception(RuntimeError("the token store is shutting down"))
            self.pending = []


async def _in_savepoint(conn: Connection, index: int, work: Work) -> tuple[bool, Any]:
    name = f"grp{index}"
    await conn.execute(f"SAVEPOINT {name}")
    try:
        value = await work(conn)
    except Exception as error:
        await conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
        await conn.execute(f"RELEASE SAVEPOINT {name}")
        return False, error
    await conn.execute(f"RELEASE SAVEPOINT {name}")
    return True, value


class GroupCommitParts(Protocol):
    """The part the token grants take (autoport.state.Parts; mypy checks it has it):
    one group commit per app, whose one database its batches share."""

    @property
    def group_commit(self) -> GroupCommit: ...


def group_commit_of(state: AppState) -> GroupCommit:
    parts: GroupCommitParts = parts_of(state)
    return parts.group_commit
