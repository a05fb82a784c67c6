"""No acknowledged point is lost when a sealing worker is killed with SIGKILL.

Points are stored (acknowledged: their ingestion transaction committed), then a worker
process seals them into chunks while this test kills it with SIGKILL at random moments,
again and again, and starts it anew; at the end one worker finishes. Every point is then
read back exactly once, with its value and arrival."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import signal
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from autoport.config import Settings
from autoport.history import service as history
from autoport.kit.clock import to_iso
from autoport.kit.db import Database

ENV, VIN = "production", "WBA00000000000009"
KEYS = [("charging", "battery_level"), ("diagnostics", "odometer"), ("charging", "status")]
START = 1_767_225_600_000_000
POINTS_PER_SERIES = 6000

# The worker: seals every series' points, chunk target small, so one run writes many
# transactions; prints nothing, exits when all is sealed.
WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from autoport.history import service as history
    from autoport.kit.db import create_database

    async def main(url, schema, ids):
        db = create_database(url, schema=schema or None, pool_size=2)
        await db.connect()
        try:
            for sid in ids:
                while await history.seal_series(db, sid, before=history.FAR_FUTURE, target=50):
                    pass
        finally:
            await db.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]))
    """
)


def _value(key: tuple[str, str], i: int) -> bytes:
    at = to_iso(START + i * 1_000_000)
    if key[1] == "status":
        return orjson.dumps({"data": "charging" if i % 97 else "not_charging", "timestamp": at})
    return orjson.dumps({"data": round(i * 0.37, 2), "timestamp": at})


async def _store(db: Database) -> dict[tuple[str, str], list[tuple[int, str, int]]]:
    sent: dict[tuple[str, str], list[tuple[int, str, int]]] = {key: [] for key in KEYS}
    for offset in range(0, POINTS_PER_SERIES, 500):
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
    return sent


@pytest.mark.xdist_group("heavy")
async def test_killing_the_sealer_loses_no_point(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    sent = await _store(database)
    ids = [str(history.series_id(ENV, VIN, c, p)) for c, p in KEYS]
    url = settings.resolved_database_url
    script = tmp_path / "sealer.py"
    script.write_text(WORKER)
    rng = random.Random(9)
    kills = 0
    for _ in range(12):
        worker = await asyncio.create_subprocess_exec(
            sys.executable, str(script), url, settings.database_schema or "", *ids
        )
        await asyncio.sleep(rng.uniform(0.3, 1.5))
        if worker.returncode is None:
            os.kill(worker.pid, signal.SIGKILL)
            kills += 1
        await worker.wait()
    assert kills >= 3, "the worker finished before it could be killed: make it slower"
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
