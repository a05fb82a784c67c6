"""The secrets file of the data directory (`secrets.json`, mode 0600): the secrets the
configuration did not give, generated on first start and kept, so restarts keep tokens
and sessions valid. Only the admin token's hash is kept, never the token.

This module owns the file (locking, atomic 0600 writes, cached reads); `autoport.config`
turns it into settings (`ensure_secrets`, `stored_secrets`, `current_admin_token_sha256`,
`rotate_admin_token`). It imports nothing of autoport.

It also keeps the data directory private (`private_directory`, `private_file`): the
directory 0700, the SQLite database and its -wal/-shm files 0600. Every stored token is a
keyed hash whose key is in this file: nobody else on the machine may read either.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

SECRETS_FILE_NAME = "secrets.json"
SECRETS_LOCK_NAME = "secrets.lock"
ADMIN_HASH = "admin_token_sha256"


DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def _narrow(path: Path | str) -> None:
    """Take group and other access away from `path` (when it exists and is ours): what
    an older autoport, or a umask of 022, left readable."""
    try:
        info = os.stat(path)
    except OSError:
        return
    if info.st_mode & 0o077 and info.st_uid == os.geteuid():
        with contextlib.suppress(OSError):
            os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077)


def private_directory(path: Path, *, narrow: bool = False) -> None:
    """Create the directory `path` with mode 0700 (missing parents get the default
    mode: they are not autoport's); `narrow`: an existing one is narrowed too (the data
    directory, which is autoport's own)."""
    try:
        path.mkdir(mode=DIRECTORY_MODE, parents=True)
    except FileExistsError:
        if narrow:
            _narrow(path)


def private_file(path: Path | str) -> None:
    """Before SQLite opens the database at `path`: create it empty with mode 0600 (SQLite
    would create it 0644; an empty file is an empty database), and narrow an existing one
    and its -wal and -shm files (SQLite creates those with the database file's mode)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    for name in (str(path), f"{path}-wal", f"{path}-shm"):
        _narrow(name)


def path_in(data_dir: Path) -> Path:
    return data_dir / SECRETS_FILE_NAME


def new_admin_token() -> str:
    return "ap_admin_" + secrets.token_urlsafe(32)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@contextlib.contextmanager
def locked(data_dir: Path) -> Iterator[None]:
    """Processes that start together (worker processes, a CLI command beside the server)
    read, generate and write the secrets file one at a time, so that all of them end up
    with the same secrets. Released when the descriptor closes."""
    private_directory(data_dir, narrow=True)
    fd = os.open(data_dir / SECRETS_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read(data_dir: Path) -> dict[str, str]:
    """What the file holds; empty when there is none."""
    path = path_in(data_dir)
    stored: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
    return stored


def write(data_dir: Path, stored: dict[str, str]) -> None:
    path = path_in(data_dir)
    private_directory(path.parent)
    tmp = path.with_suffix(".tmp")
    # Created with 0600 from the start: the file must never be readable by others.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(stored, handle, indent=2)
    os.replace(tmp, path)


def ensure(
    data_dir: Path, *, keys: Iterable[str], admin_hash: bool
) -> tuple[dict[str, str], str | None]:
    """The file's secrets with every one of `keys` present (generated when missing) and,
    when `admin_hash`, an admin token hash (a new token when missing: returned, to be
    shown once)."""
    with locked(data_dir):
        stored = read(data_dir)
        changed = False
        token: str | None = None
        for name in keys:
            if name not in stored:
                stored[name] = secrets.token_urlsafe(48)
                changed = True
        if admin_hash and ADMIN_HASH not in stored:
            token = new_admin_token()
            stored[ADMIN_HASH] = sha256_hex(token)
            changed = True
        if changed:
            write(data_dir, stored)
    return stored, token


def rotate_admin_token(data_dir: Path) -> str:
    """Replace the kept admin token hash; returns the new token (shown once)."""
    with locked(data_dir):
        stored = read(data_dir)
        token = new_admin_token()
        stored[ADMIN_HASH] = sha256_hex(token)
        write(data_dir, stored)
    return token


# Secrets file -> (its identity when read, the admin token hash it held).
_ADMIN_HASHES: dict[Path, tuple[tuple[int, int, int], str]] = {}


def current_admin_hash(data_dir: Path, fallback: str | None) -> str | None:
    """The admin token hash the file holds now, read again whenever the file changed (a
    stat per call, microseconds); `fallback` when there is no readable file."""
    path = path_in(data_dir)
    try:
        info = path.stat()
    except OSError:
        return fallback
    identity = (info.st_ino, info.st_mtime_ns, info.st_size)
    cached = _ADMIN_HASHES.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    try:
        stored = json.loads(path.read_text())[ADMIN_HASH]
    except (OSError, ValueError, KeyError, TypeError):
        return cached[1] if cached is not None else fallback
    _ADMIN_HASHES[path] = (identity, str(stored))
    return str(stored)
