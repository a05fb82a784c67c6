"""Languages and how the pages write instants and numbers for their reader.

The pages speak en-GB and de-DE. Which one a reader gets is negotiated once here
(`negotiate`): what the reader chose (a `lang` link, a stored choice, an application's
`locale` parameter), else the browser's Accept-Language by its q-values, else en-GB.

Instants are written in the reader's time zone, with the zone's short name, inside a
`<time>` element whose `datetime` is the instant in UTC and whose `title` (shown on hover)
is the same instant written in UTC. The reader's zone is what the browser said when it
can say it (the console's script stores `Intl`'s zone in a cookie, `TIME_ZONE_COOKIE`);
pages without script (consent, owner portal) use the zone of the locale's region
(en-GB: Europe/London, de-DE: Europe/Berlin), always named next to the time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from urllib.parse import urlencode
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel.dates import format_datetime
from babel.numbers import format_decimal
from markupsafe import Markup

LOCALES = ("en-GB", "de-DE")
DEFAULT_LOCALE = "en-GB"
LANGUAGE_NAMES = {"en-GB": "English", "de-DE": "Deutsch"}
# Where a reader of the locale most likely is, when the browser did not say.
REGION_ZONES = {"en-GB": "Europe/London", "de-DE": "Europe/Berlin"}
# The zone the console's script read from the browser (`Intl`), an IANA name.
TIME_ZONE_COOKIE = "autoport_tz"
MICROS = 1_000_000


def babel_locale(locale: str) -> str:
    return locale.replace("-", "_")


def supported(tag: str | None) -> str | None:
    """The page locale for a language tag (`de`, `de-AT`, `de_DE` -> de-DE), or None."""
    if not tag:
        return None
    language = tag.strip().replace("_", "-").lower().split("-")[0]
    return {"en": "en-GB", "de": "de-DE"}.get(language)


def negotiate(*chosen: str | None, accept_language: str | None) -> str:
    """The first supported of the reader's explicit choices, else the browser's
    preference (Accept-Language, by q-value, in order among equals), else en-GB."""
    for candidate in chosen:
        found = supported(candidate)
        if found:
            return found
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        if tag and quality > 0:
            ranked.append((-quality, index, tag))
    for _, _, tag in sorted(ranked):
        found = supported(tag)
        if found:
            return found
    return DEFAULT_LOCALE


def language_links(path: str, keep: Iterable[tuple[str, str]] = ()) -> dict[str, str]:
    """Each language's link to the page at `path` (the browser's path, the environment's
    prefix included), keeping the query parameters `keep`."""
    kept = [(name, value) for name, value in keep if name != "lang"]
    return {code: f"{path}?{urlencode([*kept, ('lang', code)])}" for code in LOCALES}


@lru_cache(maxsize=64)
def zone(name: str | None, locale: str) -> tzinfo:
    """The reader's zone: `name` when it is a real IANA zone, else the locale's."""
    if name and len(name) < 64 and "." not in name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return ZoneInfo(REGION_ZONES.get(locale, "UTC"))


def _moment(us: int) -> datetime:
    return datetime.fromtimestamp(us / MICROS, tz=UTC)


def format_instant(us: int, locale: str, where: tzinfo = UTC) -> str:
    """`20 Feb 2027, 14:30:00 MEZ`: the locale's medium date and time in `where`, with
    the zone's short name (`UTC` by default)."""
    moment = _moment(us)
    text = format_datetime(moment, "medium", tzinfo=where, locale=babel_locale(locale))
    if where is UTC:
        return f"{text} UTC"
    return f"{text} {format_datetime(moment, 'z', tzinfo=where, locale=babel_locale(locale))}"


@dataclass(frozen=True, slots=True)
class Formats:
    """How one reader is written to: their locale and their time zone."""

    locale: str
    where: tzinfo

    def instant(self, us: int | None) -> Markup:
        """An instant as a `<time>` element: local text, UTC in `datetime` and `title`."""
        if us is None:
            return Markup("")
        iso = _moment(us).strftime("%Y-%m-%dT%H:%M:%SZ")
        return Markup('<time datetime="{}" title="{}">{}</time>').format(
            iso,
            format_instant(us, self.locale),
            format_instant(us, self.locale, self.where),
        )

    def instant_text(self, us: int | None) -> str:
        return "" if us is None else format_instant(us, self.locale, self.where)

    def number(self, value: float | int) -> str:
        return str(format_decimal(value, locale=babel_locale(self.locale)))


def formats(locale: str, zone_name: str | None = None) -> Formats:
    return Formats(locale, zone(zone_name, locale))
