"""Keep the pages' German catalogues in step with their templates: one script for every
surface (the consent pages, the owner portal, the console).

Usage: python scripts/messages.py [--check]

For each surface, every message Babel extracts from its templates (and the console's
`_()` calls) gets an entry in `<package>/locales/de_DE/LC_MESSAGES/messages.po`:
translations are kept, new messages are added untranslated, messages no longer said are
dropped; then the untranslated ones are listed. `--check` writes nothing and fails when a
catalogue is out of date or a message lacks its German. English is the source language.
The .po files are the sources: autoport compiles them in memory when it starts.
"""

from __future__ import annotations

import argparse
import sys

from autoport.consent.pages import SURFACE as CONSENT
from autoport.console.pages import SURFACE as CONSOLE
from autoport.owner.pages import SURFACE as OWNER
from autoport.web.messages import update

SURFACES = (CONSENT, OWNER, CONSOLE)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail instead of writing")
    args = parser.parse_args()
    problems = 0
    for surface in SURFACES:
        for report in update(surface, check=args.check):
            path = surface.catalogue_path(report.locale)
            for message_id in report.untranslated:
                print(f"{surface.name} {report.locale}: untranslated: {message_id!r}")
            problems += len(report.untranslated)
            if report.stale:
                if args.check:
                    print(f"{path} is out of date: run scripts/messages.py")
                    problems += 1
                else:
                    print(f"updated {path}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
