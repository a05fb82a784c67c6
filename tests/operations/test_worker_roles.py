"""Process roles: `serve --no-workers` (API only) and `autoport worker [--only KINDS]`
(background work only), both backends, as real processes where it matters."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autoport import worker
from autoport.app import create_app
from autoport.config import Settings
from autoport.kit import outbox
from autoport.kit.clock import Clock
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from tests.conftest import service_missing

REPO = Path(__file__).resolve().parents[2]


def test_only_names_kinds_from_the_registry() -> None:
    assert worker.parse_only(None) == worker.KIND_NAMES
    assert worker.parse_only("webhooks, Streams") == ("streams", "webhooks")  # registry order
    with pytest.raises(worker.UnknownKind, match=r"'mail'.*choose from: oauth, history"):
        worker.parse_only("webhooks,mail")
    with pytest.raises(worker.UnknownKind, match="names no worker kind"):
        worker.parse_only(" , ")
    # Every kind the app starts is in the registry, once.
    assert len(set(worker.KIND_NAMES)) == len(worker.KINDS) == len(worker.background_tasks())


def test_an_unknown_kind_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "autoport", "worker", "--only", "webhooks,mail"],
        env={**os.environ, "PYTHONPATH": str(REPO), "AUTOPORT_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown worker kind(s) 'mail'" in done.stderr
    assert "webhooks" in done.stderr and "streams" in done.stderr
    assert not (tmp_path / "autoport.db").exists()  # refused before touching anything


def test_a_worker_never_creates_a_data_directory(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "autoport", "worker"],
        env={**os.environ, "PYTHONPATH": str(REPO), "AUTOPORT_DATA_DIR": str(tmp_path / "none")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "no autoport database" in done.stderr
    assert not (tmp_path / "none").exists()


async def _emit(db: Database, event_type: str, count: int) -> None:
    async with db.transaction() as conn:
        for n in range(count):
            await outbox.emit(
                conn,
                environment=Environment.production,
                event_type=event_type,
                payload={"action": "approved", "detail": None},
                now_us=Clock().now_us(),
                vin=f"WBA0000000000{n:04d}",
                application_id="NOSUCHAPP",
            )


async def _waiting(db: Database, consumer: str) -> int:
    return int(
        await db.fetch_value("SELECT COUNT(*) FROM outbox WHERE consumer = :c", {"c": consumer})
    )


async def _until(check, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.1)
    return False


@pytest.mark.parametrize("background", [True, False])
async def test_serve_without_workers_leaves_background_work_alone(
    settings: Settings, background: bool
) -> None:
    app = create_app(
        settings.model_copy(update={"background_workers": background}), run_background=True
    )
    async with app.router.lifespan_context(app):
        db = app.state.autoport.database
        await _emit(db, "fleet_clearance_changed", 3)
        consumed = await _until(lambda: _is_empty(db, "streaming"), 5 if background else 1.5)
    assert consumed is background


async def _is_empty(db: Database, consumer: str) -> bool:
    return await _waiting(db, consumer) == 0


def _worker_env(settings: Settings) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AUTOPORT_")}
    env.update(
        {
            "PYTHONPATH": str(REPO),
            "AUTOPORT_DATA_DIR": str(settings.data_dir),
            "AUTOPORT_TOKEN_HMAC_KEY": "worker-role-test-" + "k" * 32,
            "AUTOPORT_SESSION_SECRET": "worker-role-test-" + "s" * 32,
            "AUTOPORT_ADMIN_TOKEN": "worker-role-test-admin-token",
            "AUTOPORT_SANDBOX_DEMO": "false",
            "AUTOPORT_LOG_FORMAT": "json",
        }
    )
    if settings.database_url:
        env["AUTOPORT_DATABASE_URL"] = settings.database_url
    if settings.database_schema:
        env["AUTOPORT_DATABASE_SCHEMA"] = settings.database_schema
    return env


async def test_a_worker_runs_only_the_kinds_it_is_given(
    settings: Settings, database: Database
) -> None:
    """`autoport worker --only streams`: the streaming consumer's events are handled, the
    webhooks consumer's stay for a webhooks worker; SIGTERM stops it cleanly."""
    await _emit(database, "fleet_clearance_changed", 5)
    assert await _waiting(database, "webhooks") == 5
    process = subprocess.Popen(
        [sys.executable, "-m", "autoport", "worker", "--only", "streams"],
        env=_worker_env(settings),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        consumed = await _until(lambda: _is_empty(database, "streaming"), 30)
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert consumed, "the streams worker did not consume its events"
        await asyncio.sleep(0.5)
        assert await _waiting(database, "webhooks") == 5  # not its kind
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    log = stderr.decode()
    assert process.returncode == 0, log[-2000:]
    # The log is JSON lines off a terminal: read the fields, not their spelling.
    events = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    running = [e for e in events if e["event"] == "autoport worker running"]
    assert running and running[0]["kinds"] == ["streams"], log[-2000:]
    assert any(e["event"] == "autoport worker stopping" for e in events), log[-2000:]


@pytest.mark.parametrize(
    "unit",
    [
        "autoport-migrate.service",
        "autoport-api@8081.service",
        "autoport-worker@1.service",
        "autoport-worker@webhooks\\x2cstreams.service",
    ],
)
def test_the_systemd_units_verify(tmp_path: Path, unit: str) -> None:
    """deploy/systemd: `systemd-analyze verify` accepts each unit (the autoport
    executable pointed at this environment's, the Requires= unit beside it)."""
    import shutil

    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        service_missing("systemd-analyze is not installed (Debian package systemd)")
    executable = Path(sys.executable).parent / "autoport"
    for source in (REPO / "deploy" / "systemd").glob("*.service"):
        text = source.read_text().replace("/opt/autoport/venv/bin/autoport", str(executable))
        (tmp_path / source.name).write_text(text)
    template = unit.split("@")[0] + "@.service" if "@" in unit else unit
    (tmp_path / unit).write_text((tmp_path / template).read_text())
    done = subprocess.run(
        [analyze, "verify", "--man=no", str(tmp_path / unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    problems = [
        line
        for line in done.stderr.splitlines()
        # Units this one names that a test machine does not have.
        if not any(other in line for other in ("postgresql.service", "redis-server", "mosquitto"))
    ]
    assert done.returncode == 0 and not problems, done.stderr
