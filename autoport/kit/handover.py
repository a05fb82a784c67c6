"""Handing one-time secrets (the first admin token, the demo application's secret) to
the operator without putting them into the log stream.

On a terminal (stdout is a TTY) they are printed there. Otherwise stdout is a log
collector (systemd, Docker, a pipe), which keeps and forwards what it gets: they are
appended to a file only the owner can read, in the data directory, and the log says
where that file is, never what it holds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import structlog

from autoport.config import Settings

SECRETS_HANDOVER_NAME = "first-start-secrets.txt"

log = structlog.get_logger("autoport")


def handover_path(settings: Settings) -> Path:
    return settings.data_dir / SECRETS_HANDOVER_NAME


def hand_over(settings: Settings, text: str) -> None:
    """Show `text` (holding a secret shown once) to the operator only."""
    if sys.stdout.isatty():
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    path = handover_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created 0600 (and kept so: O_CREAT's mode applies only to a new file, so an older
    # file is narrowed too) before a byte is written.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (text if text.endswith("\n") else text + "\n").encode())
    finally:
        os.close(fd)
    log.warning(
        "one-time secret written to a file readable only by this user (stdout is not a "
        "terminal); read it, keep the secret, then delete the file",
        path=str(path.resolve()),
    )
