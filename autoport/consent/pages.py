"""Rendering the consent pages: Jinja2 templates, gettext catalogs per locale (Babel),
dates and numbers formatted per locale, and the security headers every page carries.

The catalogs' sources (`locales/<locale>/LC_MESSAGES/messages.po`) are compiled in
memory on first use, so there is no build step and no compiled file to go stale.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from babel.dates import format_datetime
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.support import Translations
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse, Response

from autoport.catalog.labels import group_for_consent

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
LOCALES_DIR = HERE / "locales"
STATIC = HERE / "static"
LOCALES = ("en-GB", "de-DE")
LANGUAGE_NAMES = {"en-GB": "English", "de-DE": "Deutsch"}


def babel_locale(locale: str) -> str:
    return locale.replace("-", "_")


@lru_cache(maxsize=4)
def translations(locale: str) -> Translations:
    po_path = LOCALES_DIR / babel_locale(locale) / "LC_MESSAGES" / "messages.po"
    with po_path.open("rb") as handle:
        catalog = read_po(handle, locale=babel_locale(locale))
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return Translations(fp=buffer)


@lru_cache(maxsize=4)
def environment(locale: str) -> Environment:
    """One Jinja environment per locale: gettext is installed once, never swapped per
    request (requests of both languages run concurrently)."""
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
    env.filters["number"] = lambda value: format_decimal(value, locale=babel_locale(locale))
    return env


def format_instant(us: int, locale: str) -> str:
    moment = datetime.fromtimestamp(us / 1_000_000, tz=UTC)
    text = format_datetime(moment, "medium", tzinfo=UTC, locale=babel_locale(locale))
    return f"{text} UTC"


def gettext(locale: str, message: str) -> str:
    return translations(locale).gettext(message)


@lru_cache(maxsize=512)
def consent_groups(properties: tuple[str, ...], locale: str) -> tuple[Any, ...]:
    """Cached: an application's list is the same for every owner (catalog is immutable)."""
    return tuple(group_for_consent(properties, locale))


@lru_cache(maxsize=512)
def consent_commands(commands: tuple[str, ...], locale: str) -> tuple[str, ...]:
    """The plain-word names of the vehicle commands an application asks for."""
    from autoport.catalog.commands import COMMANDS

    found = (COMMANDS.by_key(key) for key in COMMANDS.ordered(commands))
    return tuple(command.label(locale) for command in found if command is not None)


def content_security_policy(form_targets: tuple[str, ...] = ()) -> str:
    # No script at all; styles only from our own file. Form submissions may end at the
    # application's redirect URI or the carmaker's login (Chromium applies form-action
    # to the redirects that follow a POST), so those origins are listed per page.
    form_action = " ".join(("'self'", *form_targets))
    return (
        "default-src 'none'; style-src 'self'; img-src 'self'; "
        f"form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    )


def security_headers(response: Response, form_targets: tuple[str, ...] = ()) -> Response:
    response.headers["Content-Security-Policy"] = content_security_policy(form_targets)
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response


def render(
    template: str,
    locale: str,
    *,
    status: int = 200,
    form_targets: tuple[str, ...] = (),
    **context: Any,
) -> Response:
    html = environment(locale).get_template(template).render(**context)
    response = HTMLResponse(html, status_code=status)
    response.headers["Content-Language"] = locale
    return security_headers(response, form_targets)


@lru_cache(maxsize=1)
def stylesheet() -> bytes:
    # The look shared with the console (kit/static/base.css), then the consent pages' own.
    shared = (Path(__file__).parent.parent / "kit" / "static" / "base.css").read_bytes()
    return shared + b"\n" + (STATIC / "consent.css").read_bytes()


def extract_messages() -> Catalog:
    """Every message of the templates, as Babel extracts them (scripts/consent_messages.py
    updates the .po files from this; a test checks each one is translated)."""
    from babel.messages.extract import extract_from_dir

    catalog = Catalog(project="autoport consent", fuzzy=False)
    options = {"**.html": {"extensions": "jinja2.ext.i18n", "trim_blocks": "True",
                           "lstrip_blocks": "True"}}  # fmt: skip
    for _, _, message, comments, context in extract_from_dir(
        str(TEMPLATES),
        method_map=[("**.html", "jinja2.ext:babel_extract")],
        options_map=options,
    ):
        catalog.add(message, None, auto_comments=comments, context=context)
    return catalog
