"""Add German translations to the console's catalog: `python scripts/console_messages.py
FILE.json [po-name]` merges {msgid: German} into
autoport/console/locales/de_DE/LC_MESSAGES/<po-name>.po (default messages.po) and
prints the messages still untranslated."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from babel.messages.pofile import read_po, write_po

from autoport.console import pages


def main(argv: list[str]) -> int:
    name = argv[1] if len(argv) > 1 else "messages.po"
    path = pages.LOCALES_DIR / "de_DE" / "LC_MESSAGES" / name
    with path.open("rb") as handle:
        catalog = read_po(handle, locale="de_DE")
    for msgid, text in json.loads(Path(argv[0]).read_text()).items():
        catalog.add(msgid, text)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, omit_header=False, sort_output=True)
    pages.catalog.cache_clear()
    for msgid in pages.untranslated():
        print(repr(msgid))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
