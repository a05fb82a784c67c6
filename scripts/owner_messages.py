"""Update the owner portal's German translation source from its templates.

Usage: python scripts/owner_messages.py [--check]

Extracts every message of autoport/owner/templates (Babel) and merges it into
autoport/owner/locales/de_DE/LC_MESSAGES/messages.po, keeping existing translations;
new messages are added untranslated. `--check` changes nothing and fails when the file
is out of date or a message lacks a translation. English is the source language.
"""

from __future__ import annotations

import argparse
import io
import sys

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from autoport.owner.pages import LOCALES_DIR, extract_messages

PATH = LOCALES_DIR / "de_DE" / "LC_MESSAGES" / "messages.po"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail instead of writing")
    args = parser.parse_args()
    old = Catalog(locale="de_DE")
    if PATH.exists():
        with PATH.open("rb") as handle:
            old = read_po(handle, locale="de_DE")
    new = Catalog(locale="de_DE", project="autoport owner portal", fuzzy=False)
    missing = []
    for message in extract_messages():
        if not message.id:
            continue
        known = old.get(message.id)
        string = known.string if known is not None else ""
        new.add(message.id, string, flags=("python-format",) if "%(" in message.id else ())
        if not string:
            missing.append(message.id)
    buffer = io.BytesIO()
    write_po(buffer, new, omit_header=False, sort_output=True, width=88)
    current = PATH.read_bytes() if PATH.exists() else b""
    stale = _body(buffer.getvalue()) != _body(current)
    if args.check:
        for message_id in missing:
            print(f"de-DE: untranslated: {message_id!r}", file=sys.stderr)
        if stale:
            print(f"{PATH} is out of date: run scripts/owner_messages.py", file=sys.stderr)
        return 1 if missing or stale else 0
    PATH.parent.mkdir(parents=True, exist_ok=True)
    PATH.write_bytes(buffer.getvalue())
    for message_id in missing:
        print(f"de-DE: untranslated: {message_id!r}")
    return 0


def _body(po: bytes) -> bytes:
    # The header carries a creation date: compare the messages only.
    return po.split(b"\n\n", 1)[-1]


if __name__ == "__main__":
    sys.exit(main())
