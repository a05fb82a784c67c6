"""Follow an application's vehicle data live (Server-Sent Events), surviving restarts of
both sides: the cursor is kept in a file and the stream resumes after it.

    AUTOPORT_URL=http://127.0.0.1:8080 CLIENT_ID=... CLIENT_SECRET=... \
        python stream_consumer.py [--max N] [--cursor-file cursor.txt]"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from autoport_client import Client


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max", type=int, default=0, help="stop after N messages (0: never)")
    parser.add_argument("--cursor-file", type=Path, default=Path("cursor.txt"))
    args = parser.parse_args(argv)
    cursor_file: Path = args.cursor_file
    cursor = cursor_file.read_text().strip() if cursor_file.exists() else None

    def store(event_id: str) -> None:
        cursor_file.write_text(event_id)

    with Client(
        os.environ.get("AUTOPORT_URL", "http://127.0.0.1:8080"),
        os.environ["CLIENT_ID"],
        os.environ["CLIENT_SECRET"],
        environment="sandbox",
    ) as client:
        stream = client.stream(last_event_id=cursor, on_cursor=store)
        for count, message in enumerate(stream, start=1):
            level = message.data.charging.battery_level.value
            odometer = message.data.diagnostics.odometer.value
            print(
                message.event_id,
                message.vin,
                f"battery={level}" if level is not None else "",
                f"odometer={odometer.value} {odometer.unit}" if odometer is not None else "",
                flush=True,
            )
            if args.max and count >= args.max:
                break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
