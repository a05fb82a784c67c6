"""Rendering the developer console: Jinja2 templates, gettext catalogs (en-GB, de-DE),
the navigation, and the security headers every console response carries.

How to add a page (the whole recipe; `routes.py` has the request side):

1. **Route.** A module `autoport/console/<name>_routes.py` with
   `router = APIRouter(prefix=PREFIX)` (`PREFIX` from `access.py`, i.e. `/console`; the
   `/sandbox` prefix is stripped before routing, so one route serves both consoles), and
   its name appended to `PAGE_MODULES` in `routes.py`. Account pages live under
   `/console/a/{account_id}/...`.
2. **Who may see it.** Take the principal with `principal = await access.account_page(
   request, account_id)`: it answers the sign-in redirect when nobody is signed in, and a
   404 page when the account is not the user's (or not of this environment). Look every
   row up *through* the account (`... WHERE account_id = :account_id`): an id from the
   URL that belongs to another account must be a 404, never its data.
3. **Changes (POST).** `form = await access.checked_form(request, principal)`: refuses a
   missing or wrong CSRF token (403 page). Then `access.require_change(principal)`
   (viewer: 403) or `access.require_owner(principal)` (users and invitations). Call the
   feature's own service (the admin API's: `autoport/apps/service.py`, ...), never a
   second implementation of a rule; an `ApiError` it raises becomes the form's error
   with the API's message (`errors_of(error)`). Record the change with
   `service.audit(...)`. Answer 303 to a GET page after success.
4. **Template.** `templates/<name>.html` extending `base.html`; render it with
   `render(request, principal, "<name>.html", title=..., ...)` (below). Every form has
   `<input type="hidden" name="csrf_token" value="{{ csrf_token }}">`. No inline script
   or style (the CSP forbids them): behaviour goes into `static/console.js` (progressive
   enhancement: every page works without script), htmx attributes are fine (htmx is
   loaded on every page; `hx-post` forms send the CSRF field like any form).
5. **Navigation.** A `NavEntry` in `NAV` below (its `order` decides the position, its
   `roles` who sees it, `environments` where).
6. **Words.** Every text through `_()`/`{% trans %}`; its German in
   `locales/de_DE/LC_MESSAGES/<name>.po` (one .po file per page group, all files of a
   locale are merged, so parallel work never edits the same file); English needs no
   entry. `tests/console/test_translations.py` checks that every message has one.
7. **Tests.** `tests/console/conftest.py` has signed-in clients for the operator and each
   role of two accounts; add your page's URLs to `ACCOUNT_PAGES` in
   `tests/console/test_access.py` so the cross-account and viewer tests cover it.

The catalogs' sources are compiled in memory on first use: no build step.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from babel.dates import format_datetime
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.support import Translations
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from autoport.kit.environments import Environment as DeploymentEnvironment
from autoport.kit.environments import public_base_url

if TYPE_CHECKING:
    from autoport.console.access import Principal

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
LOCALES_DIR = HERE / "locales"
STATIC = HERE / "static"
LOCALES = ("en-GB", "de-DE")
DEFAULT_LOCALE = "en-GB"
LANGUAGE_NAMES = {"en-GB": "English", "de-DE": "Deutsch"}
HTMX_VERSION = "2.0.4"

# Roles, strongest first. `operator` is the deployment's operator (admin token).
OPERATOR = "operator"
OWNER = "owner"
DEVELOPER = "developer"
VIEWER = "viewer"
USER_ROLES = (OWNER, DEVELOPER, VIEWER)
ALL_ROLES = (OPERATOR, *USER_ROLES)


@dataclass(frozen=True, slots=True)
class NavEntry:
    """One link of the account navigation: `/console/a/{account_id}/{path}`."""

    order: int
    path: str
    label: str  # an English msgid, translated when rendered
    roles: tuple[str, ...] = ALL_ROLES
    environments: tuple[DeploymentEnvironment, ...] = tuple(DeploymentEnvironment)
    # Also current on pages whose path contains one of these (e.g. an application's
    # webhook page, under /applications/{id}/webhook, belongs to Webhooks).
    also: tuple[str, ...] = ()


def _(message: str) -> str:
    """Marks a msgid for extraction (translated at render time)."""
    return message


ROLE_NAMES = {
    OPERATOR: _("operator"),
    OWNER: _("owner"),
    DEVELOPER: _("developer"),
    VIEWER: _("viewer"),
}

# The audit log's action codes (what `service.audit(action=...)` writes) in plain words;
# tests/console/test_translations.py collects the codes from the source and checks each
# has its words here and in German.
AUDIT_ACTIONS = {
    "account_created": _("Account created"),
    "application_created": _("Application created"),
    "application_disabled": _("Application disabled"),
    "application_enabled": _("Application enabled"),
    "application_updated": _("Application changed"),
    "fleet.add": _("Vehicles added to the fleet"),
    "fleet.remove": _("Vehicle removed from the fleet"),
    "invitation_accepted": _("Invitation accepted"),
    "invitation_created": _("Invitation created"),
    "invitation_withdrawn": _("Invitation withdrawn"),
    "key_added": _("Public key added"),
    "key_generated": _("Key pair generated"),
    "key_removed": _("Key removed"),
    "password_reset": _("Password reset"),
    "reset_created": _("Password reset link created"),
    "role_changed": _("Role changed"),
    "sandbox.behaviour": _("Sandbox vehicle's behaviour changed"),
    "sandbox.clear": _("Sandbox vehicle's property released"),
    "sandbox.clear_failure": _("Sandbox vehicle's failure cleared"),
    "sandbox.create": _("Sandbox vehicle created"),
    "sandbox.delete": _("Sandbox vehicle deleted"),
    "sandbox.failure": _("Failure injected into a sandbox vehicle"),
    "sandbox.property": _("Sandbox vehicle's property set"),
    "sandbox.scenario": _("Sandbox vehicle's scenario changed"),
    "sandbox.step": _("Sandbox vehicle advanced"),
    "secret_rotated": _("Client secret rotated"),
    "signin": _("Signed in"),
    "signin_failed": _("Sign-in failed"),
    "signout": _("Signed out"),
    "streaming.credentials": _("MQTT password issued"),
    "user_removed": _("User removed"),
    "webhook_redelivered": _("Webhook delivery sent again"),
    "webhook_removed": _("Webhook removed"),
    "webhook_saved": _("Webhook saved"),
    "webhook_test_sent": _("Webhook test event sent"),
}


def action_name(locale: str, code: str) -> str:
    """An audit action in the locale's words (an unknown code as it is)."""
    words = AUDIT_ACTIONS.get(code)
    return gettext(locale, words) if words else code


NAV: tuple[NavEntry, ...] = (
    NavEntry(10, "applications", _("Applications")),
    NavEntry(20, "webhooks", _("Webhooks"), also=("/webhook",)),
    # 30..60: Fleet, Sandbox vehicles (sandbox only), Streaming, Usage.
    NavEntry(30, "fleet", _("Fleet")),
    NavEntry(40, "sandbox", _("Sandbox vehicles"), environments=(DeploymentEnvironment.sandbox,)),
    NavEntry(50, "streaming", _("Streaming")),
    NavEntry(60, "usage", _("Usage")),
    NavEntry(80, "users", _("Users")),
    NavEntry(90, "audit", _("Audit log"), roles=(OPERATOR, OWNER)),
)


def nav_for(role: str, environment: DeploymentEnvironment) -> list[NavEntry]:
    return sorted(
        (e for e in NAV if role in e.roles and environment in e.environments),
        key=lambda e: e.order,
    )


def babel_locale(locale: str) -> str:
    return locale.replace("-", "_")


def supported_locale(value: str | None) -> str | None:
    if not value:
        return None
    wanted = value.strip().replace("_", "-").lower()
    for locale in LOCALES:
        if locale.lower() == wanted or locale.split("-")[0] == wanted:
            return locale
    return None


def locale_from(accept_language: str | None) -> str:
    """The browser's first supported language, else en-GB."""
    for part in (accept_language or "").split(","):
        chosen = supported_locale(part.split(";")[0])
        if chosen:
            return chosen
    return DEFAULT_LOCALE


@lru_cache(maxsize=4)
def catalog(locale: str) -> Catalog:
    """Every .po file of the locale, merged (one file per page group)."""
    merged = Catalog(locale=babel_locale(locale))
    for po_path in sorted((LOCALES_DIR / babel_locale(locale) / "LC_MESSAGES").glob("*.po")):
        with po_path.open("rb") as handle:
            for message in read_po(handle, locale=babel_locale(locale)):
                if message.id and message.string:
                    merged[message.id] = message
    return merged


@lru_cache(maxsize=4)
def translations(locale: str) -> Translations:
    buffer = io.BytesIO()
    write_mo(buffer, catalog(locale), use_fuzzy=False)
    buffer.seek(0)
    return Translations(fp=buffer)


def gettext(locale: str, message: str) -> str:
    return translations(locale).gettext(message)


def format_instant(us: int | None, locale: str) -> str:
    if us is None:
        return ""
    moment = datetime.fromtimestamp(us / 1_000_000, tz=UTC)
    text = format_datetime(moment, "medium", tzinfo=UTC, locale=babel_locale(locale))
    return f"{text} UTC"


@lru_cache(maxsize=4)
def environment(locale: str) -> Environment:
    """One Jinja environment per locale (gettext installed once, never swapped)."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_translations(translations(locale), newstyle=True)  # type: ignore[attr-defined]
    env.globals["locale"] = locale
    env.globals["languages"] = LANGUAGE_NAMES
    env.globals["role_name"] = lambda role: gettext(locale, ROLE_NAMES.get(role) or str(role))
    env.globals["action_name"] = lambda code: action_name(locale, str(code))
    env.filters["datetime"] = lambda us: format_instant(us, locale)
    env.filters["number"] = lambda value: format_decimal(value, locale=babel_locale(locale))
    return env


def content_security_policy() -> str:
    # Scripts and styles only from our own files (htmx and console.js); no inline code,
    # no eval (htmx is configured without it), nothing from another host.
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )


def security_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = content_security_policy()
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response


def prefix(request: Request) -> str:
    """`/sandbox` in the sandbox console (stripped before routing), else empty."""
    return str(request.scope.get("root_path", ""))


def url(request: Request, path: str) -> str:
    """The browser's address of a console path (`/console/...`)."""
    return prefix(request) + path


def see_other(location: str) -> Response:
    return security_headers(RedirectResponse(location, status_code=303))


def language_links(request: Request) -> dict[str, str]:
    """Each language's link: this page with `?lang=` (routes.py stores the choice)."""
    query = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"]
    base = url(request, request.url.path)
    return {code: f"{base}?{urlencode([*query, ('lang', code)])}" for code in LOCALES}


def render(
    request: Request,
    principal: Principal | None,
    template: str,
    *,
    locale: str | None = None,
    status: int = 200,
    headers: dict[str, str] | None = None,
    **context: Any,
) -> Response:
    """A console page: the template with the navigation, CSRF token, language links and
    URL helper in its context, and the console's security headers."""
    chosen, html = _render(request, principal, template, locale, context)
    response = HTMLResponse(html, status_code=status, headers=headers)
    response.headers["Content-Language"] = chosen
    return security_headers(response)


def fragment(request: Request, principal: Principal | None, template: str, **context: Any) -> str:
    """A template as text with `render`'s context (a live view's event, live.py)."""
    return _render(request, principal, template, None, context)[1]


def _render(
    request: Request,
    principal: Principal | None,
    template: str,
    locale: str | None,
    context: dict[str, Any],
) -> tuple[str, str]:
    """(the locale, the template's text)."""
    from autoport.console.access import PREFIX, request_locale

    state = request.app.state.autoport
    chosen = locale or (principal.locale if principal else request_locale(request))
    env: DeploymentEnvironment = request.scope.get("state", {}).get(
        "environment", DeploymentEnvironment.production
    )
    account_id = context.get("account_id")
    link: Callable[[str], str] = lambda path: url(request, PREFIX + path)  # noqa: E731
    nav = []
    if principal is not None and account_id:
        path = request.url.path
        entries = nav_for(principal.role, env)
        current = next((e for e in entries if any(part in path for part in e.also)), None)
        if current is None:
            own = f"{PREFIX}/a/{account_id}/"
            current = next((e for e in entries if path.startswith(own + e.path)), None)
        for entry in entries:
            nav.append(
                {
                    "href": link(f"/a/{account_id}/{entry.path}"),
                    "label": gettext(chosen, entry.label),
                    "current": entry is current,
                }
            )
    other_env = (
        DeploymentEnvironment.production
        if env is DeploymentEnvironment.sandbox
        else DeploymentEnvironment.sandbox
    )
    html = (
        environment(chosen)
        .get_template(template)
        .render(
            principal=principal,
            csrf_token=principal.csrf_token if principal else context.pop("csrf_token", ""),
            link=link,
            static=lambda name: url(request, f"{PREFIX}/static/{name}"),
            nav=nav,
            switch=language_links(request),
            deployment_environment=str(env),
            other_console=public_base_url(state.settings, other_env) + PREFIX + "/",
            other_environment=str(other_env),
            **context,
        )
    )
    return chosen, html


# The stylesheet the console shares with the consent and owner pages.
BASE_CSS = HERE.parent / "kit" / "static" / "base.css"


@lru_cache(maxsize=8)
def static_file(name: str) -> bytes:
    return (BASE_CSS if name == "base.css" else STATIC / name).read_bytes()


def extract_messages() -> Catalog:
    """Every message of the templates and of this package's `_()` calls, as Babel
    extracts them (`python -m autoport.console.pages` prints the untranslated ones)."""
    from babel.messages.extract import extract_from_dir

    catalog = Catalog(project="autoport console", fuzzy=False)
    options = {"**.html": {"extensions": "jinja2.ext.i18n", "trim_blocks": "True",
                           "lstrip_blocks": "True"}}  # fmt: skip
    for _f, _l, message, comments, context in extract_from_dir(
        str(TEMPLATES),
        method_map=[("**.html", "jinja2.ext:babel_extract")],
        options_map=options,
    ):
        catalog.add(message, None, auto_comments=comments, context=context)
    for _f, _l, message, comments, context in extract_from_dir(
        str(HERE), method_map=[("*.py", "python")], keywords={"_": None, "gettext": (2,)}
    ):
        catalog.add(message, None, auto_comments=comments, context=context)
    return catalog


def untranslated(locale: str = "de-DE") -> list[str]:
    """The extracted messages the locale's catalogs do not translate."""
    known = catalog(locale)
    missing = []
    for message in extract_messages():
        if message.id and known.get(message.id) is None:
            missing.append(message.id if isinstance(message.id, str) else message.id[0])
    return missing


if __name__ == "__main__":
    for msgid in untranslated():
        print(repr(msgid))
