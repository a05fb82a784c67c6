"""Every console message has its German translation (all .po files of de_DE merged)."""

from __future__ import annotations

import re

from autoport.console import pages


def test_every_message_is_translated_to_german() -> None:
    assert pages.untranslated("de-DE") == []


def test_placeholders_survive_translation() -> None:
    catalog = pages.catalog("de-DE")
    for message in catalog:
        if not message.id or not message.string:
            continue
        placeholders = set(re.findall(r"%\(\w+\)s", str(message.id)))
        assert placeholders == set(re.findall(r"%\(\w+\)s", str(message.string))), message.id
