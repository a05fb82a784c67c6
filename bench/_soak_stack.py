"""What `bench.fleet_soak` runs and watches: the production topology of
docs/operations.md on this machine, and the sampler of its processes and database.

- PostgreSQL (a database of its own in the server AUTOPORT_TEST_POSTGRES_URL names, so
  `pg_stat_database` and the backends are the soak's alone), `autoport serve --workers
  2 --no-workers` behind the shipped nginx configuration (TLS, a throwaway certificate),
  one `autoport worker`, Redis for the shared rate limits, Mosquitto configured by
  `autoport streaming mosquitto-config`;
- SQLite: one `autoport serve` (its background work in the process) behind the same nginx,
  with Mosquitto.

The pieces are those of tests/deployment/topology.py (nginx rendering, certificate,
process handling). Logging is left at its defaults; the settings the soak changes are
`CHANGED_SETTINGS`, printed by the benchmark.

The sampler reads, every few seconds: each process's CPU time, resident memory and open
files (/proc), the machine's CPU (/proc/stat), PostgreSQL's counters (`pg_stat_database`
of the soak's database, `pg_stat_wal`, `pg_stat_bgwriter`, the wait events of its
backends) and the queues of `/metrics` (outbox, webhook backlog, MQTT lag).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tests.deployment.topology import (
    MOSQUITTO,
    NGINX,
    REPO,
    Process,
    free_port,
    nginx_main_config,
    render_nginx_site,
    self_signed_certificate,
)

# What the soak sets beyond the deployment's own configuration (deploy/autoport.env.example
# without its logging lines: logging stays at autoport's defaults), and why.
CHANGED_SETTINGS = {
    "AUTOPORT_VEHICLE_DATA_RATE_LIMIT": (
        "1000000/minute",
        "one application pulls 1 % of the fleet a second: 600/minute would refuse it",
    ),
    "AUTOPORT_VEHICLE_DATA_HISTORY_PRUNE_INTERVAL_SECONDS": (
        "60",
        "history retention runs every minute of the soak instead of every hour",
    ),
    "AUTOPORT_WEBHOOK_ALLOW_LOOPBACK": ("true", "the webhook receiver listens on loopback"),
}

PROCESS_GROUPS = (
    "api",
    "worker",
    "postgres",
    "postgres shared",
    "nginx",
    "mosquitto",
    "redis",
    "load: feed",
    "load: followers",
    "load: orchestrator",
)
METRICS = {
    'autoport_outbox_events{consumer="streaming"}': "outbox_streaming",
    'autoport_outbox_events{consumer="webhooks"}': "outbox_webhooks",
    'autoport_outbox_oldest_event_age_seconds{consumer="streaming"}': "outbox_streaming_age_s",
    "autoport_webhook_backlog": "webhook_backlog",
    "autoport_stream_mqtt_lag_messages": "mqtt_lag",
}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def database_url(admin_url: str, name: str) -> str:
    parts = urlsplit(admin_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@dataclass
class Stack:
    backend: str  # "postgresql" or "sqlite"
    root: Path
    admin_url: str | None  # the PostgreSQL server (AUTOPORT_TEST_POSTGRES_URL)
    carmaker_url: str
    redis_url: str | None = "redis://127.0.0.1:6379/0"
    api_workers: int = 2
    profile_dir: Path | None = None
    database: str = field(default_factory=lambda: f"autoport_soak_{uuid.uuid4().hex[:10]}")
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    https_port: int = field(default_factory=free_port)
    mqtt_port: int = field(default_factory=free_port)
    api_port: int = field(default_factory=free_port)
    processes: list[Process] = field(default_factory=list)
    api: Process | None = None
    worker: Process | None = None
    nginx: Process | None = None
    mosquitto: Process | None = None
    cert: Path | None = None

    @property
    def postgres(self) -> bool:
        return self.backend == "postgresql"

    @property
    def url(self) -> str:
        if self.postgres:
            assert self.admin_url is not None
            return database_url(self.admin_url, self.database)
        return f"sqlite:///{self.root / 'data' / 'autoport.db'}"

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    @property
    def direct_url(self) -> str:
        """The API process itself, past nginx (for /metrics and /readyz)."""
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("AUTOPORT_", "PROMETHEUS_"))
        }
        env.update(
            {
                "PYTHONPATH": str(REPO),
                "AUTOPORT_DATA_DIR": str(self.root / "data"),
                "AUTOPORT_DATABASE_URL": self.url,
                "AUTOPORT_BASE_URL": self.base_url,
                "AUTOPORT_SANDBOX_BASE_URL": f"{self.base_url}/sandbox",
                "AUTOPORT_FORWARDED_ALLOW_IPS": "127.0.0.1",
                "AUTOPORT_TOKEN_HMAC_KEY": "fleet-soak-" + "k" * 32,
                "AUTOPORT_SESSION_SECRET": "fleet-soak-" + "s" * 32,
                "AUTOPORT_ADMIN_TOKEN": self.admin_token,
                "AUTOPORT_MQTT_URL": f"mqtt://127.0.0.1:{self.mqtt_port}",
                "AUTOPORT_MQTT_CONFIG_DIR": str(self.root / "mosquitto"),
                "PROMETHEUS_MULTIPROC_DIR": str(self.root / "metrics"),
                "AUTOPORT_SANDBOX_DEMO": "false",
                # The fleet's carmaker: pushes its data, decides clearances and takes
                # commands over its API (the followers' process plays it).
                "AUTOPORT_BRAND_CONNECTORS": json.dumps(
                    {"bmw": "autoport.brands.template:TemplateConnector"}
                ),
                "AUTOPORT_BRAND_CONNECTOR_OPTIONS": json.dumps(
                    {"bmw": {"base_url": self.carmaker_url, "data_delivery": "push"}}
                ),
                **{key: value for key, (value, _) in CHANGED_SETTINGS.items()},
            }
        )
        if self.postgres and self.redis_url:
            env["AUTOPORT_REDIS_URL"] = self.redis_url
        return env

    def autoport(self, *args: str, as_json: bool = True) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "autoport", *args, *(["--json"] if as_json else [])],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            cwd=REPO,
        )
        if done.returncode != 0:
            raise RuntimeError(f"autoport {' '.join(args)}: {done.stderr[-2000:]}")
        return json.loads(done.stdout) if as_json else done.stdout

    async def autoport_in_process(self, *args: str) -> Any:
        """`autoport ARGS --json` through the CLI's own code, in this process (a thread:
        the commands run their own event loop): the same path as the shell without a
        Python start-up per command, which takes seconds on a loaded machine."""
        from typer.testing import CliRunner

        from autoport.cli import app, register

        if not app.registered_groups:
            register()  # the features' commands, as `main` does

        def invoke() -> Any:
            return CliRunner().invoke(app, [*args, "--json"], env=self.env, catch_exceptions=False)

        done = await asyncio.to_thread(invoke)
        if done.exit_code != 0:
            raise RuntimeError(f"autoport {' '.join(args)}: {done.output[-2000:]}")
        return json.loads(done.stdout)

    # ------------------------------------------------------------------ start, stop

    async def start(self) -> None:
        for name in ("data", "metrics", "mosquitto", "nginx", "logs"):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        if self.postgres:
            await self._create_database()
        # The upgrade procedure: migrations once, before any process starts.
        self.autoport("migrate", as_json=False)
        await self._start_mosquitto()
        serve = ["serve", "--host", "127.0.0.1", "--port", str(self.api_port)]
        if self.postgres:
            serve += ["--workers", str(self.api_workers), "--no-workers"]
        self.api = self._process("api", *serve)
        self.api.start()
        if self.postgres:
            self.worker = self._process("worker", "worker")
            self.worker.start()
        await self._wait_ready()
        self._start_nginx()
        await self._wait_port(self.https_port, self.nginx)

    def _process(self, name: str, *args: str) -> Process:
        command = [sys.executable, "-m", "autoport", *args]
        if self.profile_dir is not None:
            # py-spy starts the process (attaching by pid is refused in containers) and
            # samples it and its children (uvicorn's workers).
            self.profile_dir.mkdir(parents=True, exist_ok=True)
            command = [
                str(Path(sys.executable).with_name("py-spy")), "record", "--subprocesses",
                "--format", "raw", "--rate", "97", "--nonblocking",
                "-o", str(self.profile_dir / f"{name}.txt"), "--", *command,
            ]  # fmt: skip
        process = Process(name, command, self.env, self.root / "logs" / f"{name}.log")
        self.processes.append(process)
        return process

    async def _create_database(self) -> None:
        import asyncpg

        assert self.admin_url is not None
        conn = await asyncpg.connect(self.admin_url)
        try:
            await conn.execute(f'CREATE DATABASE "{self.database}"')
        finally:
            await conn.close()

    async def _drop_database(self) -> None:
        import asyncpg

        assert self.admin_url is not None
        with contextlib.suppress(Exception):
            conn = await asyncpg.connect(self.admin_url)
            try:
                await conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            finally:
                await conn.close()

    async def _start_mosquitto(self) -> None:
        import getpass

        directory = self.root / "mosquitto"
        user = ["--user", getpass.getuser()] if os.geteuid() == 0 else []
        self.autoport(
            "streaming", "mosquitto-config", "--dir", str(directory),
            "--port", str(self.mqtt_port), *user, as_json=False,
        )  # fmt: skip
        self.mosquitto = Process(
            "mosquitto",
            [MOSQUITTO, "-c", str(directory / "mosquitto.conf")],
            self.env,
            self.root / "logs" / "mosquitto.log",
        )
        self.processes.append(self.mosquitto)
        self.mosquitto.start()
        await self._wait_port(self.mqtt_port, self.mosquitto)

    def _start_nginx(self) -> None:
        directory = self.root / "nginx"
        self.cert, key = self_signed_certificate(directory)
        site = directory / "autoport.conf"
        site.write_text(render_nginx_site([self.api_port], self.https_port, self.cert, key))
        main = directory / "nginx.conf"
        main.write_text(nginx_main_config(directory, site))
        self.nginx = Process(
            "nginx",
            [NGINX, "-c", str(main), "-e", str(directory / "error.log"), "-p", str(directory)],
            self.env,
            self.root / "logs" / "nginx.log",
        )
        self.processes.append(self.nginx)
        self.nginx.start()

    async def _wait_port(self, port: int, process: Process | None, within: float = 30) -> None:
        import socket

        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if process is not None and not process.alive():
                raise RuntimeError(f"{process.name} exited: {process.tail()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"nothing listens on port {port} after {within} s")

    async def _wait_ready(self, within: float = 120) -> None:
        import aiohttp

        deadline = time.monotonic() + within
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                for process in (self.api, self.worker):
                    if process is not None and not process.alive():
                        raise RuntimeError(f"{process.name} exited: {process.tail()}")
                with contextlib.suppress(aiohttp.ClientError, OSError, asyncio.TimeoutError):
                    async with session.get(
                        self.direct_url + "/readyz", timeout=aiohttp.ClientTimeout(total=2)
                    ) as answer:
                        if answer.status == 200:
                            return
                await asyncio.sleep(0.2)
        raise RuntimeError(f"the API is not ready after {within} s")

    async def stop(self) -> None:
        if self.profile_dir is not None:
            # py-spy writes its file when the process it runs ends: stop that one (SIGTERM
            # to py-spy itself would end py-spy without writing).
            for process in (self.api, self.worker):
                if process is not None and process.popen is not None:
                    profiled = [p for p in descendants(process.popen.pid) if not _is_tool(p)]
                    for pid in profiled[:1]:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGTERM)
            for process in (self.api, self.worker):
                if process is not None and process.popen is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        process.popen.wait(timeout=60)
        for process in reversed(self.processes):
            process.stop()
        if self.postgres:
            await self._drop_database()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.tail(1500)}" for p in self.processes)

    # ------------------------------------------------------------------ process ids

    def groups(self) -> dict[str, list[int]]:
        """The pids of each part of the deployment (PostgreSQL's are added by the
        sampler, which asks the server)."""
        found: dict[str, list[int]] = {}
        for name, process in (
            ("api", self.api), ("worker", self.worker), ("nginx", self.nginx),
            ("mosquitto", self.mosquitto),
        ):  # fmt: skip
            if process is not None and process.popen is not None:
                found[name] = [p for p in descendants(process.popen.pid) if not _is_tool(p)]
        redis = [pid for pid in all_pids() if _comm(pid) == "redis-server"]
        if self.postgres and redis:
            found["redis"] = redis
        return found


def all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _is_tool(pid: int) -> bool:
    """py-spy itself, and multiprocessing's resource tracker: not the deployment."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    return b"py-spy" in cmdline or b"resource_tracker" in cmdline


def descendants(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for pid in all_pids():
        fields = _stat_fields(pid)
        if fields:
            parents.setdefault(int(fields[1]), []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(parents.get(pid, []))
    return out


@dataclass(frozen=True)
class ProcessSample:
    cpu_s: float
    rss: int
    fds: int


def sample_process(pid: int) -> ProcessSample | None:
    fields = _stat_fields(pid)
    if fields is None:
        return None
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = 0
    return ProcessSample(
        (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[21]) * PAGE, fds
    )


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the machine since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    total = sum(values[:8])
    return (total - idle) / CLOCK_TICKS, total / CLOCK_TICKS


def parse_metrics(text: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            if name in METRICS:
                with contextlib.suppress(ValueError):
                    values[METRICS[name]] = float(value)
    return values


_PG_DATABASE = """
SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_fetched,
       blks_read, blks_hit, temp_bytes, deadlocks
FROM pg_stat_database WHERE datname = $1
"""


class Sampler:
    """Samples every `interval` seconds into `samples` (one dict each)."""

    def __init__(self, stack: Stack, load_pids: dict[str, int], interval: float) -> None:
        self.stack = stack
        self.load_pids = load_pids
        self.interval = interval
        self.samples: list[dict[str, Any]] = []
        self.waits: dict[str, int] = {}  # wait event -> times seen (1 s probes)
        self.pg: Any = None
        self._task: asyncio.Task[None] | None = None
        self._waits_task: asyncio.Task[None] | None = None
        self._groups: dict[str, list[int]] = {}
        self._groups_at = 0.0

    async def start(self) -> None:
        if self.stack.postgres:
            import asyncpg

            self.pg = await asyncpg.connect(self.stack.url)
            self._waits_task = asyncio.create_task(self._probe_waits())
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        for task in (self._task, self._waits_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self.pg is not None:
            await self.pg.close()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(Exception):
                self.samples.append(await self.sample())
            await asyncio.sleep(self.interval)

    async def _probe_waits(self) -> None:
        """What the soak's active backends wait on, once a second (pg_stat_activity)."""
        while True:
            with contextlib.suppress(Exception):
                rows = await self.pg.fetch(
                    "SELECT wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()",
                    self.stack.database,
                )
                self.waits["(probes)"] = self.waits.get("(probes)", 0) + 1
                for row in rows:
                    key = (
                        "CPU" if row["wait_event_type"] is None
                        else f"{row['wait_event_type']}:{row['wait_event']}"
                    )  # fmt: skip
                    self.waits[key] = self.waits.get(key, 0) + 1
            await asyncio.sleep(1.0)

    async def groups(self) -> dict[str, list[int]]:
        if time.monotonic() - self._groups_at > 30 or not self._groups:
            groups = self.stack.groups()
            for name, pid in self.load_pids.items():
                groups[name] = [pid]
            if self.pg is not None:
                rows = await self.pg.fetch(
                    "SELECT pid, datname, backend_type FROM pg_stat_activity"
                )
                groups["postgres"] = [r["pid"] for r in rows if r["datname"] == self.stack.database]
                groups["postgres shared"] = [
                    r["pid"] for r in rows
                    if r["datname"] is None and r["backend_type"] != "client backend"
                ]  # fmt: skip
            self._groups, self._groups_at = groups, time.monotonic()
        return self._groups

    async def sample(self) -> dict[str, Any]:
        import aiohttp

        at = time.time()
        groups = await self.groups()
        processes: dict[str, dict[int, tuple[float, int, int]]] = {}
        for name, pids in groups.items():
            for pid in pids:
                found = sample_process(pid)
                if found is not None:
                    processes.setdefault(name, {})[pid] = (found.cpu_s, found.rss, found.fds)
        busy, total = machine_cpu()
        sample: dict[str, Any] = {
            "t": at,
            "processes": processes,
            "machine": (busy, total),
            "load1": os.getloadavg()[0],
        }
        if self.pg is not None:
            row = await self.pg.fetchrow(_PG_DATABASE, self.stack.database)
            sample["pg"] = dict(row) if row else {}
            wal = await self.pg.fetchrow("SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal")
            sample["wal"] = {k: int(v) for k, v in dict(wal).items()} if wal else {}
            sample["pg_size"] = int(
                await self.pg.fetchval("SELECT pg_database_size($1)", self.stack.database)
            )
            sample["lock_waits"] = int(
                await self.pg.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 "
                    "AND wait_event_type = 'Lock'",
                    self.stack.database,
                )
            )
        else:
            data = self.stack.root / "data"
            sample["db_size"] = sum(
                path.stat().st_size for path in data.glob("autoport.db*") if path.exists()
            )
        with contextlib.suppress(aiohttp.ClientError, OSError, asyncio.TimeoutError):
            async with (
                aiohttp.ClientSession() as session,
                session.get(
                    self.stack.direct_url + "/metrics", timeout=aiohttp.ClientTimeout(total=10)
                ) as answer,
            ):
                sample["metrics"] = parse_metrics(await answer.text())
        return sample


def cpu_between(first: dict[str, Any], last: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per group: cores used (sum of its processes), the busiest process's cores, and
    resident memory; the machine's busy cores."""
    seconds = last["t"] - first["t"]
    out: dict[str, dict[str, float]] = {}
    for name, pids in last["processes"].items():
        before = first["processes"].get(name, {})
        per_pid = [
            (cpu - before[pid][0]) / seconds for pid, (cpu, _, _) in pids.items() if pid in before
        ]
        out[name] = {
            "cores": sum(per_pid),
            "busiest": max(per_pid, default=0.0),
            "processes": len(per_pid),
            "rss_mb": sum(rss for _, rss, _ in pids.values()) / 2**20,
        }
    busy = (last["machine"][0] - first["machine"][0]) / seconds
    ours = sum(v["cores"] for v in out.values())
    # What else ran on the machine meanwhile (other engineers' work on a shared one).
    out["other work"] = {"cores": max(0.0, busy - ours), "busiest": 0.0, "processes": 0,
                         "rss_mb": 0.0}  # fmt: skip
    out["machine"] = {"cores": busy, "busiest": 0.0, "processes": 0, "rss_mb": 0.0}
    return out


def short_command(argv: list[str]) -> str:
    """The command line as printed, with addresses hidden (they may hold credentials)."""
    return " ".join("URL" if "://" in arg else arg for arg in argv)


def pretty_waits(waits: dict[str, int]) -> str:
    probes = waits.get("(probes)", 0)
    if not probes:
        return "no probes"
    items = sorted(((k, v) for k, v in waits.items() if k != "(probes)"), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v / probes:.2f}" for k, v in items[:6]) or "idle"


__all__ = [
    "CHANGED_SETTINGS",
    "PROCESS_GROUPS",
    "Sampler",
    "Stack",
    "cpu_between",
    "pretty_waits",
    "short_command",
]
