"""The pages' words come from gettext catalogs: every message of the templates has a
German translation, placeholders survive translation, and dates follow the locale."""

from __future__ import annotations

import re

from autoport.consent import pages

PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def test_every_template_message_is_translated_to_german() -> None:
    german = pages.translations("de-DE")
    missing = []
    for message in pages.extract_messages():
        if not message.id:
            continue
        if isinstance(message.id, tuple):
            singular, plural = message.id
            if (
                german.ngettext(singular, plural, 1) == singular
                and german.ngettext(singular, plural, 2) == plural
            ):
                missing.append(singular)
        elif german.gettext(str(message.id)) == message.id and message.id not in {"%(brand)s ID"}:
            missing.append(str(message.id))
    assert missing == []


def test_translations_keep_their_placeholders() -> None:
    german = pages.translations("de-DE")
    for message in pages.extract_messages():
        ids = tuple(message.id) if isinstance(message.id, tuple | list) else (str(message.id),)
        if not ids[0]:
            continue
        translated = german.ngettext(ids[0], ids[1], 2) if len(ids) == 2 else german.gettext(ids[0])
        assert set(PLACEHOLDER.findall(translated)) == set(PLACEHOLDER.findall(ids[-1])), ids


def test_dates_are_formatted_per_locale() -> None:
    moment = 1_803_130_200_000_000  # 2027-02-20 13:30 UTC
    assert pages.format_instant(moment, "en-GB") == "20 Feb 2027, 13:30:00 UTC"
    assert pages.format_instant(moment, "de-DE") == "20.02.2027, 13:30:00 UTC"


def test_numbers_are_formatted_per_locale() -> None:
    assert pages.environment("de-DE").filters["number"](12345) == "12.345"
    assert pages.environment("en-GB").filters["number"](12345) == "12,345"
