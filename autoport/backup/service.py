"""Backups and restores: the database and `secrets.json` in one archive.

Without the secrets a restored database is useless: every stored token is a keyed hash
under `token_hmac_key` and every webhook secret is sealed under a key derived from it.
So an archive always carries both, with a manifest saying what it holds.

The archive is a gzip-compressed tar file:

    manifest.json   format version, schema revision, created at, backend, file digests
                    and modes (0600: each file is restored with it, never wider)
    secrets.json    the data directory's secrets file
    autoport.db     SQLite: a consistent snapshot taken with the online backup API
    autoport.dump   PostgreSQL: `pg_dump --format=custom` of autoport's schema

SQLite: the online backup API (sqlite3 `Connection.backup`) copies the database in one
step under a read transaction; in WAL mode (the server's) that blocks no writer, so the
server keeps ingesting. PostgreSQL: `pg_dump` takes its own consistent snapshot (one
repeatable-read transaction) and `pg_restore` loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic.script import ScriptDirectory

from autoport import __version__
from autoport.config import SECRETS_FILE_NAME, Settings
from autoport.kit.db import asyncpg_dsn, sqlite_path
from autoport.kit.migrate import alembic_config, expected_heads
from autoport.secrets_file import FILE_MODE, private_directory

FORMAT = "autoport-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SQLITE_FILE = "autoport.db"
POSTGRES_FILE = "autoport.dump"

Progress = Callable[[str], None]


class BackupError(Exception):
    """The backup or restore cannot go on; the message says why and what to do."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class Manifest:
    format_version: int
    schema_revision: str
    created_at: str
    backend: str
    autoport_version: str
    database_schema: str | None
    files: dict[str, dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": self.format_version,
            "schema_revision": self.schema_revision,
            "created_at": self.created_at,
            "backend": self.backend,
            "autoport_version": self.autoport_version,
            "database_schema": self.database_schema,
            "files": self.files,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        if data.get("format") != FORMAT:
            raise BackupError("not an autoport backup (its manifest names another format)")
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise BackupError(
                f"backup format version {version} is not one this autoport reads "
                f"({FORMAT_VERSION}): restore it with the autoport that made it"
            )
        return cls(
            format_version=int(version),
            schema_revision=str(data["schema_revision"]),
            created_at=str(data["created_at"]),
            backend=str(data["backend"]),
            autoport_version=str(data.get("autoport_version", "")),
            database_schema=data.get("database_schema"),
            files=dict(data.get("files", {})),
        )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def known_revisions() -> list[str]:
    """Every migration revision this code knows, oldest first."""
    script = ScriptDirectory.from_config(alembic_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def _revision_of(revisions: set[str] | frozenset[str]) -> str:
    if len(revisions) != 1:
        raise BackupError(
            f"the database is at revisions {sorted(revisions) or 'none'}: migrate it "
            "(`autoport migrate`) before backing it up"
        )
    return next(iter(revisions))


# --- backup ----------------------------------------------------------------------------


def _snapshot_sqlite(source: Path, target: Path, progress: Progress) -> str:
    """Copy the live database with the online backup API; returns its schema revision."""
    if not source.exists():
        raise BackupError(f"no database at {source}", usage=True)
    progress(f"copying the SQLite database ({_megabytes(source.stat().st_size)} on disk) ...")
    started = time.monotonic()
    src = sqlite3.connect(source, timeout=60)
    dst = sqlite3.connect(target)
    try:
        # One step (pages=-1): a consistent snapshot under one read transaction. Stepwise
        # copies restart whenever another connection writes, so under steady ingestion
        # they might never end; in WAL mode a reader blocks no writer.
        src.backup(dst, pages=-1)
        revisions = {row[0] for row in dst.execute("SELECT version_num FROM alembic_version")}
        check = dst.execute("PRAGMA quick_check").fetchone()[0]
    finally:
        dst.close()
        src.close()
    if check != "ok":
        raise BackupError(f"the snapshot fails SQLite's integrity check: {check}")
    progress(f"copied {_megabytes(target.stat().st_size)} in {time.monotonic() - started:.1f} s")
    return _revision_of(revisions)


def _pg_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(
            f"{name} is not installed: install PostgreSQL's client tools (Debian: "
            f"postgresql-client, of the server's major version or newer), or follow the "
            f"manual procedure in docs/operations.md",
            usage=True,
        )
    return path


def _libpq_url(settings: Settings) -> str:
    return asyncpg_dsn(settings.resolved_database_url)


async def _postgres_revision(settings: Settings) -> str:
    from autoport.kit.db import create_database
    from autoport.kit.migrate import current_revisions

    db = create_database(settings.resolved_database_url, schema=settings.database_schema)
    await db.connect()
    try:
        return _revision_of(await current_revisions(db))
    finally:
        await db.close()


def _dump_postgres(settings: Settings, target: Path, progress: Progress) -> None:
    args = [
        _pg_tool("pg_dump"),
        "--format=custom",
        "--no-owner",
        "--no-privileges",
        f"--file={target}",
    ]
    if settings.database_schema:
        args.append(f"--schema={settings.database_schema}")
    args.append(f"--dbname={_libpq_url(settings)}")
    progress("running pg_dump ...")
    started = time.monotonic()
    result = subprocess.run(args, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        raise BackupError(f"pg_dump failed: {result.stderr.strip()}")
    progress(f"dumped {_megabytes(target.stat().st_size)} in {time.monotonic() - started:.1f} s")


def _secrets_bytes(settings: Settings, progress: Progress) -> bytes | None:
    path = settings.data_dir / SECRETS_FILE_NAME
    if not path.exists():
        progress(
            f"warning: no {SECRETS_FILE_NAME} in {settings.data_dir}: keep the secrets you "
            "set in the environment (AUTOPORT_TOKEN_HMAC_KEY, ...) with this backup"
        )
        return None
    given = [
        name
        for name in ("token_hmac_key", "session_secret", "admin_token")
        if getattr(settings, name) is not None
    ]
    if given:
        progress(
            "warning: "
            + ", ".join(f"AUTOPORT_{name.upper()}" for name in given)
            + " come from the environment, not from the backup: keep them with it"
        )
    return path.read_bytes()


def create_backup(
    settings: Settings, archive: Path, *, force: bool = False, progress: Progress
) -> Manifest:
    """Write a backup of the configured database and secrets to `archive`."""
    if archive.exists() and not force:
        raise BackupError(f"{archive} exists; choose another path or use --force", usage=True)
    archive.parent.mkdir(parents=True, exist_ok=True)
    backend = "sqlite" if settings.is_sqlite else "postgresql"
    with tempfile.TemporaryDirectory(prefix="autoport-backup-") as scratch:
        work = Path(scratch)
        files: dict[str, Path] = {}
        if settings.is_sqlite:
            files[SQLITE_FILE] = work / SQLITE_FILE
            revision = _snapshot_sqlite(
                Path(sqlite_path(settings.resolved_database_url)), files[SQLITE_FILE], progress
            )
        else:
            revision = asyncio.run(_postgres_revision(settings))
            files[POSTGRES_FILE] = work / POSTGRES_FILE
            _dump_postgres(settings, files[POSTGRES_FILE], progress)
        secrets = _secrets_bytes(settings, progress)
        if secrets is not None:
            files[SECRETS_FILE_NAME] = work / SECRETS_FILE_NAME
            files[SECRETS_FILE_NAME].write_bytes(secrets)
        manifest = Manifest(
            format_version=FORMAT_VERSION,
            schema_revision=revision,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            backend=backend,
            autoport_version=__version__,
            database_schema=settings.database_schema if backend == "postgresql" else None,
            files={
                name: {
                    "bytes": path.stat().st_size,
                    "sha256": _sha256(path),
                    "mode": f"{FILE_MODE:04o}",
                }
                for name, path in files.items()
            },
        )
        progress(f"writing {archive} ...")
        partial = archive.with_name(archive.name + ".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            body = json.dumps(manifest.to_json(), indent=2).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.mode = FILE_MODE
            info.size = len(body)
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(body))
            for name, path in files.items():
                # Members are 0600 whatever the scratch copy's mode: the database and
                # the keys are readable by their owner only, in the archive too.
                tar.add(path, arcname=name, filter=_private_member)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(partial, archive)
    progress(f"backup written: {archive} ({_megabytes(archive.stat().st_size)})")
    return manifest


def _private_member(member: tarfile.TarInfo) -> tarfile.TarInfo:
    member.mode = FILE_MODE
    return member


# --- restore ---------------------------------------------------------------------------


def _mode_of(meta: dict[str, Any]) -> int:
    """The mode the manifest recorded for a file (0600 for archives that recorded none),
    never wider than 0600."""
    try:
        return int(str(meta.get("mode", "0600")), 8) & FILE_MODE
    except ValueError:
        return FILE_MODE


def read_manifest(archive: Path) -> Manifest:
    if not archive.is_file():
        raise BackupError(f"no such file: {archive}", usage=True)
    try:
        with tarfile.open(archive, mode="r:*") as tar:
            member = tar.extractfile(MANIFEST)
            if member is None:
                raise KeyError(MANIFEST)
            return Manifest.from_json(json.loads(member.read()))
    except (tarfile.TarError, KeyError, ValueError) as error:
        raise BackupError(f"{archive} is not an autoport backup ({error})", usage=True) from None


def _extract(archive: Path, manifest: Manifest, into: Path) -> dict[str, Path]:
    """The archive's files, checked against the manifest's digests."""
    out: dict[str, Path] = {}
    with tarfile.open(archive, mode="r:*") as tar:
        for name, meta in manifest.files.items():
            if name not in (SQLITE_FILE, POSTGRES_FILE, SECRETS_FILE_NAME):
                continue
            member = tar.extractfile(name)
            if member is None:
                raise BackupError(f"{archive} lacks {name}, which its manifest lists")
            path = into / name
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _mode_of(meta))
            with os.fdopen(fd, "wb") as handle:
                shutil.copyfileobj(member, handle)
            if _sha256(path) != meta.get("sha256"):
                raise BackupError(f"{name} in {archive} is damaged (its SHA-256 differs)")
            out[name] = path
    return out


def check_revision(revision: str) -> bool:
    """True when the backup is older than this code (it will be migrated forward);
    refuses a revision this code does not know (made by a newer autoport)."""
    known = known_revisions()
    if revision not in known:
        raise BackupError(
            f"the backup is at schema revision {revision}, which this autoport "
            f"({__version__}, revisions up to {known[-1]}) does not know: restore it with "
            "the autoport that made it or a newer one",
            usage=True,
        )
    return revision not in expected_heads()


def _write_secrets(data_dir: Path, source: Path, mode: int) -> None:
    target = data_dir / SECRETS_FILE_NAME
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(source.read_bytes())
    os.chmod(target, mode)


def _data_dir_in_use(data_dir: Path) -> list[str]:
    """What is in the data directory already (lock files do not count)."""
    if not data_dir.exists():
        return []
    ignored = {"secrets.lock"}
    return sorted(p.name for p in data_dir.iterdir() if p.name not in ignored)


def restore_backup(
    settings: Settings, archive: Path, *, force: bool = False, progress: Progress
) -> Manifest:
    """Restore `archive` into the configured data directory and database."""
    from autoport.kit.cli import running_server
    from autoport.kit.migrate import upgrade

    manifest = read_manifest(archive)
    progress(
        f"backup of {manifest.created_at}: {manifest.backend}, schema revision "
        f"{manifest.schema_revision}, autoport {manifest.autoport_version}"
    )
    backend = "sqlite" if settings.is_sqlite else "postgresql"
    if manifest.backend != backend:
        raise BackupError(
            f"the backup is of a {manifest.backend} database and the configured database is "
            f"{backend}: set AUTOPORT_DATABASE_URL to match",
            usage=True,
        )
    older = check_revision(manifest.schema_revision)
    server = running_server(settings)
    if server is not None:
        raise BackupError(
            f"autoport serve (pid {server.pid}) runs on {settings.data_dir}: stop it first",
            usage=True,
        )
    data_dir = settings.data_dir
    present = _data_dir_in_use(data_dir)
    if backend == "sqlite" and present and not force:
        raise BackupError(
            f"{data_dir} is not empty ({', '.join(present[:5])}): restore into a new data "
            "directory (AUTOPORT_DATA_DIR), or use --force to replace its database and secrets",
            usage=True,
        )
    if backend == "postgresql":
        asyncio.run(_check_postgres_target(settings, manifest, force=force))
        secrets_there = (data_dir / SECRETS_FILE_NAME).exists()
        if secrets_there and not force:
            raise BackupError(
                f"{data_dir} already holds {SECRETS_FILE_NAME}: restore into a new data "
                "directory, or use --force to replace it",
                usage=True,
            )

    def restore_and_migrate() -> None:
        _restore_files(settings, archive, manifest, force=force, progress=progress)
        if older:
            progress(f"migrating forward from {manifest.schema_revision} ...")
            asyncio.run(upgrade(settings.resolved_database_url, schema=settings.database_schema))

    if backend == "postgresql":
        with _postgres_held_exclusively(settings):
            restore_and_migrate()
    else:
        restore_and_migrate()
    progress("restore complete")
    return manifest


def _restore_files(
    settings: Settings, archive: Path, manifest: Manifest, *, force: bool, progress: Progress
) -> None:
    data_dir = settings.data_dir
    backend = manifest.backend
    private_directory(data_dir, narrow=True)
    with tempfile.TemporaryDirectory(prefix="autoport-restore-", dir=data_dir) as scratch:
        progress("checking the archive ...")
        files = _extract(archive, manifest, Path(scratch))
        if backend == "sqlite":
            target = Path(sqlite_path(settings.resolved_database_url))
            private_directory(target.parent)
            for suffix in ("-wal", "-shm", "-journal"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
            progress(f"restoring the database to {target} ...")
            os.replace(files[SQLITE_FILE], target)  # with the recorded mode (_extract)
        else:
            _restore_postgres(settings, files[POSTGRES_FILE], force=force, progress=progress)
        if SECRETS_FILE_NAME in files:
            mode = _mode_of(manifest.files[SECRETS_FILE_NAME])
            _write_secrets(data_dir, files[SECRETS_FILE_NAME], mode)
            progress(f"restored {SECRETS_FILE_NAME} (mode {mode:04o})")
        else:
            progress(f"warning: the backup holds no {SECRETS_FILE_NAME}: set the secrets it used")


# Which autoport processes hold the presence lock of the schema (autoport.kit.db): a
# bigint advisory lock shows in pg_locks as classid (high half), objid (low), objsubid 1.
_HOLDERS = """
SELECT a.application_name, host(a.client_addr) AS address
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid
ORDER BY a.backend_start
"""


@contextlib.contextmanager
def _postgres_held_exclusively(settings: Settings) -> Iterator[None]:
    """Hold the schema's presence lock exclusively for the restore: refused while any
    autoport process (a server, a worker, a command, on any host) is connected to the
    schema, since it would go on serving from its caches and accepting tokens the
    restored database no longer has; and every process that connects meanwhile waits,
    caches off, until the restore is over (autoport.kit.db)."""
    import asyncpg

    from autoport.kit.db import presence_lock_key

    key = presence_lock_key(settings.database_schema)
    loop = asyncio.new_event_loop()

    async def take() -> Any:
        conn = await asyncpg.connect(
            _libpq_url(settings), server_settings={"application_name": "autoport restore"}
        )
        if await conn.fetchval("SELECT pg_try_advisory_lock($1)", key):
            return conn
        holders = await conn.fetch(_HOLDERS, (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)
        await conn.close()
        names = ", ".join(
            f"{row['application_name']}" + (f" from {row['address']}" if row["address"] else "")
            for row in holders
        )
        raise BackupError(
            f"{len(holders) or 'some'} autoport process(es) use schema "
            f"{settings.database_schema or 'public'} of this database ({names or 'unknown'}): "
            "stop every `autoport serve` and worker using it, on every host, then restore "
            "(a server left running would accept tokens the restored database no longer has)",
            usage=True,
        )

    try:
        conn = loop.run_until_complete(take())
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(conn.close())
    finally:
        loop.close()


async def _check_postgres_target(settings: Settings, manifest: Manifest, *, force: bool) -> None:
    from autoport.kit.db import create_database

    wanted = settings.database_schema
    if (manifest.database_schema or None) != (wanted or None):
        raise BackupError(
            f"the backup holds schema {manifest.database_schema or 'public'} and "
            f"AUTOPORT_DATABASE_SCHEMA is {wanted or 'unset (public)'}: pg_restore restores "
            "a schema under its own name; set AUTOPORT_DATABASE_SCHEMA to match",
            usage=True,
        )
    db = create_database(settings.resolved_database_url, schema=wanted)
    await db.connect()
    try:
        count = await db.fetch_value(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = :schema",
            {"schema": wanted or "public"},
        )
        if not count and wanted:
            # pg_restore creates the schema itself; an empty one left by a previous
            # attempt would stop it (DROP without CASCADE refuses a non-empty schema).
            await db.execute(f'DROP SCHEMA IF EXISTS "{wanted}"')
    finally:
        await db.close()
    if count and not force:
        raise BackupError(
            f"schema {wanted or 'public'} of the configured database already holds {count} "
            "tables: restore into a new database (or schema), or use --force to replace them",
            usage=True,
        )


def _restore_postgres(settings: Settings, dump: Path, *, force: bool, progress: Progress) -> None:
    started = time.monotonic()
    if force:
        _replace_postgres(settings, dump, progress)
    else:
        args = [
            _pg_tool("pg_restore"),
            "--no-owner",
            "--no-privileges",
            "--exit-on-error",
            "--single-transaction",
            f"--dbname={_libpq_url(settings)}",
            str(dump),
        ]
        progress("running pg_restore ...")
        result = subprocess.run(args, capture_output=True, text=True, check=False)  # noqa: S603
        if result.returncode != 0:
            raise BackupError(f"pg_restore failed: {result.stderr.strip()}")
    progress(f"restored in {time.monotonic() - started:.1f} s")


def _replace_postgres(settings: Settings, dump: Path, progress: Progress) -> None:
    """--force: the schema dropped and restored in one transaction (psql
    --single-transaction over the DROP and pg_restore's script): a failure leaves it as
    it was. `pg_restore --clean` cannot replace a partitioned table (the history's
    chunks): it drops each partition's inherited constraint first, which PostgreSQL
    refuses."""
    script = dump.with_suffix(".sql")  # in the restore's scratch directory (0700)
    progress("running pg_restore ...")
    made = subprocess.run(  # noqa: S603
        [
            _pg_tool("pg_restore"),
            "--no-owner",
            "--no-privileges",
            "--exit-on-error",
            f"--file={script}",
            str(dump),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        raise BackupError(f"pg_restore failed: {made.stderr.strip()}")
    schema = settings.database_schema
    # A schema-only dump creates its schema; a whole-database one expects `public`.
    drop = (
        f'DROP SCHEMA IF EXISTS "{schema}" CASCADE;'
        if schema
        else "DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;"
    )
    progress(f"replacing schema {schema or 'public'} in one transaction (psql) ...")
    result = subprocess.run(  # noqa: S603
        [
            _pg_tool("psql"),
            "--no-psqlrc",
            "--quiet",
            "--single-transaction",
            "--set=ON_ERROR_STOP=1",
            f"--dbname={_libpq_url(settings)}",
            f"--command={drop}",
            f"--file={script}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    script.unlink(missing_ok=True)
    if result.returncode != 0:
        raise BackupError(f"the restore failed (nothing was replaced): {result.stderr.strip()}")
