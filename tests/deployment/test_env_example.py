"""The shipped `deploy/autoport.env.example` sets up a production host whose keys rotate
(issue #38): every variable it sets is a real setting, it gives no key, and a host set up
as docs/operations.md says (the example's environment, `autoport init` once) answers
`autoport keys rotate` for both keys and the admin token, on PostgreSQL like the example.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autoport.config import Settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "autoport.env.example"
KEYS = ("AUTOPORT_TOKEN_HMAC_KEY", "AUTOPORT_SESSION_SECRET", "AUTOPORT_ADMIN_TOKEN")


def example_variables() -> dict[str, str]:
    variables: dict[str, str] = {}
    for line in EXAMPLE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            variables[name] = value
    return variables


def test_the_example_sets_only_real_settings_and_no_key() -> None:
    variables = example_variables()
    known = {f"AUTOPORT_{name.upper()}" for name in Settings.model_fields}
    unknown = [n for n in variables if n.startswith("AUTOPORT_") and n not in known]
    assert unknown == []
    assert [name for name in KEYS if name in variables] == []


def test_a_host_set_up_from_the_example_rotates_its_keys(
    tmp_path: Path, postgres_schema: tuple[str, str]
) -> None:
    url, schema = postgres_schema
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOPORT_")}
    env |= example_variables()
    # Only what names this machine's places changes: the test's PostgreSQL (a schema of
    # its own), a data directory and a metrics directory of the test's.
    env |= {
        "AUTOPORT_DATABASE_URL": url,
        "AUTOPORT_DATABASE_SCHEMA": f"{schema}_env",
        "AUTOPORT_DATA_DIR": str(tmp_path / "data"),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
    }

    (tmp_path / "metrics").mkdir()  # systemd-tmpfiles makes it on a host

    def autoport(*args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "autoport", *args, "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"autoport {' '.join(args)}: {done.stderr[-2000:]}"
        return json.loads(done.stdout)

    try:
        autoport("init")
        secrets = tmp_path / "data" / "secrets.json"
        assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
        rotated = autoport("keys", "rotate")
        assert [r["name"] for r in rotated["rotated"]] == ["token_hmac_key", "session_secret"]
        assert autoport("keys", "rotate", "--which", "admin_token")["admin_token"]
    finally:
        _drop_schema(url, f"{schema}_env")


def _drop_schema(url: str, schema: str) -> None:
    import asyncio

    import asyncpg

    async def drop() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(drop())


pytestmark = pytest.mark.postgres
