"""The console's own words: every audit action and command capability has a name in
both languages (that every message is translated: tests/web/test_messages.py)."""

from __future__ import annotations

from autoport.catalog import CATALOG
from autoport.catalog.commands import COMMANDS
from autoport.catalog.labels import COMMAND_ONLY_CAPABILITIES, capability_label, label
from autoport.console import pages

from .audit_codes import written_actions


def test_every_audit_action_written_has_words_in_both_languages() -> None:
    written = written_actions()
    assert {"signin", "application_created", "sandbox.step", "fleet.add"} <= set(written)
    missing = sorted(code for code in written if code not in pages.AUDIT_ACTIONS)
    assert missing == [], f"audit actions without words in pages.AUDIT_ACTIONS: {missing}"
    german = pages.SURFACE.catalogue("de-DE")
    for code in written:
        english = pages.action_name("en-GB", code)
        assert english != code, code
        entry = german.get(pages.AUDIT_ACTIONS[code])
        assert entry is not None and entry.string, f"{code}: no German words"
        assert pages.action_name("de-DE", code) == entry.string != english, code


def test_every_command_capability_has_a_name_in_both_languages() -> None:
    # The command picker's groups: the catalog's labels, and for capabilities that only
    # have commands the catalog's COMMAND_ONLY_CAPABILITIES (never the code's words).
    for capability in {command.capability for command in COMMANDS}:
        assert CATALOG.has_capability(capability) or capability in COMMAND_ONLY_CAPABILITIES
        english = capability_label(capability, "en-GB")
        german = capability_label(capability, "de-DE")
        assert english and german and "_" not in english, capability
    assert capability_label("home_charger", "de-DE") == "Wallbox"
    assert capability_label("charging", "de-DE") == label(CATALOG.capability("charging"), "de-DE")
