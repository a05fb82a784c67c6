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
from fastapi import Request
from pydantic import ValidationError
from starlette.responses import Response

from autoport.apps import keys as apps_keys
from autoport.apps import service as apps_service
from autoport.apps.schemas import (
    CLIENT_TYPES,
    Account,
    Application,
    ApplicationIn,
    ApplicationPatch,
    KeyIn,
    RotateIn,
)
from autoport.catalog import CATALOG
from autoport.catalog.brands import BRANDS
from autoport.catalog.commands import COMMANDS
from autoport.catalog.labels import capability_label, label
from autoport.console import access, pages, service
from autoport.console.access import PREFIX, Principal, console_router
from autoport.console.app_pages import account_application, form_errors
from autoport.kit import paging
from autoport.kit.clock import to_iso
from autoport.kit.environments import Environment, public_base_url, token_endpoint
from autoport.kit.errors import ApiError
from autoport.vehicles.access import sandbox_only_problem

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


def brands_for(environment: Environment) -> list[str]:
    return sorted(b for b in BRANDS if sandbox_only_problem(b, environment) is None)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _one(form: dict[str, list[str]], name: str) -> str:
    return (form.get(name) or [""])[-1]


# ------------------------------------------------------------------------- list


@router.get("/a/{account_id}/applications")
async def applications(request: Request, account_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    state, environment = access.where(request)
    size = state.settings.console_page_size
    search = request.query_params.get("q", "").strip()[:200]
    scope = ("console-apps", str(environment), account.id, search)
    cursor = request.query_params.get("cursor")
    after = paging.decode_cursor(state.token_key, scope, cursor, (int, str)) if cursor else None
    found = await service.list_applications_of_account(
        state.database.reader, environment, account.id, limit=size + 1, after=after,
        search=search or None,
    )  # fmt: skip
    next_url = None
    if len(found) > size:
        found = found[:size]
        token = paging.encode_cursor(state.token_key, scope, (found[-1].created_at, found[-1].id))
        query = "?" + urlencode({"q": search, "cursor": token} if search else {"cursor": token})
        next_url = pages.url(request, f"{PREFIX}/a/{account.id}/applications{query}")
    return pages.render(
        request,
        principal,
        "applications.html",
        account=account,
        account_id=account.id,
        applications=found,
        next_url=next_url,
        search=search,
    )


# ----------------------------------------------------------------------- create


def _form_page(
    request: Request,
    principal: Principal,
    account: Account,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
) -> Response:
    _, environment = access.where(request)
    locale = principal.locale
    return pages.render(
        request,
        principal,
        "application_new.html",
        status=status,
        account=account,
        account_id=account.id,
        errors=errors or {},
        values=values
        or {"client_type": "confidential", "brands": [], "properties": [], "commands": []},
        client_types=CLIENT_TYPES,
        brands=brands_for(environment),
        picker=property_picker(locale),
        command_picker=command_picker(locale),
        environment_name=str(environment),
    )


@router.get("/a/{account_id}/applications/new")
async def new_application(request: Request, account_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    access.require_change(request, principal)
    return _form_page(request, principal, account)


@router.post("/a/{account_id}/applications")
async def create_application(request: Request, account_id: str) -> Response:
    """Create through the apps service; the client secret is on this answer only."""
    principal, account = await access.account_page(request, account_id)
    form = await access.checked_lists(request, principal)
    access.require_change(request, principal)
    state, environment = access.where(request)
    values: dict[str, Any] = {
        "name": _one(form, "name"),
        "redirect_uris": _lines(_one(form, "redirect_uris")),
        "properties": form.get("properties", []),
        "commands": form.get("commands", []),
        "brands": form.get("brands", []),
        "client_type": _one(form, "client_type") or "confidential",
        "url_scheme": _one(form, "url_scheme").strip() or None,
        "company": _one(form, "company").strip() or None,
        "privacy_url": _one(form, "privacy_url").strip() or None,
    }
    now = state.clock.now_us()
    try:
        body = ApplicationIn.model_validate({**values, "account_id": account.id})
        async with state.database.transaction() as conn:
            application, secret = await apps_service.create_application(
                conn,
                environment=environment,
                account_id=account.id,
                name=body.name,
                redirect_uris=body.redirect_uris,
                properties=body.properties,
                brands=body.brands,
                client_type=body.client_type,
                commands=body.commands,
                now_us=now,
                url_scheme=body.url_scheme,
                company=body.company,
                privacy_url=body.privacy_url,
            )
            await service.audit(
                conn,
                environment=environment,
                account_id=account.id,
                actor=principal.actor,
                actor_label=principal.label,
                action="application_created",
                target=application.id,
                detail={"name": application.name, "client_type": application.client_type},
                address=access.address_of(request),
                now_us=now,
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        values["redirect_uris"] = _one(form, "redirect_uris")
        return _form_page(
            request, principal, account, status=status, errors=form_errors(error), values=values
        )
    view = apps_service.application_view(application, state.settings)
    return pages.render(
        request,
        principal,
        "application_created.html",
        account=account,
        account_id=account.id,
        application=application,
        view=view,
        client_secret=secret,
    )


# ---------------------------------------------------------------------- details


async def _details_page(
    request: Request,
    principal: Principal,
    account: Account,
    application: Application,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    new_secret: tuple[str, str] | None = None,
    flash: str | None = None,
) -> Response:
    state, environment = access.where(request)
    conn = state.database.reader
    keys, secrets = await service.application_credentials(conn, application.id)
    return pages.render(
        request,
        principal,
        "application.html",
        status=status,
        account=account,
        account_id=account.id,
        application=application,
        view=apps_service.application_view(application, state.settings),
        keys=keys,
        secrets=secrets,
        errors=errors or {},
        new_secret=new_secret,
        flash=flash or request.query_params.get("done"),
        brands=brands_for(environment),
        picker=property_picker(principal.locale),
        command_picker=command_picker(principal.locale),
        commands=registered_commands(application, principal.locale),
        overlap=state.settings.oauth_secret_overlap_seconds,
        now_us=state.clock.now_us(),
    )


@router.get("/a/{account_id}/applications/{app_id}")
async def application_page(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    application = await account_application(request, principal, account.id, app_id)
    return await _details_page(request, principal, account, application)


async def _change(
    request: Request,
    principal: Principal,
    account: Account,
    application: Application,
    patch: dict[str, Any],
    action: str,
) -> Response:
    state, environment = access.where(request)
    now = state.clock.now_us()
    try:
        body = ApplicationPatch.model_validate(patch)
        async with state.database.transaction() as conn:
            changed = await apps_service.update_application(
                conn,
                environment=environment,
                app_id=application.id,
                now_us=now,
                name=body.name,
                redirect_uris=body.redirect_uris,
                properties=body.properties,
                brands=body.brands,
                commands=body.commands,
                disabled=body.disabled,
                url_scheme=body.url_scheme
                if "url_scheme" in body.model_fields_set
                else apps_service.KEEP,
                company=body.company if "company" in body.model_fields_set else apps_service.KEEP,
                privacy_url=(
                    body.privacy_url
                    if "privacy_url" in body.model_fields_set
                    else apps_service.KEEP
                ),
            )
            await service.audit(
                conn,
                environment=environment,
                account_id=account.id,
                actor=principal.actor,
                actor_label=principal.label,
                action=action,
                target=application.id,
                detail={k: v for k, v in patch.items() if k in ("name", "disabled")},
                address=access.address_of(request),
                now_us=now,
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _details_page(
            request, principal, account, application, status=status, errors=form_errors(error)
        )
    if changed.disabled_at is not None:
        state.access_changed()  # as the admin API: open streams check again now
    target = f"{PREFIX}/a/{account.id}/applications/{application.id}?done={action}"
    return pages.see_other(pages.url(request, target))


@router.post("/a/{account_id}/applications/{app_id}")
async def update_application(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    form = await access.checked_lists(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    patch = {
        "name": _one(form, "name"),
        "redirect_uris": _lines(_one(form, "redirect_uris")),
        "properties": form.get("properties", []),
        "commands": form.get("commands", []),
        "brands": form.get("brands", []),
        "url_scheme": _one(form, "url_scheme").strip() or None,
        "company": _one(form, "company").strip() or None,
        "privacy_url": _one(form, "privacy_url").strip() or None,
    }
    return await _change(request, principal, account, application, patch, "application_updated")


@router.post("/a/{account_id}/applications/{app_id}/disable")
async def disable_application(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    return await _change(
        request, principal, account, application, {"disabled": True}, "application_disabled"
    )


@router.post("/a/{account_id}/applications/{app_id}/enable")
async def enable_application(request: Request, account_id: str, app_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    return await _change(
        request, principal, account, application, {"disabled": False}, "application_enabled"
    )


@router.post("/a/{account_id}/applications/{app_id}/rotate-secret")
async def rotate_secret(request: Request, account_id: str, app_id: str) -> Response:
    """A new secret, on this answer only; the old ones work for the overlap."""
    principal, account = await access.account_page(request, account_id)
    form = await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    state, environment = access.where(request)
    now = state.clock.now_us()
    raw = form.get("overlap_seconds", "").strip()
    try:
        body = RotateIn.model_validate({"overlap_seconds": raw or None})
        overlap = body.overlap_seconds
        if overlap is None:
            overlap = state.settings.oauth_secret_overlap_seconds
        async with state.database.transaction() as conn:
            secret, old_until = await apps_service.rotate_secret(
                conn, environment=environment, app_id=application.id, now_us=now,
                overlap_seconds=overlap,
            )  # fmt: skip
            await service.audit(
                conn,
                environment=environment,
                account_id=account.id,
                actor=principal.actor,
                actor_label=principal.label,
                action="secret_rotated",
                target=application.id,
                detail={"overlap_seconds": overlap},
                address=access.address_of(request),
                now_us=now,
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        return await _details_page(
            request, principal, account, application, status=status, errors=form_errors(error)
        )
    return await _details_page(
        request, principal, account, application, new_secret=(secret, to_iso(old_until))
    )


@router.post("/a/{account_id}/applications/{app_id}/keys")
async def add_key(request: Request, account_id: str, app_id: str) -> Response:
    """Paste a public key (JWK or PEM), or leave it empty to have a pair generated: the
    answer is then the credentials file with the private key, downloaded this once."""
    principal, account = await access.account_page(request, account_id)
    form = await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    state, environment = access.where(request)
    now = state.clock.now_us()
    pasted = form.get("public_key", "").strip()
    try:
        body = KeyIn.model_validate({"public_jwk": pasted or None})
        async with state.database.transaction() as conn:
            new = await apps_service.add_key(
                conn, environment=environment, app_id=application.id, now_us=now,
                public_jwk=body.public_jwk,
            )  # fmt: skip
            await service.audit(
                conn,
                environment=environment,
                account_id=account.id,
                actor=principal.actor,
                actor_label=principal.label,
                action="key_generated" if new.private_jwk else "key_added",
                target=application.id,
                detail={"key_id": new.key.id},
                address=access.address_of(request),
                now_us=now,
            )
    except (ApiError, ValidationError) as error:
        status = error.status if isinstance(error, ApiError) else 422
        errors = form_errors(error)
        if "public_jwk" in errors:
            errors["public_key"] = errors.pop("public_jwk")
        return await _details_page(
            request, principal, account, application, status=status, errors=errors
        )
    if new.private_jwk is None:
        target = f"{PREFIX}/a/{account.id}/applications/{application.id}?done=key_added"
        return pages.see_other(pages.url(request, target))
    base = public_base_url(state.settings, environment)
    credentials = apps_keys.credentials_file(
        application=application,
        key=new,
        token_url=token_endpoint(state.settings, environment),
        audience=f"{base}/v1",
    )
    return pages.security_headers(
        Response(
            orjson.dumps(credentials, option=orjson.OPT_INDENT_2),
            media_type="application/json",
            headers={
                "Content-Disposition": f'attachment; filename="autoport-key-{new.key.id}.json"'
            },
        )
    )


@router.post("/a/{account_id}/applications/{app_id}/keys/{key_id}/remove")
async def remove_key(request: Request, account_id: str, app_id: str, key_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_change(request, principal)
    application = await account_application(request, principal, account.id, app_id)
    state, environment = access.where(request)
    now = state.clock.now_us()
    try:
        async with state.database.transaction() as conn:
            await apps_service.remove_key(
                conn, environment=environment, app_id=application.id, key_id=key_id, now_us=now
            )
            await service.audit(
                conn,
                environment=environment,
                account_id=account.id,
                actor=principal.actor,
                actor_label=principal.label,
                action="key_removed",
                target=application.id,
                detail={"key_id": key_id},
                address=access.address_of(request),
                now_us=now,
            )
    except ApiError as error:
        return await _details_page(
            request, principal, account, application, status=error.status, errors=form_errors(error)
        )
    target = f"{PREFIX}/a/{account.id}/applications/{application.id}?done=key_removed"
    return pages.see_other(pages.url(request, target))
