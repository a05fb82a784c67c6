"""Issue #32 item 6: nobody else on the machine reads the data. The data directory is
created 0700, the SQLite database and its -wal/-shm files 0600 (an older installation's
are narrowed), `secrets.json` 0600; a backup records the modes and a restore keeps them.
On PostgreSQL, `autoport restore --force` refuses while any autoport process holds the
schema. Real processes, the CLI as operators run it."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import stat
import tarfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from autoport.kit.db import create_database
from tests.backup.live import Backend, Receiver, new_backend, populate, running

PULL = "/v1/vehicle-data/autoapi-13/WBA12345678901234/history?property=diagnostics.odometer"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@contextlib.contextmanager
def umask(value: int) -> Iterator[None]:
    """The usual umask (022), which leaves new files readable by everyone, for this
    process and the commands it starts."""
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def test_a_new_data_directory_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    with umask(0o022):
        backend = Backend("sqlite", tmp_path / "new" / "data")
        backend.cli("init")
        assert mode(backend.data_dir) == 0o700
        assert mode(backend.data_dir / "autoport.db") == 0o600
        assert mode(backend.data_dir / "secrets.json") == 0o600

        async def opened() -> dict[str, int]:
            db = create_database(f"sqlite:///{backend.data_dir / 'autoport.db'}")
            await db.connect()
            try:
                await db.fetch_value("SELECT count(*) FROM applications")
                return {
                    name: mode(backend.data_dir / name)
                    for name in ("autoport.db-wal", "autoport.db-shm")
                }
            finally:
                await db.close()

        # SQLite makes its WAL files with the database file's mode.
        assert asyncio.run(opened()) == {"autoport.db-wal": 0o600, "autoport.db-shm": 0o600}


def test_an_older_installation_is_narrowed(tmp_path: Path) -> None:
    """What an earlier autoport left (0755, 0644) is narrowed at the next start."""
    with umask(0o022):
        backend = Backend("sqlite", tmp_path / "old" / "data")
        backend.cli("init")
        backend.data_dir.chmod(0o755)
        for name in ("autoport.db", "secrets.json"):
            (backend.data_dir / name).chmod(0o644)
        (backend.data_dir / "autoport.db-wal").write_bytes(b"")
        (backend.data_dir / "autoport.db-wal").chmod(0o644)
        backend.cli("init")
        assert mode(backend.data_dir) == 0o700
        assert mode(backend.data_dir / "autoport.db") == 0o600
        assert mode(backend.data_dir / "autoport.db-wal") == 0o600


def test_a_backup_records_the_modes_and_a_restore_keeps_them(tmp_path: Path) -> None:
    with umask(0o022):
        source = Backend("sqlite", tmp_path / "source" / "data")
        source.cli("init")
        archive = tmp_path / "backups" / "a.tar.gz"
        manifest = json.loads(source.cli("backup", str(archive), "--json").stdout)
        assert {name: meta["mode"] for name, meta in manifest["files"].items()} == {
            "autoport.db": "0600",
            "secrets.json": "0600",
        }
        assert mode(archive) == 0o600
        with tarfile.open(archive) as tar:
            assert {m.name: stat.S_IMODE(m.mode) for m in tar.getmembers()} == {
                "manifest.json": 0o600,
                "autoport.db": 0o600,
                "secrets.json": 0o600,
            }
        target = Backend("sqlite", tmp_path / "target" / "data")
        target.cli("restore", str(archive))
        assert mode(target.data_dir) == 0o700
        assert mode(target.data_dir / "autoport.db") == 0o600
        assert mode(target.data_dir / "secrets.json") == 0o600

        # A manifest recording a wider mode is not followed: nothing is restored wider
        # than 0600.
        wide = tmp_path / "wide.tar.gz"
        with tarfile.open(archive) as tar, tarfile.open(wide, "w:gz") as out:
            for member in tar.getmembers():
                data = tar.extractfile(member)
                assert data is not None
                body = data.read()
                if member.name == "manifest.json":
                    edited = json.loads(body)
                    for meta in edited["files"].values():
                        meta["mode"] = "0666"
                    body = json.dumps(edited).encode()
                    member.size = len(body)
                member.mode = 0o666
                out.addfile(member, io.BytesIO(body))
        again = Backend("sqlite", tmp_path / "again" / "data")
        again.cli("restore", str(wide))
        assert mode(again.data_dir / "autoport.db") == 0o600
        assert mode(again.data_dir / "secrets.json") == 0o600


# A server, a backup and three restores: 220 s measured at a load average of 20.
@pytest.mark.timeout(500)
def test_restore_force_on_postgresql_refuses_while_autoport_holds_the_schema(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A second host (its own data directory, the same database and schema) runs
    `restore --force` while a server serves the schema: refused (exit 2) naming who
    holds it, and nothing restored: the server goes on with what it had. A bare
    connected process (a worker, a command) holds it too; with nobody left, the restore
    runs."""
    source = new_backend("postgresql", tmp_path / "source" / "data", request)
    receiver = Receiver()
    archive = tmp_path / "a.tar.gz"
    other_host = Backend(
        "postgresql", tmp_path / "other" / "data", source.database_url, source.schema
    )
    try:
        with running(source) as base:
            world = populate(source, base, receiver)
            source.cli("backup", str(archive))
            refused = other_host.cli("restore", "--force", str(archive), check=False)
            assert refused.returncode == 2, refused.stderr
            assert "stop every `autoport serve`" in refused.stderr
            assert "autoport " in refused.stderr.split("(", 1)[1]  # the holders, named
            assert not (other_host.data_dir / "secrets.json").exists()
            token = {"Authorization": f"Bearer {world.vehicle.access_token}"}
            assert httpx.get(f"{base}{PULL}", headers=token, timeout=10).status_code == 200
    finally:
        receiver.close()

    async def while_connected() -> int:
        db = source.database()
        await db.connect()
        try:
            return other_host.cli("restore", "--force", str(archive), check=False).returncode
        finally:
            await db.close()

    assert asyncio.run(while_connected()) == 2
    restored = other_host.cli("restore", "--force", str(archive), check=False)
    assert restored.returncode == 0, restored.stderr
