"""The developer console's surface (autoport.web): its templates, catalogue and static
files, the navigation, and what every console template sees.

How to add a page (the whole recipe; `routes.py` has the request side):

1. **Route.** A module `autoport/console/<name>_routes.py` with
   `router = console_router()` (access.py: under `/console`; the `/sandbox` prefix is
   stripped before routing, so one route serves both consoles), imported in
   `routes.console_router_with_pages`. Account pages live under
   `/console/a/{account_id}/...`.
2. **Who may see it.** Take `page: AccountPageDep` (access.AccountPage): it answers the
   sign-in redirect when nobody is signed in, and a 404 page when the account is not the
   user's (or not of this environment). Look every row up *through* the account
   (`page.application(app_id)`, `... WHERE account_id = :account_id`): an id from the
   URL that belongs to another account must be a 404, never its data.
3. **Changes (POST).** Take `page: ChangeDep` (or `OwnerChangeDep` for users and
   invitations): the form is read into `page.form` with its CSRF token checked (403 page)
   and the role checked (viewer: 403 page). Call the feature's own service (the admin
   API's: `autoport/apps/service.py`, ...), never a second implementation of a rule; an
   `ApiError` it raises becomes the form's error (`page.errors(error)`: the API's words,
   a request model's in plain words of the reader's language). Record the change with
   `page.record(conn, action, ...)` in its transaction. Answer with a redirect to a GET
   page (`page.see_other`); what that page must show once goes through `page.flash`.
4. **Template.** `templates/<name>.html` extending `base.html`; render it with
   `page.render("<name>.html", title=..., ...)` (`render` below). Every form has
   `<input type="hidden" name="csrf_token" value="{{ csrf_token }}">`. No inline script
   or style (the CSP forbids them): behaviour goes into `static/console.js` (progressive
   enhancement: every page works without script), htmx attributes are fine (htmx is
   loaded on every page; `hx-post` forms send the CSRF field like any form).
5. **Navigation.** A `NavEntry` in `NAV` below (its `order` decides the position, its
   `roles` who sees it, `environments` where).
6. **Words.** Every text through `_()`/`{% trans %}`; its German in
   `locales/de_DE/LC_MESSAGES/messages.po` (`python scripts/messages.py` adds the new
   messages; English needs no entry). `tests/web/test_messages.py` checks that every
   message has one.
7. **Tests.** `tests/console/conftest.py` has signed-in clients for the operator and each
   role of two accounts; add your page's URLs to `ACCOUNT_PAGES` in
   `tests/console/test_access.py` so the cross-account and viewer tests cover it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from autoport.kit.environments import Environment as DeploymentEnvironment
from autoport.kit.environments import public_base_url
from autoport.web import http
from autoport.web import locale as locales
from autoport.web.http import prefix
from autoport.web.surface import BASE_CSS, Surface

if TYPE_CHECKING:
    from autoport.console.access import Principal

HERE = Path(__file__).parent
STATIC = HERE / "static"
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


def _globals(locale: str) -> dict[str, Any]:
    return {
        "role_name": lambda role: gettext(locale, ROLE_NAMES.get(role) or str(role)),
        "action_name": lambda code: action_name(locale, str(code)),
    }


SURFACE = Surface("console", HERE, scripts=True, python_messages=True, globals_for=_globals)


def gettext(locale: str, message: str) -> str:
    return SURFACE.gettext(locale, message)


def url(request: Request, path: str) -> str:
    """The browser's address of a console path (`/console/...`)."""
    return prefix(request) + path


def see_other(location: str) -> Response:
    return http.see_other(location, scripts=True)


def security_headers(response: Response) -> Response:
    """The console's policy: its own scripts (htmx, console.js) may run and fetch."""
    return http.security_headers(response, scripts=True)


def language_links(request: Request) -> dict[str, str]:
    """Each language's link: this page with `?lang=` (the console remembers the choice,
    access.remember_language)."""
    return locales.language_links(
        url(request, request.url.path), request.query_params.multi_items()
    )


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
    chosen, context = _context(request, principal, locale, context)
    return SURFACE.render(
        template, chosen, status=status, headers=headers, zone=_zone(request), **context
    )


def fragment(request: Request, principal: Principal | None, template: str, **context: Any) -> str:
    """A template as text with `render`'s context (a live view's event, live.py)."""
    chosen, context = _context(request, principal, None, context)
    return SURFACE.text(template, chosen, zone=_zone(request), **context)


def _zone(request: Request) -> str | None:
    """The reader's time zone as the console's script read it from the browser."""
    return request.cookies.get(locales.TIME_ZONE_COOKIE)


def _context(
    request: Request,
    principal: Principal | None,
    locale: str | None,
    context: dict[str, Any],
) -> tuple[str, dict[str, Any]]:
    """(the locale, what every console template sees and the page's own `context`)."""
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
    common = {
        "principal": principal,
        "csrf_token": principal.csrf_token if principal else context.pop("csrf_token", ""),
        "link": link,
        "static": lambda name: url(request, f"{PREFIX}/static/{name}"),
        "nav": nav,
        "switch": language_links(request),
        "deployment_environment": str(env),
        "other_console": public_base_url(state.settings, other_env) + PREFIX + "/",
        "other_environment": str(other_env),
    }
    return chosen, {**common, **context}


@lru_cache(maxsize=8)
def static_file(name: str) -> bytes:
    """A file of the console's static folder; `base.css` is the look it shares with the
    consent pages and the owner portal (autoport.web)."""
    return (BASE_CSS if name == "base.css" else STATIC / name).read_bytes()
