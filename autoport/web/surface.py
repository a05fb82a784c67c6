"""A surface: one group of pages (the consent pages, the owner portal, the console) with
its templates, its message catalogue and its stylesheets, rendered the same way.

    SURFACE = Surface("owner portal", Path(__file__).parent, stylesheets=("owner.css",))
    SURFACE.render("vehicle.html", locale, vin=vin, ...)

Per surface package: `templates/` (Jinja2; `web/templates/` is searched after them for
the shared pieces), `locales/de_DE/LC_MESSAGES/messages.po` (its one catalogue: English
is the source language, so English needs none), `static/` (its own stylesheet, served
after `web/static/base.css`).

One Jinja environment per locale, built once: gettext is installed into it and never
swapped per request (requests of both languages run at the same time). The reader's time
zone is not part of the environment: `render` puts the reader's `formats`
(autoport.web.locale.Formats) into the context and the `datetime` filter uses it. The
catalogues are compiled in memory on first use: no build step and no compiled file to go
stale. `scripts/messages.py` keeps them in step with the templates.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, pass_context, select_autoescape
from jinja2.runtime import Context
from markupsafe import Markup
from starlette.responses import HTMLResponse, Response

from autoport.web import locale as locales
from autoport.web.http import security_headers

WEB = Path(__file__).parent
BASE_CSS = WEB / "static" / "base.css"
SOURCE_LOCALE = "en-GB"


@pass_context
def _datetime(context: Context, us: int | None) -> Markup:
    return _formats(context).instant(us)


def _formats(context: Context) -> locales.Formats:
    found = context.get("formats")
    if isinstance(found, locales.Formats):
        return found
    return locales.formats(str(context.get("locale", locales.DEFAULT_LOCALE)))


class Surface:
    def __init__(
        self,
        name: str,
        package: Path,
        *,
        stylesheets: Iterable[str] = (),
        scripts: bool = False,
        python_messages: bool = False,
        globals_for: Callable[[str], dict[str, Any]] | None = None,
        templates: Iterable[Path] = (),
    ) -> None:
        """`name` heads the catalogue; `package` holds templates/, locales/, static/;
        `stylesheets` are its own, served after base.css; `scripts`: its pages load its
        own scripts (the policy allows them); `python_messages`: `_()` in its modules (and
        the web layer's form errors) are messages too; `globals_for(locale)`: names every
        template of the locale sees; `templates`: more folders searched after its own (a
        feature's shared pieces)."""
        self.name = name
        self.package = package
        self.stylesheets = tuple(stylesheets)
        self.scripts = scripts
        self.python_messages = python_messages
        self.globals_for = globals_for
        self.template_dirs = (package / "templates", *templates, WEB / "templates")
        self._environments: dict[str, Environment] = {}
        self._translations: dict[str, NullTranslations] = {}

    @property
    def locales_dir(self) -> Path:
        return self.package / "locales"

    def catalogue_path(self, locale: str) -> Path:
        return self.locales_dir / locales.babel_locale(locale) / "LC_MESSAGES" / "messages.po"

    # ------------------------------------------------------------------ words

    def catalogue(self, locale: str) -> Catalog:
        path = self.catalogue_path(locale)
        if not path.exists():
            return Catalog(locale=locales.babel_locale(locale))
        with path.open("rb") as handle:
            return read_po(handle, locale=locales.babel_locale(locale))

    def translations(self, locale: str) -> NullTranslations:
        found = self._translations.get(locale)
        if found is None:
            if locale == SOURCE_LOCALE or not self.catalogue_path(locale).exists():
                found = NullTranslations()
            else:
                buffer = io.BytesIO()
                write_mo(buffer, self.catalogue(locale), use_fuzzy=False)
                buffer.seek(0)
                found = Translations(fp=buffer)
            self._translations[locale] = found
        return found

    def gettext(self, locale: str, message: str) -> str:
        return str(self.translations(locale).gettext(message))

    def extract_messages(self) -> Catalog:
        """Every message of the templates it draws (its own, the shared ones) and, with
        `python_messages`, of its modules' `_()` calls, as Babel extracts them."""
        from babel.messages.extract import extract_from_dir

        catalog = Catalog(project=f"autoport {self.name}", fuzzy=False)
        options = {"**.html": {"extensions": "jinja2.ext.i18n", "trim_blocks": "True",
                               "lstrip_blocks": "True"}}  # fmt: skip
        for folder in self.template_dirs:
            if not folder.is_dir():
                continue
            found: Iterator[Any] = extract_from_dir(
                str(folder),
                method_map=[("**.html", "jinja2.ext:babel_extract")],
                options_map=options,
            )
            for _path, _line, message, comments, context in found:
                catalog.add(message, None, auto_comments=comments, context=context)
        if self.python_messages:
            # Its modules', and the web layer's (the form errors' words, web/forms.py).
            for folder in (self.package, WEB):
                for _path, _line, message, comments, context in extract_from_dir(
                    str(folder),
                    method_map=[("*.py", "python")],
                    keywords={"_": None, "gettext": (2,)},
                ):
                    catalog.add(message, None, auto_comments=comments, context=context)
        return catalog

    def untranslated(self, locale: str = "de-DE") -> list[str]:
        """The extracted messages the locale's catalogue does not translate."""
        known = self.catalogue(locale)
        missing = []
        for message in self.extract_messages():
            if not message.id:
                continue
            entry = known.get(message.id)
            strings = entry.string if entry is not None else ""
            if not (all(strings) if isinstance(strings, tuple) else strings):
                missing.append(message.id if isinstance(message.id, str) else message.id[0])
        return missing

    # -------------------------------------------------------------- rendering

    def environment(self, locale: str) -> Environment:
        env = self._environments.get(locale)
        if env is None:
            env = Environment(
                loader=ChoiceLoader([FileSystemLoader(path) for path in self.template_dirs]),
                autoescape=select_autoescape(["html"]),
                extensions=["jinja2.ext.i18n"],
                trim_blocks=True,
                lstrip_blocks=True,
            )
            env.install_gettext_translations(self.translations(locale), newstyle=True)  # type: ignore[attr-defined]
            env.globals["locale"] = locale
            env.globals["html_lang"] = locale
            env.globals["languages"] = locales.LANGUAGE_NAMES
            env.filters["datetime"] = _datetime
            # Numbers depend on the locale only: made once per environment.
            env.filters["number"] = locales.formats(locale).number
            if self.globals_for is not None:
                env.globals.update(self.globals_for(locale))
            self._environments[locale] = env
        return env

    def text(self, template: str, locale: str, *, zone: str | None = None, **context: Any) -> str:
        """A template as text (a fragment a live view sends)."""
        context.setdefault("formats", locales.formats(locale, zone))
        return self.environment(locale).get_template(template).render(**context)

    def render(
        self,
        template: str,
        locale: str,
        *,
        status: int = 200,
        form_targets: Iterable[str] = (),
        headers: dict[str, str] | None = None,
        zone: str | None = None,
        **context: Any,
    ) -> Response:
        """The page in `locale` (dates in the reader's `zone`, when known) with the
        security headers: forms may post to this origin and to `form_targets`."""
        html = self.text(template, locale, zone=zone, **context)
        response = HTMLResponse(html, status_code=status, headers=headers)
        response.headers["Content-Language"] = locale
        return security_headers(response, form_targets=form_targets, scripts=self.scripts)

    # ----------------------------------------------------------------- static

    @cached_property
    def stylesheet(self) -> bytes:
        """base.css, then the surface's own rules (which may refine it)."""
        parts = [BASE_CSS.read_bytes()]
        parts += [(self.package / "static" / name).read_bytes() for name in self.stylesheets]
        return b"\n".join(parts)
