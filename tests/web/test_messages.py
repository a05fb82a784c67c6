"""The pages' words come from one gettext catalogue per surface (consent pages, owner
portal, console): every message of the templates (and the console's `_()` calls) has a
German translation that keeps its placeholders, each catalogue is in step with its
templates (scripts/messages.py --check), and dates and numbers follow the locale."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from autoport.consent.pages import SURFACE as CONSENT
from autoport.console.pages import SURFACE as CONSOLE
from autoport.owner.pages import SURFACE as OWNER
from autoport.web import locale
from autoport.web.surface import Surface

PLACEHOLDER = re.compile(r"%\((\w+)\)s")
ROOT = Path(__file__).resolve().parents[2]
SURFACES = {"consent": CONSENT, "owner": OWNER, "console": CONSOLE}


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_every_message_is_translated_to_german(name: str) -> None:
    surface: Surface = SURFACES[name]
    assert surface.untranslated("de-DE") == []
    german = surface.translations("de-DE")
    assert german.gettext("Skip to main content") != "Skip to main content"


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_translations_keep_their_placeholders(name: str) -> None:
    surface: Surface = SURFACES[name]
    german = surface.translations("de-DE")
    for message in surface.extract_messages():
        ids = tuple(message.id) if isinstance(message.id, tuple | list) else (str(message.id),)
        if not ids[0]:
            continue
        translated = german.ngettext(ids[0], ids[1], 2) if len(ids) == 2 else german.gettext(ids[0])
        assert set(PLACEHOLDER.findall(translated)) == set(PLACEHOLDER.findall(ids[-1])), ids


def test_the_catalogues_are_in_step_with_the_templates() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/messages.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_dates_are_formatted_per_locale() -> None:
    moment = 1_803_130_200_000_000  # 2027-02-20 13:30 UTC
    assert locale.format_instant(moment, "en-GB") == "20 Feb 2027, 13:30:00 UTC"
    assert locale.format_instant(moment, "de-DE") == "20.02.2027, 13:30:00 UTC"


def test_numbers_are_formatted_per_locale() -> None:
    for surface in SURFACES.values():
        assert surface.environment("de-DE").filters["number"](12345) == "12.345"
        assert surface.environment("en-GB").filters["number"](12345) == "12,345"
