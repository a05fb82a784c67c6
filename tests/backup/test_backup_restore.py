"""`autoport backup` of a live server under ingestion, `autoport restore` into a fresh
data directory (and, on PostgreSQL, a fresh database), a server started on it: every
acknowledged point, the application, its grant and webhook are there, and what was
issued before the backup (admin token, provider secret, vehicle token, webhook secret)
still works there. Real processes, real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import io
import json
import sqlite3
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from autoport.kit.migrate import expected_heads
from tests.backup.live import (
    Backend,
    Ingestor,
    Receiver,
    empty_backend_like,
    history,
    new_backend,
    populate,
    running,
)

# The code's migration head: a backup is made at it, and a restore ends at it.
(HEAD,) = expected_heads()


def wait_for(condition: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


# 21 s alone on a quiet machine; one run beside benchmarks at load average 7-9 took over
# the default 120 s (three processes: the server, the ingestor and the backup CLI).
@pytest.mark.timeout(360)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_backup_of_a_live_server_restores_everything(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    source = new_backend(kind, tmp_path / "source" / "data", request)
    receiver = Receiver()
    archive = tmp_path / "backups" / "autoport.tar.gz"
    try:
        with running(source) as base:
            world = populate(source, base, receiver)
            ingestor = Ingestor(base, world.provider_secret)
            ingestor.start()
            wait_for(lambda: len(ingestor.acked) >= 50)
            started = time.monotonic()
            result = source.cli("backup", str(archive), "--json")
            # The server kept ingesting during the backup and afterwards.
            count_at_end = len(ingestor.acked)
            wait_for(lambda: len(ingestor.acked) >= count_at_end + 20)
            ingestor.finish()
        assert ingestor.failed == 0
        manifest = json.loads(result.stdout)
        assert manifest["backend"] == kind
        assert manifest["schema_revision"] == HEAD
        assert manifest["format_version"] == 1
        assert "copying" in result.stderr or "pg_dump" in result.stderr  # progress shown
        with tarfile.open(archive) as tar:
            assert set(tar.getnames()) >= {"manifest.json", "secrets.json"}
        must_have = ingestor.acknowledged_before(started)
        assert len(must_have) >= 50

        target = empty_backend_like(source, tmp_path / "target" / "data", request)
        restored = target.cli("restore", str(archive))
        assert "restore complete" in restored.stderr
        assert (target.data_dir / "secrets.json").stat().st_mode & 0o777 == 0o600
        # A second restore onto it is refused without --force.
        again = target.cli("restore", str(archive), check=False)
        assert again.returncode == 2 and "--force" in again.stderr

        with running(target) as base:
            # Every point acknowledged before the backup began, read through the API
            # with the vehicle token issued before the backup (its hash needs the
            # restored token_hmac_key).
            found = history(base, world.vehicle.access_token)
            assert must_have <= found, sorted(must_have - found)[:10]
            # Nothing but acknowledged points (a snapshot never holds a half request).
            assert found <= {i for i, _ in ingestor.acked} | set(range(ingestor.next))
            # The admin token, the application, its grant and its webhook.
            admin = {"Authorization": f"Bearer {world.admin_token}"}
            apps = httpx.get(
                f"{base}/admin/v1/applications/{world.creds.app_id}", headers=admin, timeout=10
            )
            assert apps.status_code == 200, apps.text
            # The application's client secret (stored as a hash) still gets tokens.
            token = httpx.post(
                f"{base}/v1/access_tokens",
                data={"grant_type": "client_credentials", **world.creds.auth()},
                timeout=10,
            )
            assert token.status_code == 200, token.text
            # The grant: the refresh token issued before the backup still refreshes.
            refreshed = httpx.post(
                f"{base}/v1/access_tokens",
                data={
                    "grant_type": "refresh_token",
                    "refresh_token": world.vehicle.refresh_token,
                    **world.creds.auth(),
                },
                timeout=10,
            )
            assert refreshed.status_code == 200, refreshed.text
            # The provider secret still ingests.
            pushed = httpx.post(
                f"{base}/v1/ingest",
                json={
                    "vin": "WBA12345678901234",
                    "brand": "bmw",
                    "diagnostics": {
                        "odometer": {
                            "data": {"unit": "kilometers", "value": 999999.0},
                            "timestamp": "2027-01-01T00:00:00.000000Z",
                        }
                    },
                },
                headers={"Authorization": f"Bearer {world.provider_secret}"},
                timeout=10,
            )
            assert pushed.status_code == 200, pushed.text
            # The webhook: its secret was restored (sealed under the restored key), so
            # the ping signs with the secret the application was given.
            before = len(receiver.signed_with(world.webhook_secret))
            target.cli("webhooks", "set", world.creds.app_id, "--url", receiver.url)
            wait_for(lambda: len(receiver.signed_with(world.webhook_secret)) > before)
            assert "ping" in json.dumps(receiver.signed_with(world.webhook_secret)[-1])
    finally:
        receiver.close()


def test_restore_refusals(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Clear refusals, exit code 2: not an archive; a backup of a newer autoport; the
    other backend; a non-empty data directory (and --force replaces it)."""
    source = new_backend("sqlite", tmp_path / "source" / "data", request)
    source.data_dir.mkdir(parents=True)
    from autoport.kit.migrate import upgrade_sync

    upgrade_sync(f"sqlite:///{source.data_dir / 'autoport.db'}")
    archive = tmp_path / "a.tar.gz"
    made = source.cli("backup", str(archive))
    assert f"sqlite backup, schema revision {HEAD}" in made.stdout
    # The same path again is refused (a backup never overwrites one silently).
    assert source.cli("backup", str(archive), check=False).returncode == 2

    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tar file")
    target = Backend("sqlite", tmp_path / "t1" / "data")
    refused = target.cli("restore", str(junk), check=False)
    assert refused.returncode == 2 and "not an autoport backup" in refused.stderr
    assert not target.data_dir.exists() or not any(target.data_dir.iterdir())

    # A backup made by a newer autoport (a revision this code does not know).
    newer = tmp_path / "newer.tar.gz"
    with tarfile.open(archive) as tar, tarfile.open(newer, "w:gz") as out:
        for member in tar.getmembers():
            data = tar.extractfile(member)
            assert data is not None
            body = data.read()
            if member.name == "manifest.json":
                manifest = json.loads(body)
                manifest["schema_revision"] = "9999"
                body = json.dumps(manifest).encode()
                member.size = len(body)
            out.addfile(member, io.BytesIO(body))
    refused = target.cli("restore", str(newer), check=False)
    assert refused.returncode == 2 and "9999" in refused.stderr

    # A non-empty data directory: refused, then replaced with --force.
    busy = Backend("sqlite", tmp_path / "t2" / "data")
    busy.data_dir.mkdir(parents=True)
    (busy.data_dir / "autoport.db").write_bytes(b"")
    refused = busy.cli("restore", str(archive), check=False)
    assert refused.returncode == 2 and "not empty" in refused.stderr
    busy.cli("restore", str(archive), "--force")
    with sqlite3.connect(busy.data_dir / "autoport.db") as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (HEAD,)


def test_an_older_backup_is_migrated_forward(tmp_path: Path) -> None:
    from autoport.kit.migrate import upgrade_sync

    source = Backend("sqlite", tmp_path / "source" / "data")
    source.data_dir.mkdir(parents=True)
    upgrade_sync(f"sqlite:///{source.data_dir / 'autoport.db'}", revision="0010")
    archive = tmp_path / "old.tar.gz"
    # `backup` itself migrates nothing: it copies the database as it is.
    with sqlite3.connect(source.data_dir / "autoport.db") as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    from autoport.backup import service
    from autoport.config import Settings

    service.create_backup(Settings(data_dir=source.data_dir), archive, progress=lambda _: None)
    assert service.read_manifest(archive).schema_revision == "0010"
    target = Backend("sqlite", tmp_path / "target" / "data")
    restored = target.cli("restore", str(archive))
    assert "migrating forward from 0010" in restored.stderr
    with sqlite3.connect(target.data_dir / "autoport.db") as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (HEAD,)
