"""A data directory as `autoport init` leaves it, for tests of commands that refuse to
work anywhere else."""

from __future__ import annotations

from pathlib import Path

from autoport.config import Settings, ensure_secrets
from autoport.kit.migrate import upgrade_sync


def initialised(path: Path) -> Path:
    settings = Settings(data_dir=path, database_url=None)
    upgrade_sync(settings.resolved_database_url)
    ensure_secrets(settings)
    return path
