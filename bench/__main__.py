"""`python -m bench` lists the benchmarks; `python -m bench <name>... [args]` runs those,
`python -m bench all --quick` runs every one in smoke mode (what CI runs).

Each benchmark runs in its own process (`python -m bench.<name>`), as it would alone:
one's servers, event loops and databases never leak into the next.
"""

from __future__ import annotations

import subprocess
import sys
import time

# Every benchmark module, in the order `all` runs them (quickest first).
BENCHMARKS: dict[str, str] = {
    "simulator": "the sandbox vehicle simulator: ticks per second",
    "consent": "consent pages: render and approve",
    "fleet": "fleet clearance and eligibility checks",
    "webhooks": "outbox -> deliveries -> signed HTTP posts",
    "streaming": "ingest -> stream log -> SSE/MQTT latency",
    "ingest": "POST /v1/ingest and the ingestion service",
    "oauth_tokens": "token endpoint (HTTP load)",
    "vehicle_data_pull": "GET vehicle data (HTTP load)",
    "pull_live": "GET vehicle data from the real `autoport serve`, live (HTTP load)",
    "fuzz": "schemathesis against /openapi.json (>= 20,000 cases; --quick: a few)",
}


def _usage() -> str:
    lines = ["usage: python -m bench [all | NAME...] [--quick] [other arguments]", ""]
    lines += [f"  {name:<18} {what}" for name, what in BENCHMARKS.items()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    # Names first, then the arguments for each benchmark (values too: `--workers 2`).
    first_option = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names, extra = argv[:first_option], argv[first_option:]
    if not names or "-h" in extra or "--help" in extra:
        print(_usage())
        return 0
    if names == ["all"]:
        names = list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}\n\n{_usage()}", file=sys.stderr)
        return 2
    failed: list[str] = []
    for name in names:
        print(f"== bench.{name} {' '.join(extra)}", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, "-m", f"bench.{name}", *extra])
        print(f"== bench.{name}: exit {code} in {time.monotonic() - started:.1f} s", flush=True)
        if code != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
