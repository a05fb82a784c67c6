"""Account users: invitations and reset links (single use, shown on screen, e-mailed
through a real local SMTP server when smtp_url is set), sign-in with argon2id
passwords, throttling per address and per client address, roles, the audit log."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Iterator
from email import message_from_bytes
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from autoport.console import repository
from autoport.kit.environments import Environment

from .conftest import PASSWORD, Console, World

LINK = re.compile(r'id="new-link">(http[^<]+)<')


def _link_path(page_text: str) -> str:
    found = LINK.search(page_text)
    assert found, page_text
    return found.group(1).split("/sandbox", 1)[1]


async def test_invitation_makes_a_user_who_signs_in(console: Console, world: World) -> None:
    owner = await console.signed_in(world.a.owner)
    await owner.get(f"/console/a/{world.a.id}/users")
    made = await owner.post(
        f"/console/a/{world.a.id}/users/invite",
        {"email": "New@Alpha.example.com", "role": "viewer"},
        follow=True,
    )
    assert made.status_code == 200
    path = _link_path(made.text)
    # The link is shown once: the users page lists the invitation, not its link.
    listing = await owner.get(f"/console/a/{world.a.id}/users")
    assert "new@alpha.example.com" in listing.text and path not in listing.text

    guest = console.browser()
    form = await guest.get(path)
    assert form.status_code == 200 and "new@alpha.example.com" in form.text
    short = await guest.post(path, {"password": "short", "password_confirm": "short"})
    assert short.status_code == 422 and "password: must have at least 12" in short.text
    other = await guest.post(path, {"password": PASSWORD, "password_confirm": PASSWORD + "x"})
    assert other.status_code == 422 and "password_confirm:" in other.text
    done = await guest.post(path, {"password": PASSWORD, "password_confirm": PASSWORD})
    assert done.status_code == 303
    # Single use.
    assert (await guest.get(path)).status_code == 404
    again = console.browser()
    await again.get("/console/sign-in")
    assert (
        await again.post(path, {"password": PASSWORD, "password_confirm": PASSWORD})
    ).status_code in (403, 404)

    signed = console.browser()
    await signed.get("/console/sign-in")
    ok = await signed.post(
        "/console/sign-in", {"email": "new@alpha.example.com", "password": PASSWORD}
    )
    assert ok.status_code == 303
    assert ok.headers["location"] == f"/sandbox/console/a/{world.a.id}/applications"
    async with console.database.transaction() as conn:
        user = await repository.get_user_by_email(
            conn, Environment.sandbox, "new@alpha.example.com"
        )
    assert user is not None and user.role == "viewer" and user.account_id == world.a.id
    assert user.password_hash.startswith("$argon2id$")


async def test_invitation_errors(console: Console, world: World) -> None:
    owner = await console.signed_in(world.a.owner)
    await owner.get(f"/console/a/{world.a.id}/users")
    bad = await owner.post(
        f"/console/a/{world.a.id}/users/invite", {"email": "nope", "role": "viewer"}
    )
    assert bad.status_code == 422 and "email: not an e-mail address" in bad.text
    role = await owner.post(
        f"/console/a/{world.a.id}/users/invite", {"email": "x@alpha.example.com", "role": "god"}
    )
    assert role.status_code == 422 and "role: must be one of owner, developer, viewer" in role.text
    taken = await owner.post(
        f"/console/a/{world.a.id}/users/invite", {"email": world.b.viewer.email, "role": "viewer"}
    )
    assert taken.status_code == 409


async def test_only_owners_and_the_operator_invite(console: Console, world: World) -> None:
    for person in (world.a.developer, world.a.viewer):
        browser = await console.signed_in(person)
        await browser.get(f"/console/a/{world.a.id}/users")
        refused = await browser.post(
            f"/console/a/{world.a.id}/users/invite", {"email": "x@y.example.com", "role": "owner"}
        )
        assert refused.status_code == 403
        assert (await browser.get(f"/console/a/{world.a.id}/audit")).status_code == 403
    operator = await console.operator()
    await operator.get(f"/console/a/{world.a.id}/users")
    made = await operator.post(
        f"/console/a/{world.a.id}/users/invite",
        {"email": "op@alpha.example.com", "role": "owner"},
        follow=True,
    )
    assert made.status_code == 200 and LINK.search(made.text)


async def test_reset_link_replaces_the_password_and_ends_sessions(
    console: Console, world: World
) -> None:
    victim = await console.signed_in(world.a.developer)
    owner = await console.signed_in(world.a.owner)
    await owner.get(f"/console/a/{world.a.id}/users")
    made = await owner.post(
        f"/console/a/{world.a.id}/users/{world.a.developer.id}/reset", {}, follow=True
    )
    path = _link_path(made.text)
    guest = console.browser()
    await guest.get(path)
    new_password = "another long passphrase"
    done = await guest.post(path, {"password": new_password, "password_confirm": new_password})
    assert done.status_code == 303
    assert (await victim.get(f"/console/a/{world.a.id}/applications")).status_code == 303
    old = console.browser()
    await old.get("/console/sign-in")
    refused = await old.post(
        "/console/sign-in", {"email": world.a.developer.email, "password": PASSWORD}
    )
    assert refused.status_code == 401
    ok = await old.post(
        "/console/sign-in", {"email": world.a.developer.email, "password": new_password}
    )
    assert ok.status_code == 303
    # Another account's user cannot be reset from here.
    await owner.get(f"/console/a/{world.a.id}/users")
    other = await owner.post(f"/console/a/{world.a.id}/users/{world.b.owner.id}/reset", {})
    assert other.status_code == 404


async def test_roles_change_and_users_go(console: Console, world: World) -> None:
    developer = await console.signed_in(world.a.developer)
    owner = await console.signed_in(world.a.owner)
    await owner.get(f"/console/a/{world.a.id}/users")
    changed = await owner.post(
        f"/console/a/{world.a.id}/users/{world.a.developer.id}/role", {"role": "viewer"}
    )
    assert changed.status_code == 303
    # Applies at once to the running session: the former developer now only looks.
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    await developer.get(page)
    assert (await developer.post(page + "/disable", {})).status_code == 403
    # The last owner stays.
    last = await owner.post(
        f"/console/a/{world.a.id}/users/{world.a.owner.id}/role", {"role": "viewer"}
    )
    assert last.status_code == 409 and "at least one owner" in last.text
    await owner.get(f"/console/a/{world.a.id}/users")
    removed = await owner.post(f"/console/a/{world.a.id}/users/{world.a.developer.id}/remove", {})
    assert removed.status_code == 303
    assert (await developer.get(page)).status_code == 303  # signed out
    # Another account's user is not found.
    foreign = await owner.post(f"/console/a/{world.a.id}/users/{world.b.viewer.id}/remove", {})
    assert foreign.status_code == 404


async def test_sign_in_is_throttled_per_address(console: Console, world: World) -> None:
    state = console.app.state.autoport
    state.settings = state.settings.model_copy(update={"console_signin_attempts": 3})
    browser = console.browser()
    await browser.get("/console/sign-in")
    for _ in range(3):
        wrong = await browser.post(
            "/console/sign-in", {"email": world.a.owner.email, "password": "wrong password!"}
        )
        assert wrong.status_code == 401
    blocked = await browser.post(
        "/console/sign-in", {"email": world.a.owner.email, "password": PASSWORD}
    )
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) > 0
    # Another address is not blocked; the window's end lets the owner in again.
    other = console.browser()
    await other.get("/console/sign-in")
    ok = await other.post("/console/sign-in", {"email": world.b.owner.email, "password": PASSWORD})
    assert ok.status_code == 303
    console.clock.advance(state.settings.console_signin_window_seconds + 1)
    later = await browser.post(
        "/console/sign-in", {"email": world.a.owner.email, "password": PASSWORD}
    )
    assert later.status_code == 303


async def test_sign_in_is_throttled_per_client_address(console: Console, world: World) -> None:
    state = console.app.state.autoport
    state.settings = state.settings.model_copy(update={"console_signin_ip_attempts": 4})
    browser = console.browser()
    await browser.get("/console/sign-in")
    for index in range(4):
        wrong = await browser.post(
            "/console/sign-in", {"email": f"guess{index}@x.example.com", "password": "x" * 12}
        )
        assert wrong.status_code == 401
    blocked = await browser.post(
        "/console/sign-in", {"email": world.a.owner.email, "password": PASSWORD}
    )
    assert blocked.status_code == 429
    operator = await browser.post("/console/sign-in", {"admin_token": "anything"})
    assert operator.status_code == 429


async def test_the_audit_log_records_and_is_read_only(console: Console, world: World) -> None:
    owner = await console.signed_in(world.a.owner)
    await console.signed_in(world.b.owner)
    failed = console.browser()
    await failed.get("/console/sign-in")
    await failed.post("/console/sign-in", {"email": world.a.viewer.email, "password": "x" * 12})
    page = f"/console/a/{world.a.id}/applications/{world.a.app_id}"
    await owner.get(page)
    await owner.post(page + "/rotate-secret", {})
    log = await owner.get(f"/console/a/{world.a.id}/audit")
    assert log.status_code == 200
    for action in ("signin", "signin_failed", "secret_rotated"):
        assert f'data-action="{action}"' in log.text
    assert "Client secret rotated" in log.text and "Sign-in failed" in log.text  # words
    german = await owner.get(f"/console/a/{world.a.id}/audit?lang=de-DE")
    assert "Client-Secret erneuert" in german.text and "Angemeldet" in german.text
    assert "ap_cs_" not in log.text  # never a secret
    assert world.b.owner.email not in log.text  # only this account's entries
    operator = await console.operator()
    everything = await operator.get("/console/audit")
    assert world.b.owner.email in everything.text and world.a.owner.email in everything.text
    # No route changes an entry.
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        response = await owner.client.request(method, f"/sandbox/console/a/{world.a.id}/audit")
        assert response.status_code in (404, 405)
    assert (await owner.get("/console/audit")).status_code == 404


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


@pytest.fixture
def smtp_server() -> Iterator[tuple[str, _Inbox]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    inbox = _Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield f"smtp://127.0.0.1:{port}", inbox
    finally:
        controller.stop()


async def test_links_are_emailed_when_smtp_is_set(
    console: Console, world: World, smtp_server: tuple[str, _Inbox]
) -> None:
    url, inbox = smtp_server
    state = console.app.state.autoport
    state.settings = state.settings.model_copy(update={"smtp_url": url})
    owner = await console.signed_in(world.a.owner)
    await owner.get(f"/console/a/{world.a.id}/users")
    made = await owner.post(
        f"/console/a/{world.a.id}/users/invite",
        {"email": "mail@alpha.example.com", "role": "developer"},
        follow=True,
    )
    assert made.status_code == 200 and "also sent by e-mail" in made.text
    shown = LINK.search(made.text)
    assert shown
    for _ in range(50):
        if inbox.messages:
            break
        await asyncio.sleep(0.05)
    assert len(inbox.messages) == 1
    message = inbox.messages[0]
    assert message["To"] == "mail@alpha.example.com"
    assert shown.group(1) in message.get_payload(decode=True).decode()
