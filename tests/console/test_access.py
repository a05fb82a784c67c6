"""Who sees what: one account never sees another's data (every page, every role, the
other account's ids in the URL), a viewer changes nothing, nobody unsigned gets in, and
every POST needs the CSRF token.

Pages of other branches add their URLs to ACCOUNT_PAGES / CHANGES (see pages.py)."""

from __future__ import annotations

import pytest

from autoport.apps import repository as apps_repository
from autoport.console import repository
from autoport.kit.environments import Environment

from .conftest import Browser, Console, Tenant, World

# GET pages of an account: {account}, {app} are filled with a tenant's ids.
ACCOUNT_PAGES = (
    "/console/a/{account}/applications",
    "/console/a/{account}/applications/new",
    "/console/a/{account}/applications/{app}",
    "/console/a/{account}/webhooks",
    "/console/a/{account}/applications/{app}/webhook",
    "/console/a/{account}/applications/{app}/webhook/deliveries",
    "/console/a/{account}/users",
    "/console/a/{account}/audit",
    # Fleet, Sandbox vehicles, Streaming, Usage.
    "/console/a/{account}/fleet",
    "/console/a/{account}/fleet/{app}",
    "/console/a/{account}/sandbox",
    "/console/a/{account}/streaming",
    "/console/a/{account}/streaming/{app}",
    "/console/a/{account}/streaming/{app}/messages",
    "/console/a/{account}/usage",
)
# POSTs that change something, with a form that would succeed for a permitted user.
CHANGES: tuple[tuple[str, dict[str, object]], ...] = (
    ("/console/a/{account}/applications", {"name": "Intruder", "client_type": "public"}),
    ("/console/a/{account}/applications/{app}", {"name": "Renamed by intruder"}),
    ("/console/a/{account}/applications/{app}/disable", {}),
    ("/console/a/{account}/applications/{app}/enable", {}),
    ("/console/a/{account}/applications/{app}/rotate-secret", {}),
    ("/console/a/{account}/applications/{app}/keys", {}),
    ("/console/a/{account}/applications/{app}/webhook", {"url": "https://example.com/h"}),
    ("/console/a/{account}/applications/{app}/webhook/test", {}),
    ("/console/a/{account}/applications/{app}/webhook/remove", {}),
    ("/console/a/{account}/users/invite", {"email": "x@example.com", "role": "owner"}),
    # Fleet, sandbox, streaming and usage (their own tests check the rows too).
    ("/console/a/{account}/fleet/{app}/add", {"vins": "SBX00000000000001", "brand": "sandbox"}),
    ("/console/a/{account}/fleet/{app}/remove", {"vin": "SBX00000000000001"}),
    ("/console/a/{account}/sandbox", {"vin": "SBX00000000000002", "scenario": "parked"}),
    ("/console/a/{account}/streaming/{app}/credentials", {}),
)


def fill(path: str, tenant: Tenant) -> str:
    return path.format(account=tenant.id, app=tenant.app_id)


async def _state_of(console: Console, tenant: Tenant) -> tuple[object, ...]:
    """What the changes above would alter, to prove nothing changed."""
    async with console.database.transaction() as conn:
        apps = await apps_repository.list_applications(conn, Environment.sandbox, tenant.id)
        secrets = await apps_repository.list_secrets(conn, tenant.app_id)
        keys = await apps_repository.list_keys(conn, tenant.app_id)
        hook = await conn.fetch_value(
            "SELECT COUNT(*) FROM webhooks WHERE application_id = :a", {"a": tenant.app_id}
        )
        invitations = await conn.fetch_value(
            "SELECT COUNT(*) FROM console_invitations WHERE account_id = :a", {"a": tenant.id}
        )
    return (tuple(apps), len(secrets), len(keys), hook, invitations)


@pytest.mark.parametrize("role", ["owner", "developer", "viewer"])
async def test_no_role_sees_another_account(console: Console, world: World, role: str) -> None:
    me = getattr(world.a, role)
    browser = await console.signed_in(me)
    # Our own pages work (the audit log only for owners).
    for path in ACCOUNT_PAGES:
        own = await browser.get(fill(path, world.a))
        expected = 403 if ("/audit" in path and role != "owner") else 200
        if path.endswith("/new") and role == "viewer":
            expected = 403
        assert own.status_code == expected, (path, own.status_code)
    # The other account's pages, and our account's URL with the other's ids.
    for path in ACCOUNT_PAGES:
        theirs = await browser.get(fill(path, world.b))
        assert theirs.status_code == 404, (path, theirs.status_code)
        assert world.b.name not in theirs.text
        if "{app}" in path:
            mixed = await browser.get(path.format(account=world.a.id, app=world.b.app_id))
            assert mixed.status_code == 404, path
            assert "Beta app" not in mixed.text
    before = await _state_of(console, world.b)
    await browser.get(fill(ACCOUNT_PAGES[0], world.a))  # a valid CSRF token of our own
    for path, form in CHANGES:
        theirs = await browser.post(fill(path, world.b), form)
        assert theirs.status_code == 404, (path, theirs.status_code)
        if "{app}" in path:
            mixed = await browser.post(path.format(account=world.a.id, app=world.b.app_id), form)
            assert mixed.status_code in (403, 404), path  # a viewer is refused first
    user_changes = ("role", "remove", "reset")
    for action in user_changes:
        target = f"/console/a/{world.a.id}/users/{world.b.owner.id}/{action}"
        refused = await browser.post(target, {"role": "viewer"})
        assert refused.status_code in (403, 404)
    assert await _state_of(console, world.b) == before


async def test_a_viewer_changes_nothing(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.viewer)
    await browser.get(fill(ACCOUNT_PAGES[0], world.a))
    before = await _state_of(console, world.a)
    for path, form in CHANGES:
        refused = await browser.post(fill(path, world.a), form)
        assert refused.status_code == 403, (path, refused.status_code)
    for action in ("role", "remove", "reset"):
        target = f"/console/a/{world.a.id}/users/{world.a.owner.id}/{action}"
        assert (await browser.post(target, {"role": "viewer"})).status_code == 403
    assert await _state_of(console, world.a) == before
    # The pages offer no change to a viewer either.
    details = await browser.get(fill("/console/a/{account}/applications/{app}", world.a))
    assert "/rotate-secret" not in details.text and "/disable" not in details.text


async def test_every_change_needs_the_csrf_token(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.owner)
    before = await _state_of(console, world.a)
    for path, form in CHANGES:
        refused = await browser.post(fill(path, world.a), form, csrf=False)
        assert refused.status_code == 403, path
        assert "The form has expired" in refused.text
    assert await _state_of(console, world.a) == before


async def test_nobody_unsigned_gets_in(console: Console, world: World) -> None:
    stranger = console.browser()
    for path in ACCOUNT_PAGES:
        page = await stranger.get(fill(path, world.a))
        assert page.status_code == 303 and "/console/sign-in" in page.headers["location"]
    await stranger.get("/console/sign-in")
    for path, form in CHANGES:
        refused = await stranger.post(fill(path, world.a), form)
        assert refused.status_code in (303, 403)
    assert (await stranger.get("/console/audit")).status_code == 303


async def test_the_operator_sees_every_account(console: Console, world: World) -> None:
    browser: Browser = await console.operator()
    home = await browser.get("/console/")
    assert world.a.name in home.text and world.b.name in home.text
    for tenant in (world.a, world.b):
        for path in ACCOUNT_PAGES:
            page = await browser.get(fill(path, tenant))
            assert page.status_code == 200, path
    # Still no mixing: an application is found only through its own account.
    mixed = await browser.get(f"/console/a/{world.a.id}/applications/{world.b.app_id}")
    assert mixed.status_code == 404
    # A user is never the operator: the operator-only pages are 404 for owners.
    owner = await console.signed_in(world.a.owner)
    assert (await owner.get("/console/audit")).status_code == 404
    await owner.get(fill(ACCOUNT_PAGES[0], world.a))
    assert (await owner.post("/console/accounts", {"name": "Mine"})).status_code == 404


async def test_production_and_sandbox_accounts_stay_apart(console: Console, world: World) -> None:
    operator = await console.operator(prefix="")
    page = await operator.get(f"/console/a/{world.a.id}/applications")
    assert page.status_code == 404  # a sandbox account, seen from production
    async with console.database.transaction() as conn:
        user = await repository.get_user_by_email(conn, Environment.production, world.a.owner.email)
    assert user is None
