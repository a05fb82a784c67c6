"""Update the consent pages' translation sources from the templates.

Usage: python scripts/consent_messages.py [--check]

Extracts every message of autoport/consent/templates (Babel) and merges it into
autoport/consent/locales/<locale>/LC_MESSAGES/messages.po: new messages are added
untranslated, removed ones dropped. `--check` changes nothing and fails when a .po file
is out of date or a German message lacks a translation. The .po files are the sources;
autoport compiles them in memory when it starts (autoport.consent.pages.translations).
"""

from __future__ import annotations

import argparse
import io
import sys

from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, write_po

from autoport.consent.pages import LOCALES, LOCALES_DIR, babel_locale, extract_messages


def _messages(catalog: Catalog) -> set[tuple[object, object]]:
    return {(m.id, m.string) for m in catalog if m.id}


def _untranslated(message: Message) -> bool:
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    return message.fuzzy or not all(strings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail instead of writing")
    args = parser.parse_args()
    template = extract_messages()
    problems = 0
    for locale in LOCALES:
        path = LOCALES_DIR / babel_locale(locale) / "LC_MESSAGES" / "messages.po"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            with path.open("rb") as handle:
                catalog = read_po(handle, locale=babel_locale(locale))
        else:
            catalog = Catalog(locale=babel_locale(locale), project="autoport consent")
        before = _messages(catalog)
        catalog.update(template, no_fuzzy_matching=True, update_creation_date=False)
        catalog.obsolete.clear()
        catalog.fuzzy = False
        missing = [m.id for m in catalog if m.id and locale != "en-GB" and _untranslated(m)]
        for message_id in missing:
            print(f"{locale}: untranslated: {message_id!r}")
        problems += len(missing)
        if before != _messages(catalog):
            if args.check:
                print(f"{path} is out of date: run scripts/consent_messages.py")
                problems += 1
            else:
                out = io.BytesIO()
                write_po(out, catalog, sort_output=True, no_location=True)
                path.write_bytes(out.getvalue())
                print(f"updated {path}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
