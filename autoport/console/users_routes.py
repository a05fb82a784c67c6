"""The Users page (people of an account, their roles, invitations and password reset
links) and the audit log (read-only: there is no route that changes an entry)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.responses import Response

from autoport.apps.schemas import Account
from autoport.console import access, pages, service
from autoport.console.access import (
    PREFIX,
    AccountPage,
    AccountPageDep,
    OwnerChangeDep,
    Principal,
    console_router,
)
from autoport.console.pages import USER_ROLES
from autoport.console.schemas import INVITE, RESET, NewLink
from autoport.kit import paging
from autoport.kit.errors import ApiError

router = console_router()


def _shown(link: NewLink) -> dict[str, Any]:
    """A new link as the Users page shows it once (a flash)."""
    return {
        "new_link": {
            "invitation": {"kind": link.invitation.kind, "email": link.invitation.email},
            "url": link.url,
            "emailed": link.emailed,
        }
    }


async def _users_page(
    page: AccountPage,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
) -> Response:
    state = page.state
    reader = state.database.reader
    users = [
        u
        for u in await service.list_users_of_account(reader, page.environment, page.account_id)
        if u.disabled_at is None
    ]
    invitations = []
    if page.principal.may_manage_users:
        invitations = await service.list_pending_invitations(
            reader, page.environment, page.account_id, state.clock.now_us()
        )
    flashed = await page.flashed()
    return page.render(
        "users.html",
        status=status,
        users=users,
        invitations=invitations,
        roles=USER_ROLES,
        errors=errors or {},
        new_link=flashed.get("new_link"),
        form=form or {},
        smtp=bool(state.settings.smtp_url),
    )


@router.get("/a/{account_id}/users")
async def users_page(page: AccountPageDep) -> Response:
    return await _users_page(page)


@router.post("/a/{account_id}/users/invite")
async def invite(page: OwnerChangeDep) -> Response:
    """A single-use invitation link, shown on the Users page this once (and e-mailed when
    `smtp_url` is set)."""
    state = page.state
    try:
        link = await service.make_link(
            state.database,
            settings=state.settings,
            key=state.token_key,
            environment=page.environment,
            account_id=page.account_id,
            kind=INVITE,
            email=page.form.get("email", ""),
            role=page.form.get("role", ""),
            actor=page.principal.actor,
            actor_label=page.principal.label,
            address=access.address_of(page.request),
            now_us=state.clock.now_us(),
        )
    except ApiError as error:
        return await _users_page(
            page, status=error.status, errors=page.errors(error), form=page.form
        )
    return await page.flash("users", _shown(link))


async def _user_change(page: AccountPage, user_id: str, *, remove: bool) -> Response:
    try:
        async with page.state.database.transaction() as conn:
            user = await service.change_user(
                conn,
                environment=page.environment,
                account_id=page.account_id,
                user_id=user_id,
                role=None if remove else page.form.get("role", ""),
                disable=remove,
                now_us=page.state.clock.now_us(),
            )
            await page.audit(
                conn,
                action="user_removed" if remove else "role_changed",
                target=user.id,
                detail={"email": user.email, "role": user.role},
            )
    except ApiError as error:
        return await _users_page(page, status=error.status, errors=page.errors(error))
    return page.see_other("users")


@router.post("/a/{account_id}/users/{user_id}/role")
async def change_role(page: OwnerChangeDep, user_id: str) -> Response:
    return await _user_change(page, user_id, remove=False)


@router.post("/a/{account_id}/users/{user_id}/remove")
async def remove_user(page: OwnerChangeDep, user_id: str) -> Response:
    return await _user_change(page, user_id, remove=True)


@router.post("/a/{account_id}/users/{user_id}/reset")
async def reset_link(page: OwnerChangeDep, user_id: str) -> Response:
    """A single-use password reset link for one user of the account (shown once)."""
    state = page.state
    user = await service.get_user_in_account(
        state.database.reader, page.environment, page.account_id, user_id
    )
    if user is None or user.disabled_at is not None:
        raise access.not_found()
    link = await service.make_link(
        state.database,
        settings=state.settings,
        key=state.token_key,
        environment=page.environment,
        account_id=page.account_id,
        kind=RESET,
        email=user.email,
        role=user.role,
        actor=page.principal.actor,
        actor_label=page.principal.label,
        address=access.address_of(page.request),
        now_us=state.clock.now_us(),
        user_id=user.id,
    )
    return await page.flash("users", _shown(link))


@router.post("/a/{account_id}/invitations/{invitation_id}/withdraw")
async def withdraw(page: OwnerChangeDep, invitation_id: str) -> Response:
    async with page.state.database.transaction() as conn:
        withdrawn = await service.withdraw_invitation(
            conn, page.environment, page.account_id, invitation_id, page.state.clock.now_us()
        )
        if not withdrawn:
            raise access.not_found()
        await page.audit(conn, action="invitation_withdrawn", target=invitation_id)
    return page.see_other("users")


# ----------------------------------------------------------------------- audit log


async def _audit(
    request: Request, principal: Principal, account: Account | None, base: str
) -> Response:
    state, environment = access.where(request)
    size = state.settings.console_page_size
    scope = ("console-audit", str(environment), account.id if account else "*")
    cursor = request.query_params.get("cursor")
    before = paging.decode_cursor(state.token_key, scope, cursor, (int, str)) if cursor else None
    entries = await service.list_audit_entries(
        state.database.reader,
        environment,
        account_id=account.id if account else None,
        limit=size + 1,
        before=before,
    )
    next_url = None
    if len(entries) > size:
        entries = entries[:size]
        last = entries[-1]
        token = paging.encode_cursor(state.token_key, scope, (last.created_at, last.id))
        next_url = pages.url(request, f"{base}?cursor={token}")
    return pages.render(
        request,
        principal,
        "audit.html",
        account=account,
        account_id=account.id if account else None,
        entries=entries,
        next_url=next_url,
    )


@router.get("/a/{account_id}/audit")
async def account_audit(page: AccountPageDep) -> Response:
    """The account's audit log: its owners and the operator."""
    access.require_owner(page.request, page.principal)
    return await _audit(page.request, page.principal, page.account, page.path("audit"))


@router.get("/audit")
async def operator_audit(request: Request) -> Response:
    """Every entry of the environment (also sign-ins that failed for unknown addresses):
    the operator only."""
    principal = await access.signed_in(request)
    if not principal.is_operator:
        raise access.not_found()
    return await _audit(request, principal, None, f"{PREFIX}/audit")
