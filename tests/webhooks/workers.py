"""Real webhook worker processes (`autoport webhooks worker`) and the environment they
are started with, shared by the worker-process and CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys

from autoport.config import Settings


def worker_env(settings: Settings) -> dict[str, str]:
    env = {
        **os.environ,
        "AUTOPORT_DATA_DIR": str(settings.data_dir),
        "AUTOPORT_WEBHOOK_ALLOW_LOOPBACK": "true",
        "AUTOPORT_WEBHOOK_LEASE_SECONDS": "3",
        "AUTOPORT_WEBHOOK_TIMEOUT_SECONDS": "2",
        "AUTOPORT_WEBHOOK_POLL_INTERVAL_SECONDS": "0.05",
        "AUTOPORT_LOG_LEVEL": "warning",
        # Keep every delivery in the log, so the test can count them.
        "AUTOPORT_WEBHOOK_DELIVERIES_KEPT": "1000",
    }
    if settings.database_url:
        env["AUTOPORT_DATABASE_URL"] = settings.database_url
    if settings.database_schema:
        env["AUTOPORT_DATABASE_SCHEMA"] = settings.database_schema
    return env


class Workers:
    def __init__(self, settings: Settings) -> None:
        self.env = worker_env(settings)
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, concurrency: int = 16) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "autoport",
                "webhooks",
                "worker",
                "--concurrency",
                str(concurrency),
            ],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.processes.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)
