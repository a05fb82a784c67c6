"""What one vehicle command costs, phase by phase, in process (no network, no load
generator): SQL statements, outbox rows and CPU time of the accept (POST), the claim
and the execution (connector + finish), with an optional cProfile of each phase.

    python -m bench._commands_profile               # 300 sandbox cars, one command each
    python -m bench._commands_profile --profile     # and the top functions of each phase

The worker functions are the real ones (autoport.commands.tasks), driven here one phase
at a time so that each phase is measured alone.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import io
import pstats
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from bench.commands import KINDS, bearer_headers, prepare


class Statements:
    """Counts the SQL statements run on a SQLite database's connections."""

    def __init__(self) -> None:
        self.count = 0
        self.kinds: collections.Counter[str] = collections.Counter()

    def __call__(self, sql: str) -> None:
        self.count += 1
        self.kinds[" ".join(sql.split()[:3])[:60]] += 1

    def attach(self, *raws: sqlite3.Connection) -> None:
        for raw in raws:
            raw.set_trace_callback(self)


async def _phase(
    name: str,
    commands: int,
    run: Callable[[], Awaitable[Any]],
    statements: Statements,
    outbox_rows: Callable[[], Awaitable[int]],
    profile: bool,
) -> None:
    before_rows = await outbox_rows()
    statements.count = 0
    statements.kinds.clear()
    profiler = cProfile.Profile() if profile else None
    started = time.process_time()
    if profiler is not None:
        profiler.enable()
    await run()
    if profiler is not None:
        profiler.disable()
    cpu = time.process_time() - started
    count, kinds = statements.count, dict(statements.kinds)
    rows = await outbox_rows() - before_rows
    print(
        f"{name:<10} {cpu / commands * 1000:6.2f} ms CPU, {count / commands:5.1f} statements, "
        f"{rows / commands:4.1f} outbox rows per command"
    )
    for kind, n in sorted(kinds.items(), key=lambda item: -item[1])[:12]:
        print(f"    {n / commands:5.2f}  {kind}")
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(35)
        print(out.getvalue())


async def measure(data_dir: Path, cars: int, profile: bool) -> None:
    from autoport.app import create_app
    from autoport.commands import tasks
    from autoport.kit.db import SqliteDatabase
    from bench._pull_apps import bench_settings

    setup = await prepare(data_dir, cars)
    settings = bench_settings(data_dir).model_copy(
        update={"vehicle_command_rate_limit": "100000000/minute"}
    )
    app = create_app(settings, run_background=False)
    async with app.router.lifespan_context(app):
        state = app.state.autoport
        db = state.database
        assert isinstance(db, SqliteDatabase)
        statements = Statements()
        statements.attach(db._writer.raw, db._reader.raw)  # type: ignore[union-attr]

        async def outbox_rows() -> int:
            return int(await db.fetch_value("SELECT count(*) FROM outbox") or 0)

        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            headers = await bearer_headers(client, "", setup)
            capability, command, arguments = KINDS[0]
            # One warm-up command (caches, prepared statements), executed.
            await client.post(
                f"/sandbox/v1/vehicle-commands/autoapi-13/{setup.vins[0]}",
                headers=headers,
                json={"capability": capability, "command": command, "arguments": arguments[1]},
            )
            for row in await tasks.claim(state, "warm", 10):
                await tasks.execute(state, row)
            vins = setup.vins[1:]
            n = len(vins)

            async def send() -> None:
                for vin in vins:
                    answer = await client.post(
                        f"/sandbox/v1/vehicle-commands/autoapi-13/{vin}",
                        headers=headers,
                        json={
                            "capability": capability,
                            "command": command,
                            "arguments": arguments[0],
                        },
                    )
                    assert answer.status_code == 202, answer.text

            claimed: list[Any] = []

            async def claim() -> None:
                while len(claimed) < n:
                    claimed.extend(await tasks.claim(state, "profile", 64))

            async def execute() -> None:
                # As the worker runs them: side by side, the answers recorded in batches.
                finisher = tasks.Finisher(state)
                await asyncio.gather(
                    *(tasks.execute_batched(state, finisher, row) for row in claimed)
                )

            await _phase("accept", n, send, statements, outbox_rows, profile)
            await _phase("claim", n, claim, statements, outbox_rows, profile)
            await _phase("execute", n, execute, statements, outbox_rows, profile)
            statuses = await db.fetch_all(
                "SELECT status, count(*) AS n FROM vehicle_commands GROUP BY status"
            )
            print("statuses:", {row["status"]: row["n"] for row in statuses})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cars", type=int, default=300)
    parser.add_argument("--profile", action="store_true", help="cProfile each phase")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-commands-profile-"))
    try:
        asyncio.run(measure(data_dir, args.cars, args.profile))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
