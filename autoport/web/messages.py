"""Keeping a surface's catalogue in step with its templates: what `scripts/messages.py`
runs for every surface.

Every message Babel extracts (`Surface.extract_messages`) gets an entry in the German
catalogue: existing translations are kept, new messages are added untranslated, messages
no template says any more are dropped. English is the source language (no catalogue).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from autoport.web.surface import Surface

TRANSLATED = ("de-DE",)


@dataclass(frozen=True, slots=True)
class Report:
    surface: str
    locale: str
    untranslated: tuple[str, ...]
    stale: bool  # the file on disk differs from what the templates say


def _written(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_po(buffer, catalog, omit_header=False, sort_output=True, width=88)
    return buffer.getvalue()


def _body(po: bytes) -> bytes:
    # The header carries a creation date: compare the messages only.
    return po.split(b"\n\n", 1)[-1]


def updated(surface: Surface, locale: str) -> tuple[bytes, tuple[str, ...]]:
    """The catalogue of `locale` as the templates say it now, and its untranslated ids."""
    old = surface.catalogue(locale)
    new = Catalog(locale=locale.replace("-", "_"), project=f"autoport {surface.name}", fuzzy=False)
    missing: list[str] = []
    for message in surface.extract_messages():
        if not message.id:
            continue
        known = old.get(message.id)
        string = known.string if known is not None and not known.fuzzy else ""
        if isinstance(message.id, tuple) and not string:
            string = ("", "")  # a plural's forms
        flags = ("python-format",) if "%(" in str(message.id) else ()
        new.add(message.id, string, flags=flags)
        done = all(string) if isinstance(string, tuple) else bool(string)
        if not done:
            missing.append(message.id if isinstance(message.id, str) else message.id[0])
    return _written(new), tuple(missing)


def update(surface: Surface, *, check: bool) -> list[Report]:
    """Write (or with `check`, only compare) each translated locale's catalogue."""
    reports = []
    for locale in TRANSLATED:
        path = surface.catalogue_path(locale)
        content, missing = updated(surface, locale)
        current = path.read_bytes() if path.exists() else b""
        stale = _body(content) != _body(current)
        if stale and not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        reports.append(Report(surface.name, locale, missing, stale))
    return reports
