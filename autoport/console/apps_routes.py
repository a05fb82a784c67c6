"""The Applications page: list, create, change, credentials (shown once), secret
rotation with overlap, assertion keys (generated pair downloaded once, or a pasted
public key), disable and enable.

Every rule is the admin API's: requests are parsed with its request models
(autoport/apps/routes.py) and carried out by autoport/apps/service.py; their errors are
shown next to the field with the API's words. The console adds only the account check
(an application of another account is a 404) and the audit log.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

import orjson
from pydantic import ValidationError
from starlette.responses import Response

from autoport.apps import keys as apps_keys
from autoport.apps import service as apps_service
from autoport.apps.schemas import (
    CLIENT_TYPES,
    Application,
    ApplicationIn,
    ApplicationPatch,
    KeyIn,
    RotateIn,
)
from autoport.catalog import CATALOG
from autoport.catalog.commands import COMMANDS
from autoport.catalog.labels import capability_label, label
from autoport.console import access
from autoport.console.access import AccountPage, AccountPageDep, ChangeDep, console_router
from autoport.console.app_pages import brand_choices, usable_brands
from autoport.kit import paging
from autoport.kit.clock import to_iso
from autoport.kit.environments import public_base_url, token_endpoint
from autoport.kit.errors import ApiError
from autoport.web.http import download

router = console_router()


@dataclass(frozen=True, slots=True)
class PickerGroup:
    name: str
    label: str
    items: tuple[tuple[str, str], ...]  # ("capability.property", label)


@lru_cache(maxsize=4)
def property_picker(locale: str) -> tuple[PickerGroup, ...]:
    """The catalog grouped by capability, with the locale's names (cached: the catalog
    never changes while running)."""
    groups = []
    for capability in CATALOG.capabilities():
        items = tuple(
            (f"{capability.name}.{prop.name}", label(prop, locale))
            for prop in capability.properties
            if not prop.deprecated
        )
        if items:
            groups.append(PickerGroup(capability.name, label(capability, locale), items))
    return tuple(groups)


@lru_cache(maxsize=4)
def command_picker(locale: str) -> tuple[PickerGroup, ...]:
    """The vehicle commands (autoport.catalog.commands) grouped by capability, in the
    command catalog's order, with their plain-word names."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for command in COMMANDS:
        groups.setdefault(command.capability, []).append((command.key, command.label(locale)))
    return tuple(
        PickerGroup(name, capability_label(name, locale), tuple(items))
        for name, items in groups.items()
    )


@dataclass(frozen=True, slots=True)
class RegisteredCommand:
    key: str
    label: str
    scopes: tuple[str, ...]


def registered_commands(application: Application, locale: str) -> list[RegisteredCommand]:
    """The application's commands with the `set` scopes each one needs."""
    out = []
    for key in application.commands:
        command = COMMANDS.by_key(key)
        if command is not None:
            out.append(RegisteredCommand(key, command.label(locale), command.scopes))
    return out


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _settings(page: AccountPage) -> dict[str, Any]:
    """The settings of the create and change forms, as the admin API's models read them."""
    form, lists = page.form, page.lists
    return {
        "name": form.get("name", ""),
        "redirect_uris": _lines(form.get("redirect_uris", "")),
        "properties": lists.get("properties", []),
        "commands": lists.get("commands", []),
        "brands": lists.get("brands", []),
        "url_scheme": form.get("url_scheme", "").strip() or None,
        "company": form.get("company", "").strip() or None,
        "privacy_url": form.get("privacy_url", "").strip() or None,
    }


# ------------------------------------------------------------------------- list


@router.get("/a/{account_id}/applications")
async def applications(page: AccountPageDep) -> Response:
    state = page.state
    size = state.settings.console_page_size
    search = page.request.query_params.get("q", "").strip()[:200]
    scope = ("console-apps", str(page.environment), page.account_id, search)
    cursor = page.request.query_params.get("cursor")
    after = paging.decode_cursor(state.token_key, scope, cursor, (int, str)) if cursor else None
    found = await apps_service.list_applications_of_account(
        state.database.reader, page.environment, page.account_id, limit=size + 1, after=after,
        search=search or None,
    )  # fmt: skip
    next_url = None
    if len(found) > size:
        found = found[:size]
        token = paging.encode_cursor(state.token_key, scope, (found[-1].created_at, found[-1].id))
        query = "?" + urlencode({"q": search, "cursor": token} if search else {"cursor": token})
        next_url = page.url("applications") + query
    return page.render("applications.html", applications=found, next_url=next_url, search=search)


# ----------------------------------------------------------------------- create


def _form_page(
    page: AccountPage,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
) -> Response:
    locale = page.principal.locale
    return page.render(
        "application_new.html",
        status=status,
        errors=errors or {},
        values=values
        or {"client_type": "confidential", "brands": [], "properties": [], "commands": []},
        client_types=CLIENT_TYPES,
        brands=brand_choices(usable_brands(page.environment)),
        picker=property_picker(locale),
        command_picker=command_picker(locale),
        environment_name=str(page.environment),
    )


@router.get("/a/{account_id}/applications/new")
async def new_application(page: AccountPageDep) -> Response:
    access.require_change(page.request, page.principal)
    return _form_page(page)


@router.post("/a/{account_id}/applications")
async def create_application(page: ChangeDep) -> Response:
    """Create through the apps service; the next page shows the client secret, once."""
    values = {**_settings(page), "client_type": page.form.get("client_type") or "confidential"}
    try:
        body = ApplicationIn.model_validate({**values, "account_id": page.account_id})
        async with page.state.database.transaction() as conn:
            application, secret = await apps_service.create_application(
                conn,
                environment=page.environment,
                account_id=page.account_id,
                name=body.name,
                redirect_uris=body.redirect_uris,
                properties=body.properties,
                brands=body.brands,
                client_type=body.client_type,
                commands=body.commands,
                now_us=page.state.clock.now_us(),
                url_scheme=body.url_scheme,
                company=body.company,
                privacy_url=body.privacy_url,
            )
            await page.audit(
                conn,
                action="application_created",
                target=application.id,
                detail={"name": application.name, "client_type": application.client_type},
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        values["redirect_uris"] = page.form.get("redirect_uris", "")
        return _form_page(page, status=status, errors=page.errors(error), values=values)
    return await page.flash(f"applications/{application.id}/created", {"client_secret": secret})


@router.get("/a/{account_id}/applications/{app_id}/created")
async def application_created(page: AccountPageDep) -> Response:
    """The new application's credentials; its client secret this once (a reload shows
    the rest)."""
    application = page.application
    flashed = await page.flashed()
    return page.render(
        "application_created.html",
        application=application,
        view=apps_service.application_view(application, page.state.settings),
        client_secret=flashed.get("client_secret"),
    )


# ---------------------------------------------------------------------- details


async def _details_page(
    page: AccountPage,
    application: Application,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
) -> Response:
    state = page.state
    keys, secrets = await apps_service.application_credentials(
        state.database.reader, application.id
    )
    flashed = await page.flashed()
    new_secret = flashed.get("new_secret")
    locale = page.principal.locale
    return page.render(
        "application.html",
        status=status,
        application=application,
        view=apps_service.application_view(application, state.settings),
        keys=keys,
        secrets=secrets,
        errors=errors or {},
        new_secret=tuple(new_secret) if new_secret else None,
        flash=page.request.query_params.get("done"),
        brands=brand_choices(usable_brands(page.environment), application.brands),
        picker=property_picker(locale),
        command_picker=command_picker(locale),
        commands=registered_commands(application, locale),
        overlap=state.settings.oauth_secret_overlap_seconds,
        now_us=state.clock.now_us(),
    )


@router.get("/a/{account_id}/applications/{app_id}")
async def application_page(page: AccountPageDep) -> Response:
    return await _details_page(page, page.application)


async def _change(
    page: AccountPage, application: Application, patch: dict[str, Any], action: str
) -> Response:
    try:
        body = ApplicationPatch.model_validate(patch)
        given = body.model_fields_set
        keep = apps_service.KEEP
        async with page.state.database.transaction() as conn:
            changed = await apps_service.update_application(
                conn,
                environment=page.environment,
                app_id=application.id,
                now_us=page.state.clock.now_us(),
                name=body.name,
                redirect_uris=body.redirect_uris,
                properties=body.properties,
                brands=body.brands,
                commands=body.commands,
                disabled=body.disabled,
                url_scheme=body.url_scheme if "url_scheme" in given else keep,
                company=body.company if "company" in given else keep,
                privacy_url=body.privacy_url if "privacy_url" in given else keep,
            )
            await page.audit(
                conn,
                action=action,
                target=application.id,
                detail={k: v for k, v in patch.items() if k in ("name", "disabled")},
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _details_page(page, application, status=status, errors=page.errors(error))
    if changed.disabled_at is not None:
        page.state.access_changed()  # as the admin API: open streams check again now
    return page.see_other(f"applications/{application.id}?done={action}")


@router.post("/a/{account_id}/applications/{app_id}")
async def update_application(page: ChangeDep) -> Response:
    application = page.application
    return await _change(page, application, _settings(page), "application_updated")


@router.post("/a/{account_id}/applications/{app_id}/disable")
async def disable_application(page: ChangeDep) -> Response:
    application = page.application
    return await _change(page, application, {"disabled": True}, "application_disabled")


@router.post("/a/{account_id}/applications/{app_id}/enable")
async def enable_application(page: ChangeDep) -> Response:
    application = page.application
    return await _change(page, application, {"disabled": False}, "application_enabled")


@router.post("/a/{account_id}/applications/{app_id}/rotate-secret")
async def rotate_secret(page: ChangeDep) -> Response:
    """A new secret, shown on the next page once; the old ones work for the overlap."""
    application = page.application
    raw = page.form.get("overlap_seconds", "").strip()
    try:
        body = RotateIn.model_validate({"overlap_seconds": raw or None})
        overlap = body.overlap_seconds
        if overlap is None:
            overlap = page.state.settings.oauth_secret_overlap_seconds
        async with page.state.database.transaction() as conn:
            secret, old_until = await apps_service.rotate_secret(
                conn, environment=page.environment, app_id=application.id,
                now_us=page.state.clock.now_us(), overlap_seconds=overlap,
            )  # fmt: skip
            await page.audit(
                conn,
                action="secret_rotated",
                target=application.id,
                detail={"overlap_seconds": overlap},
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _details_page(page, application, status=status, errors=page.errors(error))
    return await page.flash(
        f"applications/{application.id}", {"new_secret": [secret, to_iso(old_until)]}
    )


@router.post("/a/{account_id}/applications/{app_id}/keys")
async def add_key(page: ChangeDep) -> Response:
    """Paste a public key (JWK or PEM), or leave it empty to have a pair generated: the
    answer is then the credentials file with the private key, downloaded this once (the
    browser stays on the page)."""
    application = page.application
    pasted = page.form.get("public_key", "").strip()
    try:
        body = KeyIn.model_validate({"public_jwk": pasted or None})
        async with page.state.database.transaction() as conn:
            new = await apps_service.add_key(
                conn, environment=page.environment, app_id=application.id,
                now_us=page.state.clock.now_us(), public_jwk=body.public_jwk,
            )  # fmt: skip
            await page.audit(
                conn,
                action="key_generated" if new.private_jwk else "key_added",
                target=application.id,
                detail={"key_id": new.key.id},
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        errors = page.errors(error)
        if "public_jwk" in errors:
            errors["public_key"] = errors.pop("public_jwk")
        return await _details_page(page, application, status=status, errors=errors)
    if new.private_jwk is None:
        return page.see_other(f"applications/{application.id}?done=key_added")
    base = public_base_url(page.state.settings, page.environment)
    credentials = apps_keys.credentials_file(
        application=application,
        key=new,
        token_url=token_endpoint(page.state.settings, page.environment),
        audience=f"{base}/v1",
    )
    return download(
        orjson.dumps(credentials, option=orjson.OPT_INDENT_2),
        filename=f"autoport-key-{new.key.id}.json",
        media_type="application/json",
    )


@router.post("/a/{account_id}/applications/{app_id}/keys/{key_id}/remove")
async def remove_key(page: ChangeDep, key_id: str) -> Response:
    application = page.application
    try:
        async with page.state.database.transaction() as conn:
            await apps_service.remove_key(
                conn, environment=page.environment, app_id=application.id, key_id=key_id,
                now_us=page.state.clock.now_us(),
            )  # fmt: skip
            await page.audit(
                conn, action="key_removed", target=application.id, detail={"key_id": key_id}
            )
    except ApiError as error:
        return await _details_page(
            page, application, status=error.status, errors=page.errors(error)
        )
    return page.see_other(f"applications/{application.id}?done=key_removed")
