"""Every console message has its German translation (all .po files of de_DE merged)."""

from __future__ import annotations

import re

from autoport.console import pages

from .audit_codes import written_actions


def test_every_message_is_translated_to_german() -> None:
    assert pages.untranslated("de-DE") == []


def test_placeholders_survive_translation() -> None:
    catalog = pages.catalog("de-DE")
    for message in catalog:
        if not message.id or not message.string:
            continue
        placeholders = set(re.findall(r"%\(\w+\)s", str(message.id)))
        assert placeholders == set(re.findall(r"%\(\w+\)s", str(message.string))), message.id


def test_every_audit_action_written_has_words_in_both_languages() -> None:
    written = written_actions()
    assert {"signin", "application_created", "sandbox.step", "fleet.add"} <= set(written)
    missing = sorted(code for code in written if code not in pages.AUDIT_ACTIONS)
    assert missing == [], f"audit actions without words in pages.AUDIT_ACTIONS: {missing}"
    german = pages.catalog("de-DE")
    for code in written:
        english = pages.action_name("en-GB", code)
        assert english != code, code
        entry = german.get(pages.AUDIT_ACTIONS[code])
        assert entry is not None and entry.string, f"{code}: no German words"
        assert pages.action_name("de-DE", code) == entry.string != english, code
