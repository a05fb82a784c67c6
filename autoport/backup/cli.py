"""`autoport backup PATH` and `autoport restore PATH` (docs/operations.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autoport.backup import service
from autoport.kit.cli import (
    ExitCode,
    JsonOption,
    fail,
    load_settings,
    note,
    output,
    quiet_logging,
    require_data_dir,
)

PathArgument = Annotated[Path, typer.Argument(help="The backup archive (a .tar.gz file).")]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace what is there.")]


def _manifest_lines(data: dict[str, object]) -> str:
    return (
        f"{data['backend']} backup, schema revision {data['schema_revision']}, "
        f"created {data['created_at']}"
    )


def backup(path: PathArgument, force: ForceOption = False, as_json: JsonOption = False) -> None:
    """Back up the database and secrets.json into one archive, while the server runs.

    SQLite: the online backup API (no writer is held up); PostgreSQL: pg_dump. Progress
    goes to stderr."""
    settings = load_settings()
    quiet_logging(settings)
    require_data_dir(settings)
    try:
        manifest = service.create_backup(settings, path, force=force, progress=note)
    except service.BackupError as error:
        fail(str(error), ExitCode.usage if error.usage else ExitCode.error)
    output(manifest.to_json(), as_json, _manifest_lines)


def restore(path: PathArgument, force: ForceOption = False, as_json: JsonOption = False) -> None:
    """Restore an archive of `autoport backup` into a new data directory (and database).

    Refuses a non-empty data directory (or PostgreSQL schema) unless --force, and a
    backup of a newer autoport; an older one is migrated forward."""
    settings = load_settings()
    quiet_logging(settings)
    try:
        manifest = service.restore_backup(settings, path, force=force, progress=note)
    except service.BackupError as error:
        fail(str(error), ExitCode.usage if error.usage else ExitCode.error)
    output(manifest.to_json(), as_json, _manifest_lines)
