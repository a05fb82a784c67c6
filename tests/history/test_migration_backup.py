"""`autoport backup` and `autoport restore` across the move of the old history table:
a backup taken in the middle of the move restores with the move's progress and finishes
there; one taken after it restores the chunks alone; an older backup (0019, the old
table full) is migrated forward and moved. Every point is there exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest

from autoport.config import Settings, ensure_secrets
from autoport.history import migration, repository
from autoport.kit.clock import now_us
from autoport.kit.migrate import upgrade
from tests.backup.live import Backend, empty_backend_like
from tests.history.old_layout import (
    Place,
    everything,
    expected_export,
    fill,
    first_copies,
    old_layout,
    old_rows,
    vin,
)

VINS = [vin(n) for n in range(3)]


async def _export_of(backend: Backend) -> dict[str, list[tuple[object, ...]]]:
    db = backend.database()
    await db.connect()
    try:
        return await everything(db, VINS)
    finally:
        await db.close()


def _status(backend: Backend) -> dict[str, object]:
    return dict(orjson.loads(backend.cli("history", "status", "--json").stdout))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_backups_in_the_middle_of_the_move_and_after_it_restore_every_point(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rows = old_rows(vehicles=3, seconds=100)
    total = len(first_copies(rows))
    expected = {number: expected_export(rows, number) for number in VINS}
    async with old_layout(kind, tmp_path / "source", rows) as place:
        ensure_secrets(Settings(data_dir=place.data_dir))
        source = Backend(kind, place.data_dir, place.schema and place.url, place.schema)
        db = place.database()
        await db.connect()
        try:
            mover = migration.Mover(db, target=100, now_us=now_us, batch=300, drop_after_us=0)
            assert await mover.claim()
            moved = sum([await mover.step() for _ in range(3)])
            await mover.release()  # as a worker stopping does
            middle = tmp_path / "middle.tar.gz"
            source.cli("backup", str(middle))

            # (Its PostgreSQL database is made with asyncio.run of its own: in a thread.)
            restored = await asyncio.to_thread(
                empty_backend_like, source, tmp_path / "restored" / "data", request
            )
            restored.cli("restore", str(middle))
            status = _status(restored)
            assert (status["done"], status["total"], status["moved"]) == (False, total, moved)
            assert await _export_of(restored) == expected  # the old table and chunks
            done = orjson.loads(restored.cli("history", "migrate", "--json", "--drop-now").stdout)
            assert (done["done"], done["moved"]) == (True, total)
            assert await _export_of(restored) == expected

            # The source finishes too; a backup after the move holds the chunks alone.
            while not mover.done:
                assert await mover.claim()
                await mover.step()
            after = tmp_path / "after.tar.gz"
            source.cli("backup", str(after))
            again = await asyncio.to_thread(
                empty_backend_like, source, tmp_path / "again" / "data", request
            )
            again.cli("restore", str(after))
            assert _status(again)["done"] is True
            copy = again.database()
            await copy.connect()
            try:
                assert not await repository.legacy_table_exists(copy.reader)
            finally:
                await copy.close()
            assert await _export_of(again) == expected
            assert await everything(db, VINS) == expected
        finally:
            await db.close()


@pytest.mark.timeout(600)
async def test_an_older_backup_with_a_full_old_table_is_migrated_forward_and_moved(
    tmp_path: Path,
) -> None:
    from autoport.backup import service as backups

    rows = old_rows(vehicles=3, seconds=60)
    data_dir = tmp_path / "old" / "data"
    data_dir.mkdir(parents=True)
    url = f"sqlite:///{data_dir / 'autoport.db'}"
    await upgrade(url, revision="0019")
    await fill(Place(data_dir, url, None), rows)
    settings, _ = ensure_secrets(Settings(data_dir=data_dir))
    archive = tmp_path / "0019.tar.gz"
    backups.create_backup(settings, archive, progress=lambda _: None)
    assert backups.read_manifest(archive).schema_revision == "0019"

    target = Backend("sqlite", tmp_path / "target" / "data")
    assert "migrating forward from 0019" in target.cli("restore", str(archive)).stderr
    status = _status(target)
    assert status["done"] is False  # the old table is there, its move not started
    migrated = target.cli("history", "migrate", "--json")
    assert orjson.loads(migrated.stdout)["moved"] == len(first_copies(rows))
    assert await _export_of(target) == {number: expected_export(rows, number) for number in VINS}
