"""Rendering the owner portal: Jinja2 templates in the consent pages' style (their
stylesheet, security headers, date formats and data-item grouping), with the portal's own
gettext catalog (`locales/de_DE`; English is the source language)."""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.support import NullTranslations, Translations
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse, Response

from autoport.consent import pages as consent_pages

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
LOCALES_DIR = HERE / "locales"
LOCALES = consent_pages.LOCALES
LANGUAGE_NAMES = consent_pages.LANGUAGE_NAMES
security_headers = consent_pages.security_headers
consent_groups = consent_pages.consent_groups
format_instant = consent_pages.format_instant


@lru_cache(maxsize=4)
def translations(locale: str) -> NullTranslations:
    po_path = LOCALES_DIR / consent_pages.babel_locale(locale) / "LC_MESSAGES" / "messages.po"
    if not po_path.exists():
        return NullTranslations()  # the source language
    with po_path.open("rb") as handle:
        catalog = read_po(handle, locale=consent_pages.babel_locale(locale))
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return Translations(fp=buffer)


@lru_cache(maxsize=4)
def environment(locale: str) -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_translations(translations(locale), newstyle=True)  # type: ignore[attr-defined]
    env.globals["locale"] = locale
    env.globals["html_lang"] = locale
    env.filters["datetime"] = lambda us: format_instant(us, locale)
    env.filters["number"] = lambda value: format_decimal(
        value, locale=consent_pages.babel_locale(locale)
    )
    return env


def gettext(locale: str, message: str) -> str:
    return str(translations(locale).gettext(message))


def render(template: str, locale: str, *, status: int = 200, **context: Any) -> Response:
    html = environment(locale).get_template(template).render(**context)
    response = HTMLResponse(html, status_code=status)
    response.headers["Content-Language"] = locale
    return security_headers(response)


@lru_cache(maxsize=1)
def stylesheet() -> bytes:
    return consent_pages.stylesheet() + b"\n" + (HERE / "static" / "owner.css").read_bytes()


def extract_messages() -> Catalog:
    """Every message of the templates (a test checks each one is translated)."""
    from babel.messages.extract import extract_from_dir

    catalog = Catalog(project="autoport owner portal", fuzzy=False)
    options = {"**.html": {"extensions": "jinja2.ext.i18n", "trim_blocks": "True",
                           "lstrip_blocks": "True"}}  # fmt: skip
    for _, _, message, comments, context in extract_from_dir(
        str(TEMPLATES),
        method_map=[("**.html", "jinja2.ext:babel_extract")],
        options_map=options,
    ):
        catalog.add(message, None, auto_comments=comments, context=context)
    return catalog
