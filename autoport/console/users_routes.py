"""The Users page (people of an account, their roles, invitations and password reset
links) and the audit log (read-only: there is no route that changes an entry)."""

from __future__ import annotations

from fastapi import Request
from starlette.responses import Response

from autoport.apps.schemas import Account
from autoport.console import access, pages, service
from autoport.console.access import PREFIX, Principal, console_router
from autoport.console.pages import USER_ROLES
from autoport.console.schemas import INVITE, RESET, NewLink
from autoport.kit import paging
from autoport.kit.errors import ApiError

router = console_router()


def _errors(error: ApiError) -> dict[str, str]:
    from autoport.console.routes import errors_of

    return errors_of(error)


async def _users_page(
    request: Request,
    principal: Principal,
    account: Account,
    *,
    status: int = 200,
    errors: dict[str, str] | None = None,
    new_link: NewLink | None = None,
    form: dict[str, str] | None = None,
) -> Response:
    state, environment = access.where(request)
    conn = state.database.reader
    users = [
        u
        for u in await service.list_users_of_account(conn, environment, account.id)
        if u.disabled_at is None
    ]
    invitations = []
    if principal.may_manage_users:
        invitations = await service.list_pending_invitations(
            conn, environment, account.id, state.clock.now_us()
        )
    return pages.render(
        request,
        principal,
        "users.html",
        status=status,
        account=account,
        account_id=account.id,
        users=users,
        invitations=invitations,
        roles=USER_ROLES,
        errors=errors or {},
        new_link=new_link,
        form=form or {},
        smtp=bool(state.settings.smtp_url),
    )


@router.get("/a/{account_id}/users")
async def users_page(request: Request, account_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    return await _users_page(request, principal, account)


@router.post("/a/{account_id}/users/invite")
async def invite(request: Request, account_id: str) -> Response:
    """A single-use invitation link, shown on the page this once (and e-mailed when
    `smtp_url` is set)."""
    principal, account = await access.account_page(request, account_id)
    form = await access.checked_form(request, principal)
    access.require_owner(request, principal)
    state, environment = access.where(request)
    try:
        link = await service.make_link(
            state.database,
            settings=state.settings,
            key=state.token_key,
            environment=environment,
            account_id=account.id,
            kind=INVITE,
            email=form.get("email", ""),
            role=form.get("role", ""),
            actor=principal.actor,
            actor_label=principal.label,
            address=access.address_of(request),
            now_us=state.clock.now_us(),
        )
    except ApiError as error:
        return await _users_page(
            request, principal, account, status=error.status, errors=_errors(error), form=form
        )
    return await _users_page(request, principal, account, new_link=link)


async def _user_change(
    request: Request, account_id: str, user_id: str, *, remove: bool
) -> Response:
    principal, account = await access.account_page(request, account_id)
    form = await access.checked_form(request, principal)
    access.require_owner(request, principal)
    state, environment = access.where(request)
    now = state.clock.now_us()
    try:
        async with state.database.transaction() as conn:
            user = await service.change_user(
                conn,
                environment=environment,
                account_id=account.id,
                user_id=user_id,
                role=None if remove else form.get("role", ""),
                disable=remove,
                now_us=now,
            )
            await service.audit(
                conn,
                environment=environment,
                account_id=account.id,
                actor=principal.actor,
                actor_label=principal.label,
                action="user_removed" if remove else "role_changed",
                target=user.id,
                detail={"email": user.email, "role": user.role},
                address=access.address_of(request),
                now_us=now,
            )
    except ApiError as error:
        return await _users_page(
            request, principal, account, status=error.status, errors=_errors(error)
        )
    return pages.see_other(pages.url(request, f"{PREFIX}/a/{account.id}/users"))


@router.post("/a/{account_id}/users/{user_id}/role")
async def change_role(request: Request, account_id: str, user_id: str) -> Response:
    return await _user_change(request, account_id, user_id, remove=False)


@router.post("/a/{account_id}/users/{user_id}/remove")
async def remove_user(request: Request, account_id: str, user_id: str) -> Response:
    return await _user_change(request, account_id, user_id, remove=True)


@router.post("/a/{account_id}/users/{user_id}/reset")
async def reset_link(request: Request, account_id: str, user_id: str) -> Response:
    """A single-use password reset link for one user of the account (shown once)."""
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_owner(request, principal)
    state, environment = access.where(request)
    user = await service.get_user_in_account(
        state.database.reader, environment, account.id, user_id
    )
    if user is None or user.disabled_at is not None:
        raise access.not_found()
    link = await service.make_link(
        state.database,
        settings=state.settings,
        key=state.token_key,
        environment=environment,
        account_id=account.id,
        kind=RESET,
        email=user.email,
        role=user.role,
        actor=principal.actor,
        actor_label=principal.label,
        address=access.address_of(request),
        now_us=state.clock.now_us(),
        user_id=user.id,
    )
    return await _users_page(request, principal, account, new_link=link)


@router.post("/a/{account_id}/invitations/{invitation_id}/withdraw")
async def withdraw(request: Request, account_id: str, invitation_id: str) -> Response:
    principal, account = await access.account_page(request, account_id)
    await access.checked_form(request, principal)
    access.require_owner(request, principal)
    state, environment = access.where(request)
    now = state.clock.now_us()
    async with state.database.transaction() as conn:
        if not await service.withdraw_invitation(conn, environment, account.id, invitation_id, now):
            raise access.not_found()
        await service.audit(
            conn,
            environment=environment,
            account_id=account.id,
            actor=principal.actor,
            actor_label=principal.label,
            action="invitation_withdrawn",
            target=invitation_id,
            address=access.address_of(request),
            now_us=now,
        )
    return pages.see_other(pages.url(request, f"{PREFIX}/a/{account.id}/users"))


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
async def account_audit(request: Request, account_id: str) -> Response:
    """The account's audit log: its owners and the operator."""
    principal, account = await access.account_page(request, account_id)
    access.require_owner(request, principal)
    return await _audit(request, principal, account, f"{PREFIX}/a/{account.id}/audit")


@router.get("/audit")
async def operator_audit(request: Request) -> Response:
    """Every entry of the environment (also sign-ins that failed for unknown addresses):
    the operator only."""
    principal = await access.signed_in(request)
    if not principal.is_operator:
        raise access.not_found()
    return await _audit(request, principal, None, f"{PREFIX}/audit")
