"""`autoport history ...`: the move of the old row-per-point history into chunks
(autoport.history.migration; docs/operations.md, History migration)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Annotated

import typer

from autoport.config import Settings
from autoport.history import migration
from autoport.kit.cli import JsonOption, note, output, print_json, run
from autoport.kit.clock import now_us
from autoport.kit.db import Database

app = typer.Typer(
    name="history",
    help="The data-point history: moving the row-per-point table of versions before "
    "0020 into compressed chunks.",
    no_args_is_help=True,
)

# How often a progress line is written when stderr is not a terminal (a log file).
LINE_SECONDS = 10.0


@app.command("status")
def status(as_json: JsonOption = False) -> None:
    """How far the move is: points moved and left, points/s, time left."""

    async def work(db: Database, settings: Settings) -> migration.Progress:
        return await migration.progress(db)

    found = run(work)
    output(found.to_json(), as_json, lambda _: found.line())


class _Shown:
    """Progress on stderr: rewritten in place on a terminal, a line now and then
    otherwise."""

    def __init__(self) -> None:
        self.terminal = sys.stderr.isatty()
        self.last = 0.0

    def show(self, text: str, *, final: bool = False) -> None:
        clock = time.monotonic()
        if self.terminal:
            sys.stderr.write("\r\033[K" + text + ("\n" if final else ""))
            sys.stderr.flush()
        elif final or clock - self.last >= LINE_SECONDS:
            note(text)
        self.last = clock


@app.command("migrate")
def migrate(
    batch: Annotated[
        int,
        typer.Option(min=100, max=100_000, help="Rows moved per transaction (each a short write)."),
    ] = migration.BATCH_ROWS,
    drop_now: Annotated[
        bool,
        typer.Option(
            "--drop-now",
            help="PostgreSQL: drop the old table as soon as it is empty, without waiting "
            "10 minutes for what replicas of the previous version may still write to it "
            "(only when none runs any more).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Move the old row-per-point history into chunks now, in the foreground, with its
    progress on stderr; the history worker does the same in the background, and only
    one of them moves at a time (this command follows the other's progress meanwhile).
    Servers keep answering throughout. Interrupt it any time: the next run (or the
    worker) carries on. It ends when the old table is dropped: on PostgreSQL 10 minutes
    after it was found empty, unless --drop-now."""

    async def work(db: Database, settings: Settings) -> migration.Progress:
        mover = migration.Mover(
            db,
            target=settings.history_chunk_points,
            now_us=now_us,
            batch=batch,
            drop_after_us=0 if drop_now else None,
        )
        shown = _Shown()
        following = False
        try:
            while True:
                found = await migration.progress(db)
                if found.done:
                    break
                if await mover.claim():
                    following = False
                    with contextlib.suppress(migration.LeaseLost):
                        await mover.run(seconds=1.0)
                    if mover.waiting:
                        await asyncio.sleep(1.0)
                else:
                    if not following:
                        shown.show(
                            "another process is moving the history (the history worker?): "
                            "following its progress",
                            final=True,
                        )
                        following = True
                    await asyncio.sleep(1.0)
                shown.show((await migration.progress(db)).line(now_us()))
        finally:
            await mover.release()
        shown.show(found.line(), final=True)
        return found

    done = run(work)
    if as_json:
        print_json(done.to_json())
