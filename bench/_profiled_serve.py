"""`python -m bench._profiled_serve OUT [autoport CLI arguments]`: `autoport serve`
under cProfile, the stats written to OUT when the server stops (uvicorn ends the
process by re-raising the stop signal, which would skip cProfile's own writing)."""

from __future__ import annotations

import cProfile
import signal
import sys


def main() -> None:
    out, args = sys.argv[1], sys.argv[2:]
    profiler = cProfile.Profile()
    raise_signal = signal.raise_signal

    def dump_then_raise(signum: int) -> None:
        profiler.disable()
        profiler.dump_stats(out)
        raise_signal(signum)

    signal.raise_signal = dump_then_raise
    from autoport.cli import main as autoport_main

    sys.argv = ["autoport", *args]
    profiler.enable()
    try:
        autoport_main()
    finally:
        profiler.disable()
        profiler.dump_stats(out)


if __name__ == "__main__":
    main()
