"""The real `autoport serve` as every HTTP benchmark starts it: with the settings `make
run` leaves on, pinned to its core, its log in a file.

`make run` sets nothing: logging at info with the access log on (one JSON line per
request, stderr being a file here), the background workers and the demo sandbox on. A
benchmark that must change a setting passes it as a `Changed` with the reason (the rate
limit raised so that the limiter runs but never refuses, say), and `announce` prints
every change at the top of its output, which `python -m bench publish` keeps beside the
figures. `--logs off` (`add_arguments`) measures the server with the access log off and
logging at warning, and says so the same way.

Cores: the server runs on core 0 and the load generator (wrk, the benchmark's own
process) on core 1, never on the server's core; a floor runs on core 0 like the server.
A server of several worker processes on a 2-core machine has no core of its own: it
shares both with the load generator, and `announce` says that too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

SERVER_CPUS = "0"
CLIENT_CPUS = "1"


@dataclass(frozen=True)
class Changed:
    """A setting a benchmark serves with instead of `make run`'s, and why."""

    name: str
    value: str
    why: str


LOGS_OFF = (
    Changed("AUTOPORT_ACCESS_LOG", "false", "--logs off"),
    Changed("AUTOPORT_LOG_LEVEL", "warning", "--logs off"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--logs",
        choices=("on", "off"),
        default="on",
        help="on (make run's default: info, one access line per request) or off "
        "(warnings only, no access line), to see what logging costs",
    )


def changes(args: argparse.Namespace, *changed: Changed) -> tuple[Changed, ...]:
    """The benchmark's own changes, and `--logs off`'s when asked."""
    return (*changed, *(LOGS_OFF if getattr(args, "logs", "on") == "off" else ()))


def load_text() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} cores"


def announce(
    changed: Sequence[Changed], *, server_cpus: str = SERVER_CPUS, client_cpus: str = CLIENT_CPUS
) -> None:
    """The settings and cores in force, printed first: they belong with the figures."""
    logs = "off" if any(c in LOGS_OFF for c in changed) else "on"
    print(
        f"autoport serve: make run's settings (logging {logs}"
        + (": info, one JSON access line per request to the log file" if logs == "on" else "")
        + ")"
        + (", except:" if changed else "")
    )
    for change in changed:
        print(f"  {change.name}={change.value}  ({change.why})")
    shared = set(_cpus(server_cpus)) & set(_cpus(client_cpus))
    print(
        f"cores: server {server_cpus}, load generator {client_cpus}"
        + (" (shared: a 2-core machine has no third core)" if shared else "")
        + f"; {load_text()}"
    )


def _cpus(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def pin(cpus: str = CLIENT_CPUS) -> None:
    """This process on `cpus`: by default a load generator's, off the server's core."""
    if (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, set(_cpus(cpus)))


def _process_cpu(pid: int, group: int | None = None) -> float:
    """User + system CPU seconds of `pid` (and of its children it waited for), 0 when it
    is gone or, with `group`, in another process group."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rpartition(")")[2].split()
    if group is not None and int(fields[2]) != group:
        return 0.0
    ticks = sum(int(fields[index]) for index in (11, 12, 13, 14))
    return ticks / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """A server process and its workers, in a process group of their own: paused and
    resumed together while a floor is measured on the same core."""

    process: subprocess.Popen[bytes]
    port: int
    profiled: bool = False

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pause(self) -> None:
        os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.process.pid, signal.SIGCONT)

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server's main process so far."""
        return _process_cpu(self.process.pid)

    def group_cpu_seconds(self) -> float:
        """User + system CPU time so far of every process of the server's group (its
        worker processes too), the ones that ended and were waited for included."""
        total = 0.0
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                total += _process_cpu(int(entry.name), group=self.process.pid)
        return total

    def stop(self) -> None:
        self.resume()
        # py-spy writes its profile on SIGINT (its child, the server, is then ended below).
        self.process.send_signal(signal.SIGINT if self.profiled else signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=30)
        self.kill()  # whatever of the group is left (workers, resource tracker)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


def serve(
    data_dir: Path,
    changed: Sequence[Changed] = (),
    *,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
    cpus: str = SERVER_CPUS,
    profile: Path | None = None,
    log_name: str = "server.log",
) -> Served:
    """`python -m autoport serve [args]` on a free port with its data in `data_dir`,
    `make run`'s settings but `changed` (and `env`: where the data lives, which is not a
    setting of make run's to keep), ready to answer. `profile`: under py-spy, its folded
    stacks per process written there when the server stops."""
    port = free_port()
    full_env = environment(data_dir, port, changed, env or {})
    command = ["taskset", "-c", cpus, sys.executable, "-m", "autoport", "serve", *args]
    if profile is not None:
        # py-spy cannot attach by pid in these containers: it starts the server (and
        # follows its worker processes); the raw output is folded stacks per process.
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        if not Path(spy).exists():
            sys.exit("--profile needs py-spy (pip install py-spy)")
        command = [
            spy, "record", "--subprocesses", "--nonblocking", "--format", "raw", "--rate", "250",
            "-o", str(profile.resolve()), "--", *command,
        ]  # fmt: skip
    # Its output to a file: a pipe held by a server left behind would keep whoever reads
    # this benchmark's output waiting, and a file is where a service's log goes.
    log = (data_dir / log_name).open("ab")
    process = subprocess.Popen(
        command, env=full_env, stdout=log, stderr=log, start_new_session=True
    )
    return ready(Served(process, port, profiled=profile is not None))


def environment(
    data_dir: Path, port: int, changed: Sequence[Changed], env: dict[str, str]
) -> dict[str, str]:
    """The server's environment: this process's without any AUTOPORT_ setting (whatever
    the calling shell exports is not make run's), then `env`, `changed`, the data
    directory and the port."""
    inherited = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("AUTOPORT_") or key in _KEPT
    }
    return {
        **inherited,
        **env,
        **{change.name: change.value for change in changed},
        "AUTOPORT_DATA_DIR": str(data_dir),
        "AUTOPORT_PORT": str(port),
        "PYTHONPATH": os.getcwd(),
    }


# Not settings of a server (the benchmarks' own database address, the test suite's).
_KEPT = {"AUTOPORT_TEST_POSTGRES_URL"}


def start_app(
    factory: str,
    data_dir: Path,
    *,
    env: dict[str, str] | None = None,
    cpus: str = SERVER_CPUS,
    workers: int = 1,
    log_name: str = "floor.log",
) -> Served:
    """A floor: `uvicorn --factory bench._pull_apps:<factory>` on `cpus`, without logs
    (a floor is the least a server can do)."""
    port = free_port()
    full_env = {
        **os.environ,
        **(env or {}),
        "BENCH_DATA_DIR": str(data_dir),
        "PYTHONPATH": os.getcwd(),
    }
    command = [
        "taskset", "-c", cpus, sys.executable, "-m", "uvicorn", "--factory", factory,
        "--port", str(port), "--no-access-log", "--log-level", "warning",
        "--workers", str(workers),
    ]  # fmt: skip
    log = (data_dir / log_name).open("ab")
    process = subprocess.Popen(
        command, env=full_env, stdout=log, stderr=log, start_new_session=True
    )
    return ready(Served(process, port))


def ready(server: Served, seconds: float = 120) -> Served:
    """The server once it answers /healthz (a loaded machine starts slowly); its whole
    group stopped otherwise."""
    deadline = time.monotonic() + seconds
    try:
        while True:
            if server.process.poll() is not None:
                raise RuntimeError(f"the server exited with {server.process.returncode}")
            try:
                httpx.get(f"{server.base}/healthz", timeout=10)
                return server
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    except BaseException:
        server.kill()
        raise


@contextlib.asynccontextmanager
async def in_process_logging(changed: Sequence[Changed] = ()) -> AsyncIterator[None]:
    """For a benchmark that calls the app in this process (ASGI calls, no server): make
    run's logging (info, one JSON access line per request) written to /dev/null, as a
    server writes it to a file; the settings and changes printed first."""
    from autoport.kit.logging import configure_logging, flush_access_log

    print(
        "autoport app, in process (ASGI calls, no server): make run's settings (logging on: "
        "the access lines written to /dev/null)" + (", except:" if changed else "")
    )
    for change in changed:
        print(f"  {change.name}={change.value}  ({change.why})")
    with open(os.devnull, "w") as sink, contextlib.redirect_stderr(sink):  # noqa: ASYNC230
        configure_logging("info", "json")
        try:
            yield
        finally:
            flush_access_log()
            configure_logging("warning")
