"""No acknowledged point is lost when a sealing worker, or a mover of the old table, is
killed with SIGKILL.

Points are stored (acknowledged: their ingestion transaction committed), then a worker
process seals them into chunks (or moves an upgraded installation's old table) while
this test kills it with SIGKILL at random moments, again and again, and starts it anew;
at the end one worker (or `autoport history migrate`) finishes. Every point is then read
back exactly once, with its value and arrival."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from autoport.config import Settings
from autoport.history import migration, repository
from autoport.history import service as history
from autoport.kit.clock import to_iso
from autoport.kit.db import Database
from tests.history import old_layout

ENV, VIN = "production", "WBA00000000000009"
KEYS = [("charging", "battery_level"), ("diagnostics", "odometer"), ("charging", "status")]
START = 1_767_225_600_000_000
POINTS_PER_SERIES = 6000

# The worker: seals every series' points, chunk target small, so one run writes many
# chunks; prints "sealing" once connected (the test kills it only after that line: a
# worker killed while it starts up has tested nothing), exits when all is sealed.
WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from autoport.history import service as history
    from autoport.kit.db import create_database

    async def main(url, schema, ids):
        db = create_database(url, schema=schema or None, pool_size=2)
        await db.connect()
        try:
            print("sealing", flush=True)
            for sid in ids:
                while await history.seal_series(db, sid, before=history.FAR_FUTURE, target=50):
                    pass
        finally:
            await db.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]))
    """
)
KILLS = 6  # killed mid-seal, of which at least one after a series was sealed
KILLING_FOR = 300.0  # seconds at most (a loaded machine's start-ups take seconds)


def _value(key: tuple[str, str], i: int) -> bytes:
    at = to_iso(START + i * 1_000_000)
    if key[1] == "status":
        return orjson.dumps({"data": "charging" if i % 97 else "not_charging", "timestamp": at})
    return orjson.dumps({"data": round(i * 0.37, 2), "timestamp": at})


async def _store(
    db: Database, sent: dict[tuple[str, str], list[tuple[int, str, int]]], first: int
) -> None:
    """Store (acknowledge) the points `first` to `first + POINTS_PER_SERIES` of each series."""
    for offset in range(first, first + POINTS_PER_SERIES, 500):
        received = START + offset * 1_000_000 + 7
        rows = []
        for key in KEYS:
            for i in range(offset, offset + 500):
                value = _value(key, i)
                digest = hashlib.blake2b(value, digest_size=8).hexdigest()
                rows.append((key[0], key[1], START + i * 1_000_000, digest, value.decode()))
                sent[key].append((START + i * 1_000_000, value.decode(), received))
        async with db.transaction() as conn:
            await history.append(conn, environment=ENV, vin=VIN, received_at=received, points=rows)


@pytest.mark.xdist_group("heavy")
@pytest.mark.timeout(600)  # worker start-ups take seconds each on a shared machine
async def test_killing_the_sealer_loses_no_point(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    """Each worker is killed at a random moment between its signal that sealing has
    started and the time a whole run took when one was last left to finish (so kills
    land before, within and between the series' transactions); when a run has sealed
    everything, the next points are stored. Until enough kills have landed, bounded by
    time."""
    sent: dict[tuple[str, str], list[tuple[int, str, int]]] = {key: [] for key in KEYS}
    stored = 0
    await _store(database, sent, stored)
    stored += POINTS_PER_SERIES
    ids = [str(history.series_id(ENV, VIN, c, p)) for c, p in KEYS]
    url = settings.resolved_database_url
    script = tmp_path / "sealer.py"
    script.write_text(WORKER)
    rng = random.Random(9)
    kills = after_a_series = runs = 0
    run_takes = 2.0  # seconds from the signal to the end of a whole run, until one is seen
    deadline = asyncio.get_running_loop().time() + KILLING_FOR
    while (kills < KILLS or not after_a_series) and asyncio.get_running_loop().time() < deadline:
        hot = await database.fetch_value("SELECT count(*) FROM history_hot")
        if hot == 0:
            await _store(database, sent, stored)
            stored += POINTS_PER_SERIES
            hot = await database.fetch_value("SELECT count(*) FROM history_hot")
        worker = await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            url,
            settings.database_schema or "",
            *ids,
            stdout=asyncio.subprocess.PIPE,
        )
        assert worker.stdout is not None
        assert await asyncio.wait_for(worker.stdout.readline(), 120) == b"sealing\n"
        started = asyncio.get_running_loop().time()
        runs += 1
        try:
            await asyncio.wait_for(worker.wait(), rng.uniform(0.0, run_takes))
        except TimeoutError:
            os.kill(worker.pid, signal.SIGKILL)
            if await worker.wait() != -signal.SIGKILL:
                continue  # it finished just before the kill
            kills += 1
            left = await database.fetch_value("SELECT count(*) FROM history_hot")
            after_a_series += 0 < left < hot
        else:
            assert worker.returncode == 0
            run_takes = asyncio.get_running_loop().time() - started
    assert kills >= KILLS, f"{kills} kills landed mid-seal in {runs} runs"
    assert after_a_series, "no kill landed after a series was sealed"
    # One more run to the end; the leases of killed runs are not in the way (seal_series
    # is called directly, as a worker does after its claim).
    finished = await asyncio.create_subprocess_exec(
        sys.executable, str(script), url, settings.database_schema or "", *ids
    )
    assert await finished.wait() == 0
    assert await database.fetch_value("SELECT count(*) FROM history_hot") == 0
    for key in KEYS:
        read = []
        async for page in history.vehicle_history(
            database.reader, environment=ENV, vin=VIN, page_rows=1000
        ):
            read += [
                (p.timestamp, p.value, p.received_at)
                for p in page
                if (p.capability, p.property) == key
            ]
        assert read == sent[key], f"{key}: {len(read)} read of {len(sent[key])} stored"


# A mover of the old table: small batches and a short lease (a killed mover's lease runs
# out in half a second, so the next one starts soon); a pause between batches, as the
# worker's, so that a run lasts long enough to be killed in the middle.
MOVER = textwrap.dedent(
    """
    import asyncio, contextlib, sys
    from autoport.history import migration, service
    from autoport.kit.clock import now_us
    from autoport.kit.db import create_database

    async def main(url, schema):
        db = create_database(url, schema=schema or None, pool_size=2)
        await db.connect()
        try:
            mover = migration.Mover(
                db, target=50, now_us=now_us, batch=150, lease_us=500_000, drop_after_us=0
            )
            while not await mover.claim():
                await asyncio.sleep(0.05)
            while not mover.done:
                with contextlib.suppress(service.SealConflict, service.ChunkGone):
                    await mover.step()
                await asyncio.sleep(0.05)
        finally:
            await db.close()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


@pytest.mark.xdist_group("heavy")
@pytest.mark.timeout(600)  # 72 s alone at load 19, over 120 s beside other tests at 24
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_killing_the_mover_loses_no_point_and_readers_see_each_once(
    backend: str, tmp_path: Path
) -> None:
    """An upgraded installation's old table is moved by movers killed with SIGKILL at
    random moments, while this process reads every vehicle's history again and again
    (each read must hold every point exactly once); then `autoport history migrate`
    finishes the move and drops the table."""
    rows = old_layout.old_rows(vehicles=6, seconds=500)
    vins = [old_layout.vin(n) for n in range(6)]
    expected = {number: old_layout.expected_export(rows, number) for number in vins}
    newest = {
        (number, capability, prop): old_layout.expected_newest_first(rows, number, capability, prop)
        for number in vins[:2]
        for capability, prop in old_layout.PROPERTIES
    }
    async with old_layout.old_layout(backend, tmp_path, rows) as place:
        db = place.database()
        await db.connect()
        try:
            script = tmp_path / "mover.py"
            script.write_text(MOVER)
            moving = True
            reads = 0

            async def read_meanwhile() -> None:
                nonlocal reads
                rng = random.Random(4)
                while moving:
                    number = rng.choice(vins)
                    assert (await old_layout.everything(db, [number]))[number] == expected[number]
                    key = rng.choice(list(newest))
                    assert await old_layout.newest_first(db, *key) == newest[key]
                    reads += 1
                    await asyncio.sleep(0.01)

            reader = asyncio.create_task(read_meanwhile())
            rng = random.Random(11)
            kills = 0
            try:
                for _ in range(6):
                    before = (await migration.progress(db)).moved
                    worker = await asyncio.create_subprocess_exec(
                        sys.executable, str(script), place.url, place.schema or ""
                    )
                    # Killed at a random moment after its first batch committed (its
                    # start-up alone takes seconds on a loaded machine).
                    for _ in range(1200):
                        if (await migration.progress(db)).moved > before:
                            break
                        await asyncio.sleep(0.05)
                    await asyncio.sleep(rng.uniform(0.0, 0.6))
                    if worker.returncode is None:
                        os.kill(worker.pid, signal.SIGKILL)
                        kills += 1
                    await worker.wait()
                    assert not reader.done(), reader.exception()
            finally:
                moving = False
                await reader
            assert kills >= 3, "the mover finished before it could be killed: make it slower"
            assert reads >= 3
            left = await repository.count_legacy(db.reader)
            assert 0 < left < len(old_layout.first_copies(rows)), "killed movers moved nothing"
            finished = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "autoport", "history", "migrate", "--json", "--drop-now"],
                env=place.env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert finished.returncode == 0, finished.stderr
            assert "history migration done" in finished.stderr
            report = orjson.loads(finished.stdout)
            assert report["done"] is True
            assert report["moved"] == report["total"] == len(old_layout.first_copies(rows))
            assert not await repository.legacy_table_exists(db.reader)
            assert await old_layout.everything(db, vins) == expected
            for key, values in newest.items():
                assert await old_layout.newest_first(db, *key) == values
            assert await db.fetch_value("SELECT sum(count) FROM history_chunks") == len(
                old_layout.first_copies(rows)
            )
        finally:
            await db.close()
