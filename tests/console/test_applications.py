"""The Applications page: create through the apps service with the API's rules and
messages, credentials shown once, rotation with overlap, keys, disable."""

from __future__ import annotations

import re

import httpx
import orjson

from autoport.apps import repository as apps_repository
from autoport.apps import service as apps_service
from autoport.catalog.commands import COMMANDS
from autoport.console.apps_routes import command_picker
from autoport.kit.environments import Environment

from .conftest import Console, World

SECRET = re.compile(r"ap_cs_[A-Za-z0-9_-]{20,}")


def _app_id(page: httpx.Response) -> str:
    found = re.search(r'id="cred-app-id">([0-9A-F]{24})<', page.text)
    assert found, page.text
    return found.group(1)


async def test_create_shows_the_secret_once(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.developer)
    base = f"/console/a/{world.a.id}/applications"
    form = await browser.get(base + "/new")
    assert form.status_code == 200
    assert 'value="charging.battery_level"' in form.text  # the catalog picker
    created = await browser.post(
        base,
        follow=True,
        data={
            "name": "Fleet tool",
            "client_type": "confidential",
            "redirect_uris": "https://tool.example.com/cb\nhttp://127.0.0.1:9000/cb",
            "brands": ["sandbox"],
            "properties": ["charging.battery_level", "diagnostics.odometer"],
        },
    )
    assert created.status_code == 200, created.text
    secrets = set(SECRET.findall(created.text))
    assert len(secrets) == 1
    secret = secrets.pop()
    app_id = _app_id(created)
    async with console.database.transaction() as conn:
        stored = await apps_repository.get_application(conn, Environment.sandbox, app_id)
    assert stored is not None and stored.account_id == world.a.id
    assert stored.properties == ("charging.battery_level", "diagnostics.odometer")
    assert stored.redirect_uris == ("https://tool.example.com/cb", "http://127.0.0.1:9000/cb")
    # Never again: not on its page, not in the list.
    details = await browser.get(f"{base}/{app_id}")
    assert details.status_code == 200 and secret not in details.text
    assert not SECRET.search(details.text)
    listing = await browser.get(base)
    assert "Fleet tool" in listing.text and secret not in listing.text
    # The secret works at the token endpoint (the app is real).
    token = await browser.client.post(
        "/sandbox/v1/access_tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": stored.client_id,
            "client_secret": secret,
        },
    )
    assert token.status_code == 200, token.text


async def test_form_errors_carry_the_api_messages(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.owner)
    base = f"/console/a/{world.a.id}/applications"
    await browser.get(base + "/new")
    bad = await browser.post(
        base, {"name": "X", "redirect_uris": "http://example.com/cb", "brands": ["sandbox"]}
    )
    assert bad.status_code == 422
    assert "redirect_uris[0]: plain http is allowed only for loopback hosts" in bad.text
    assert "http://example.com/cb" in bad.text  # the input is kept
    empty = await browser.post(base, {"name": ""})
    assert empty.status_code == 422 and "name:" in empty.text
    scheme = await browser.post(base, {"name": "M", "url_scheme": "https"})
    assert scheme.status_code == 422
    assert "url_scheme: &#39;https&#39; is not an application&#39;s own scheme" in scheme.text
    production_brand = await browser.post(base, {"name": "P", "brands": ["nope"]})
    assert "brands[0]: unknown brand" in production_brand.text
    async with console.database.transaction() as conn:
        apps = await apps_repository.list_applications(conn, Environment.sandbox, world.a.id)
    assert [a.name for a in apps] == ["Alpha app"]  # nothing stored


async def test_rotate_secret_with_overlap(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.developer)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    await browser.get(page)
    rotated = await browser.post(page + "/rotate-secret", {"overlap_seconds": "60"}, follow=True)
    assert rotated.status_code == 200
    assert len(set(SECRET.findall(rotated.text))) == 1
    again = await browser.get(page)
    assert not SECRET.search(again.text)
    bad = await browser.post(page + "/rotate-secret", {"overlap_seconds": "-1"})
    assert bad.status_code == 422 and "overlap_seconds:" in bad.text
    async with console.database.transaction() as conn:
        secrets = await apps_repository.list_secrets(conn, world.a.app_id)
    assert len(secrets) == 2
    ends = sorted((row["expires_at"] is None, row["expires_at"]) for row in secrets)
    assert ends == [(False, console.clock.now_us() + 60_000_000), (True, None)]


async def test_keys_generated_once_or_pasted(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.owner)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    await browser.get(page)
    download = await browser.post(page + "/keys", {})
    assert download.status_code == 200
    assert download.headers["content-disposition"].startswith("attachment;")
    credentials = orjson.loads(download.content)
    assert credentials["private_jwk"]["d"]
    details = await browser.get(page)
    assert credentials["key_id"] in details.text
    assert credentials["private_jwk"]["d"] not in details.text
    public = {k: credentials["private_jwk"][k] for k in ("kty", "crv", "x", "y")}
    pasted = await browser.post(page + "/keys", {"public_key": orjson.dumps(public).decode()})
    assert pasted.status_code == 303
    private = await browser.post(
        page + "/keys", {"public_key": orjson.dumps(credentials["private_jwk"]).decode()}
    )
    assert private.status_code == 422 and "public_jwk: contains the private key" in private.text
    removed = await browser.post(f"{page}/keys/{credentials['key_id']}/remove", {})
    assert removed.status_code == 303


async def test_disable_and_enable(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.developer)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    await browser.get(page)
    assert (await browser.post(page + "/disable", {})).status_code == 303
    async with console.database.transaction() as conn:
        app = await apps_repository.get_application(conn, Environment.sandbox, world.a.app_id)
    assert app is not None and app.disabled_at is not None
    await browser.get(page)
    assert (await browser.post(page + "/enable", {})).status_code == 303


async def test_change_settings(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.developer)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    await browser.get(page)
    saved = await browser.post(
        page,
        {
            "name": "Renamed",
            "redirect_uris": "https://new.example.com/cb",
            "brands": ["sandbox"],
            "properties": ["diagnostics.odometer"],
        },
    )
    assert saved.status_code == 303
    shown = await browser.get(page)
    assert "Renamed" in shown.text and "https://new.example.com/cb" in shown.text
    bad = await browser.post(page, {"name": "Renamed", "properties": ["nope.nothing"]})
    assert bad.status_code == 422 and "properties[0]:" in bad.text


async def test_the_operator_creates_for_any_account(console: Console, world: World) -> None:
    browser = await console.operator()
    base = f"/console/a/{world.b.id}/applications"
    await browser.get(base + "/new")
    created = await browser.post(base, {"name": "Op app", "client_type": "public",
                                         "redirect_uris": "https://op.example.com/cb"},
                                 follow=True)  # fmt: skip
    assert created.status_code == 200
    assert not SECRET.search(created.text)  # a public client has none


async def test_list_pages_and_search(console: Console, world: World) -> None:
    for index in range(7):
        await console.add_application(world.a.id, f"Bulk {index}")
    state = console.app.state.autoport
    state.settings = state.settings.model_copy(update={"console_page_size": 5})
    browser = await console.signed_in(world.a.viewer)
    first = await browser.get(f"/console/a/{world.a.id}/applications")
    assert first.text.count("/applications/") - first.text.count("/applications/new") >= 5
    following = re.search(r'href="([^"]+cursor=[^"]+)"', first.text)
    assert following
    second = await browser.client.get(following.group(1).replace("&amp;", "&"))
    assert second.status_code == 200
    names = re.compile(r'/applications/[0-9A-F]{24}">([^<]+)<')
    seen = names.findall(first.text) + names.findall(second.text)
    assert len(seen) == 8 and set(seen) == {"Alpha app", *(f"Bulk {i}" for i in range(7))}
    found = await browser.get(f"/console/a/{world.a.id}/applications?q=bulk 3")
    assert "Bulk 3" in found.text and "Bulk 4" not in found.text
    forged = await browser.get(f"/console/a/{world.a.id}/applications?cursor=abc.def")
    assert forged.status_code == 400


LOCK = "doors.lock_unlock_doors"
CHARGE = "charging.start_stop_charging"


async def _commands_of(console: Console, app_id: str) -> tuple[str, ...]:
    async with console.database.transaction() as conn:
        app = await apps_repository.get_application(conn, Environment.sandbox, app_id)
    assert app is not None
    return app.commands


async def test_create_with_commands_lists_them_and_their_scopes(
    console: Console, world: World
) -> None:
    browser = await console.signed_in(world.a.developer)
    base = f"/console/a/{world.a.id}/applications"
    form = await browser.get(base + "/new")
    assert f'name="commands" value="{LOCK}"' in form.text  # the command picker
    assert COMMANDS.by_key(LOCK).label("en-GB") in form.text  # type: ignore[union-attr]
    created = await browser.post(
        base,
        follow=True,
        data={
            "name": "Locker",
            "redirect_uris": "https://lock.example.com/cb",
            "brands": ["sandbox"],
            "commands": [LOCK, CHARGE],
        },
    )
    assert created.status_code == 200, created.text
    app_id = _app_id(created)
    # Stored in the command catalog's order, as the admin API stores them.
    assert await _commands_of(console, app_id) == tuple(COMMANDS.ordered([LOCK, CHARGE]))
    details = await browser.get(f"{base}/{app_id}")
    assert details.status_code == 200
    for key in (LOCK, CHARGE):
        command = COMMANDS.by_key(key)
        assert command is not None
        assert f"<code>{key}</code>" in details.text
        for scope in command.scopes:
            assert f"<code>{scope}</code>" in details.text
        assert f'name="commands" value="{key}" checked' in details.text
    # A bad command re-renders the form with the API's message; nothing stored.
    bad = await browser.post(base, {"name": "Bad", "commands": ["doors.fly"]})
    assert bad.status_code == 422
    assert "commands[0]: &#39;doors.fly&#39; is not a vehicle command" in bad.text
    async with console.database.transaction() as conn:
        apps = await apps_repository.list_applications(conn, Environment.sandbox, world.a.id)
    assert sorted(a.name for a in apps) == ["Alpha app", "Locker"]


async def test_edit_changes_the_commands(console: Console, world: World) -> None:
    browser = await console.signed_in(world.a.owner)
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    shown = await browser.get(page)
    assert "The application registers no vehicle commands." in shown.text
    settings = {"name": "Alpha app", "redirect_uris": "https://app.example.com/callback",
                "brands": ["sandbox"], "properties": ["charging.battery_level"]}  # fmt: skip
    saved = await browser.post(page, {**settings, "commands": [CHARGE, LOCK]})
    assert saved.status_code == 303
    assert set(await _commands_of(console, world.a.app_id)) == {CHARGE, LOCK}
    saved = await browser.post(page, {**settings, "commands": [LOCK]})
    assert saved.status_code == 303
    assert await _commands_of(console, world.a.app_id) == (LOCK,)
    # Disabling (a form without the pickers) keeps them.
    assert (await browser.post(page + "/disable", {})).status_code == 303
    assert await _commands_of(console, world.a.app_id) == (LOCK,)
    bad = await browser.post(page, {**settings, "commands": [LOCK, "nope"]})
    assert bad.status_code == 422
    assert "commands[1]: &#39;nope&#39; is not a vehicle command" in bad.text
    assert await _commands_of(console, world.a.app_id) == (LOCK,)
    cleared = await browser.post(page, settings)
    assert cleared.status_code == 303
    assert await _commands_of(console, world.a.app_id) == ()


async def test_a_viewer_and_another_account_cannot_change_commands(
    console: Console, world: World
) -> None:
    async with console.database.transaction() as conn:
        await apps_service.update_application(
            conn, environment=Environment.sandbox, app_id=world.a.app_id,
            now_us=console.clock.now_us(), commands=[LOCK],
        )  # fmt: skip
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    form = {"name": "Alpha app", "redirect_uris": "https://app.example.com/callback",
            "brands": ["sandbox"], "commands": [CHARGE]}  # fmt: skip
    viewer = await console.signed_in(world.a.viewer)
    shown = await viewer.get(page)
    assert shown.status_code == 200 and f"<code>{LOCK}</code>" in shown.text
    assert 'name="commands"' not in shown.text  # no picker for a viewer
    assert (await viewer.post(page, form)).status_code == 403
    assert (await viewer.post(f"/console/a/{world.a.id}/applications", form)).status_code == 403
    for person in (world.b.owner, world.b.developer):
        other = await console.signed_in(person)
        await other.get(f"/console/a/{world.b.id}/applications")
        refused = await other.post(page, form)
        assert refused.status_code == 404
        mixed = await other.post(f"/console/a/{world.b.id}/applications/{world.a.app_id}", form)
        assert mixed.status_code == 404
        seen = await other.get(page)
        assert seen.status_code == 404 and LOCK not in seen.text
    assert await _commands_of(console, world.a.app_id) == (LOCK,)


def test_the_command_picker_speaks_german_and_covers_the_catalog() -> None:
    german = command_picker("de-DE")
    keys = [key for group in german for key, _ in group.items]
    assert keys == list(COMMANDS.keys())
    titles = dict(item for group in german for item in group.items)
    assert titles[LOCK] == COMMANDS.by_key(LOCK).label_de  # type: ignore[union-attr]
    assert {g.name: g.label for g in german}["wake_up"] == "Aufwecken"
