"""The admin API of accounts and applications (the operator's admin token). Per
environment like every path: `/admin/v1/...` is production, `/sandbox/admin/v1/...`
the sandbox."""

from __future__ import annotations

from typing import Any

from fastapi import Query
from starlette.responses import Response

from autoport.apps import keys, service
from autoport.apps.schemas import (
    AccountIn,
    AccountList,
    AccountView,
    ApplicationCreated,
    ApplicationDetails,
    ApplicationIn,
    ApplicationList,
    ApplicationPatch,
    KeyAdded,
    KeyIn,
    RotateIn,
    SecretRotated,
)
from autoport.kit.auth import AdminDep
from autoport.kit.clock import to_iso
from autoport.kit.environments import EnvironmentDep, public_base_url, token_endpoint
from autoport.kit.routing import api_router, json_response
from autoport.kit.state import StateDep

router = api_router(prefix="/admin/v1", tags=["admin"])


async def _details(state: StateDep, environment: EnvironmentDep, app_id: str) -> dict[str, Any]:
    return await service.application_details(
        state.database.reader, environment=environment, app_id=app_id, settings=state.settings
    )


@router.post(
    "/accounts",
    status_code=201,
    summary="Create an account",
    responses={201: {"model": AccountView}},
)
async def create_account(
    body: AccountIn, state: StateDep, environment: EnvironmentDep, _: AdminDep
) -> Response:
    async with state.database.transaction() as conn:
        account = await service.create_account(
            conn, environment=environment, name=body.name, now_us=state.clock.now_us()
        )
    return json_response(account.as_dict(), status_code=201)


@router.get("/accounts", summary="List accounts", responses={200: {"model": AccountList}})
async def list_accounts(state: StateDep, environment: EnvironmentDep, _: AdminDep) -> Response:
    accounts = await service.list_accounts(state.database.reader, environment=environment)
    return json_response({"accounts": [account.as_dict() for account in accounts]})


@router.post(
    "/applications",
    status_code=201,
    summary="Create an application",
    responses={201: {"model": ApplicationCreated}},
)
async def create_application(
    body: ApplicationIn, state: StateDep, environment: EnvironmentDep, _: AdminDep
) -> Response:
    """Returns the application with its `client_secret` (confidential clients), shown
    this once."""
    now = state.clock.now_us()
    async with state.database.transaction() as conn:
        account_id = body.account_id
        if account_id is None:
            account = await service.create_account(
                conn, environment=environment, name=body.name, now_us=now
            )
            account_id = account.id
        application, secret = await service.create_application(
            conn,
            environment=environment,
            account_id=account_id,
            name=body.name,
            redirect_uris=body.redirect_uris,
            properties=body.properties,
            brands=body.brands,
            client_type=body.client_type,
            now_us=now,
            url_scheme=body.url_scheme,
            commands=body.commands,
            company=body.company,
            privacy_url=body.privacy_url,
        )
    view = service.application_view(application, state.settings)
    return json_response(
        # `token_url`: the name this answer used before `token_uri` (the spec's); kept.
        {**view, "client_secret": secret, "token_url": view["token_uri"]},
        status_code=201,
        headers={"Cache-Control": "no-store"},
    )


@router.get(
    "/applications", summary="List applications", responses={200: {"model": ApplicationList}}
)
async def list_applications(
    state: StateDep,
    environment: EnvironmentDep,
    _: AdminDep,
    account_id: str | None = Query(default=None),
) -> Response:
    applications = await service.list_applications(
        state.database.reader, environment=environment, account_id=account_id
    )
    return json_response(
        {"applications": [service.application_view(a, state.settings) for a in applications]}
    )


@router.get(
    "/applications/{app_id}",
    summary="Show an application",
    responses={200: {"model": ApplicationDetails}},
)
async def show_application(
    app_id: str, state: StateDep, environment: EnvironmentDep, _: AdminDep
) -> Response:
    return json_response(await _details(state, environment, app_id))


@router.patch(
    "/applications/{app_id}",
    summary="Change an application",
    responses={200: {"model": ApplicationDetails}},
)
async def patch_application(
    app_id: str, body: ApplicationPatch, state: StateDep, environment: EnvironmentDep, _: AdminDep
) -> Response:
    async with state.database.transaction() as conn:
        await service.update_application(
            conn,
            environment=environment,
            app_id=app_id,
            now_us=state.clock.now_us(),
            name=body.name,
            redirect_uris=body.redirect_uris,
            properties=body.properties,
            brands=body.brands,
            disabled=body.disabled,
            url_scheme=body.url_scheme if "url_scheme" in body.model_fields_set else service.KEEP,
            commands=body.commands,
            company=body.company if "company" in body.model_fields_set else service.KEEP,
            privacy_url=(
                body.privacy_url if "privacy_url" in body.model_fields_set else service.KEEP
            ),
        )
    if body.disabled:
        state.access_changed()
    return json_response(await _details(state, environment, app_id))


@router.post(
    "/applications/{app_id}/rotate-secret",
    summary="Issue a new client secret",
    responses={200: {"model": SecretRotated}},
)
async def rotate_secret(
    app_id: str, body: RotateIn, state: StateDep, environment: EnvironmentDep, _: AdminDep
) -> Response:
    """The new secret is shown once; the previous one keeps working for the overlap
    (default `oauth_secret_overlap_seconds`)."""
    overlap = body.overlap_seconds
    if overlap is None:
        overlap = state.settings.oauth_secret_overlap_seconds
    async with state.database.transaction() as conn:
        secret, old_until = await service.rotate_secret(
            conn,
            environment=environment,
            app_id=app_id,
            now_us=state.clock.now_us(),
            overlap_seconds=overlap,
        )
    return json_response(
        {
            "app_id": app_id,
            "client_secret": secret,
            "previous_secrets_expire_at": to_iso(old_until),
        },
        headers={"Cache-Control": "no-store"},
    )


@router.post(
    "/applications/{app_id}/keys",
    status_code=201,
    summary="Add an assertion key",
    responses={201: {"model": KeyAdded}},
)
async def add_key(
    app_id: str, body: KeyIn, state: StateDep, environment: EnvironmentDep, _: AdminDep
) -> Response:
    """Register a public key, or omit `public_jwk` to get a generated pair: the response
    then holds the credentials file with the private key, shown this once."""
    async with state.database.transaction() as conn:
        new = await service.add_key(
            conn,
            environment=environment,
            app_id=app_id,
            now_us=state.clock.now_us(),
            public_jwk=body.public_jwk,
        )
        application = await service.get_application(conn, environment=environment, app_id=app_id)
    base = public_base_url(state.settings, environment)
    result: dict[str, Any] = new.key.as_dict()
    if new.private_jwk is not None:
        result["credentials"] = keys.credentials_file(
            application=application,
            key=new,
            token_url=token_endpoint(state.settings, environment),
            audience=f"{base}/v1",
        )
    return json_response(result, status_code=201, headers={"Cache-Control": "no-store"})


@router.delete("/applications/{app_id}/keys/{key_id}", status_code=204, summary="Remove a key")
async def remove_key(
    app_id: str, key_id: str, state: StateDep, environment: EnvironmentDep, _: AdminDep
) -> Response:
    async with state.database.transaction() as conn:
        await service.remove_key(
            conn,
            environment=environment,
            app_id=app_id,
            key_id=key_id,
            now_us=state.clock.now_us(),
        )
    return Response(status_code=204)
